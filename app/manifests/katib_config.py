"""The katib-config ConfigMap, and what ``--local-volumes`` changes (issue 5).

Without ``--local-volumes`` the katib-config text is shipped exactly as given (comments and order
kept): the ConfigMap ``katib-config``, key ``katib-config.yaml``, where Katib keeps it
(docs/katib-contract.md#katib-config). With it, every suggestion entry that names no storage class
gets ``persistentVolumeClaimSpec.storageClassName: katib-suggestion``, the class for which the
controller brings its own hostPath PersistentVolume (``docs/local-volumes.md``); an entry that names
another class keeps it (a deliberate choice is not overridden). ``--local-volume-path-prefix``
writes ``localVolumePathPrefix`` into the same entries; without it the controller's default
(``/tmp/katib/suggestions``) applies. The ``katib-suggestion`` StorageClass itself provisions
nothing (``kubernetes.io/no-provisioner``) and waits for the first consumer, so a claim that somehow
is not pre-bound stays Pending instead of binding to a stranger's volume.
"""

from __future__ import annotations

import yaml

from katib_resume.app.manifests import names
from katib_resume.app.manifests.options import Options
from katib_resume.core.katib import CONFIG_KEY
from katib_resume.core.local_volumes import with_local_volumes
from katib_resume.core.manifest import Manifest
from katib_resume.core.names import CONFIG_MAP_NAME

OWN_ALGORITHMS = (
    "random",
    "grid",
    "tpe",
    "multivariate-tpe",
    "cmaes",
    "sobol",
    "bayesianoptimization",
    "hyperband",
    "pbt",
)
"""The algorithms ``katib-resume suggestion-server`` implements (docs/algorithms.md)."""


def config_map(options: Options) -> Manifest:
    text = options.katib_config
    if options.local_volumes or options.own_suggestions:
        data = yaml.safe_load(text)
        if options.own_suggestions:
            data = with_own_suggestions(data, options.image)
        if options.local_volumes:
            data = with_local_volumes(data, options.local_volume_path_prefix)
        text = yaml.safe_dump(data, sort_keys=False)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": names.metadata(CONFIG_MAP_NAME, options.namespace),
        "data": {CONFIG_KEY: text},
    }


def storage_class() -> Manifest:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": names.metadata(names.STORAGE_CLASS),
        "provisioner": "kubernetes.io/no-provisioner",
        "volumeBindingMode": "WaitForFirstConsumer",
    }


def with_own_suggestions(data: Manifest, image: str) -> Manifest:
    """katib-config whose entries for our algorithms run ``image``'s ``suggestion-server``.

    The other entries keep Katib's images, and so does ``medianstop``: Katib runs an
    early-stopping image with its default command (it reads no ``args`` there), and Katib's
    medianstop reads the observation logs from its DB manager. The suggestion container serves
    the Suggestion API alone (``--early-stopping-port 0``): the early-stopping container in the
    same pod binds 6788. An entry's other fields (volumes, resources) are kept.
    """
    runtime = dict(data.get("runtime") or {})
    args = ["suggestion-server", "--early-stopping-port", "0"]
    entries = runtime.get("suggestions")
    kept = [dict(e) for e in entries] if isinstance(entries, list) else []
    named = {e.get("algorithmName") for e in kept}
    for entry in kept:
        if entry.get("algorithmName") in OWN_ALGORITHMS:
            entry.update(image=image, args=list(args))
    missing = [n for n in OWN_ALGORITHMS if n not in named]
    kept += [{"algorithmName": n, "image": image, "args": list(args)} for n in missing]
    return {**data, "runtime": {**runtime, "suggestions": kept}}
