"""katib-resume: Kubeflow Katib's resume-Experiment lifecycle as a pure, typed state machine.

The one import name of the distribution. ``katib_resume.core`` is the pure domain (no I/O),
``katib_resume.adapters`` the ports' implementations (``fake``, ``k8s``, ``local``, ``grpc``) and
``katib_resume.app`` the binaries around them. The three folders live at the top of the
repository, as the design card places them; this package maps them under one name (symbolic
links in the source tree, real directories in the wheel).
"""
