"""``python -m katib_resume``: the ``katib-resume`` command, for where its script is not on PATH."""

from katib_resume.app.cli.main import main

raise SystemExit(main())
