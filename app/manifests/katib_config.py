"""The katib-config ConfigMap, and what ``--local-volumes`` changes (issue 5).

Without ``--local-volumes`` the katib-config text is shipped exactly as given (comments and order
kept): the ConfigMap ``katib-config``, key ``katib-config.yaml``, where Katib keeps it (BEHAVIOR.md
§5). With it, every suggestion entry that names no storage class gets
``persistentVolumeClaimSpec.storageClassName: katib-suggestion``, the class for which the controller
brings its own hostPath PersistentVolume (``docs/local-volumes.md``); an entry that names another
class keeps it (a deliberate choice is not overridden). ``--local-volume-path-prefix`` writes
``localVolumePathPrefix`` into the same entries; without it the controller's default
(``/tmp/katib/suggestions``) applies. The ``katib-suggestion`` StorageClass itself provisions
nothing (``kubernetes.io/no-provisioner``) and waits for the first consumer, so a claim that
somehow is not pre-bound stays Pending instead of binding to a stranger's volume.
"""

from __future__ import annotations

import yaml

from katib_resume.app.manifests import names
from katib_resume.app.manifests.options import Options
from katib_resume.core.katib import CONFIG_KEY
from katib_resume.core.kube import Manifest
from katib_resume.core.local_volumes import with_local_volumes
from katib_resume.core.names import CONFIG_MAP_NAME


def config_map(options: Options) -> Manifest:
    text = options.katib_config
    if options.local_volumes:
        data = with_local_volumes(yaml.safe_load(text), options.local_volume_path_prefix)
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
