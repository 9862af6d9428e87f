"""Storage protection and reclaim, simulated: what keeps a volume alive and what ends it.

*Protection* (admission plugin ``StorageObjectInUseProtection`` and the pvc- and pv-protection
controllers). Every PVC is created with the ``kubernetes.io/pvc-protection`` finalizer and every
PV with ``kubernetes.io/pv-protection``. A deleted PVC therefore stays ``Terminating`` while a
pod uses it, here: while any Deployment of its namespace that still exists mounts it in its pod
template; a deleted PV stays while it is ``Bound``, that is until its claim is gone and the
reclaimer below has moved it on (``Released``, ``Failed`` or its volume deleted), so that the
reclaim policy always runs before the PV object can go.

*Reclaim* (the PV controller). When the claim a PV was bound to is gone, its reclaim policy
decides: ``Retain`` (and the deprecated ``Recycle``) leaves the PV ``Released`` with its data;
``Delete`` removes the volume, then the PV. Only a plugin that can delete may do so, as in
Kubernetes: our dynamic provisioner deletes what it provisioned; the in-tree ``hostPath``
deleter only accepts paths under ``/tmp/`` (a static hostPath PV elsewhere ends ``Failed``, see
docs/katib-contract.md#garbage-collection) unless the world is told ``delete_any_hostpath``; other
sources cannot be deleted (``Failed``). A directory is only ever removed inside the volume root
(``node.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

from katib_resume.adapters.fake.api import ApiServer
from katib_resume.adapters.fake.node import OutsideVolumeRoot, host_path, remove_dir
from katib_resume.adapters.fake.volumes import (
    PROVISIONED_BY,
    PROVISIONER,
    claim_ref,
    deleting,
    phase,
    pv_ref,
)
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest

PVC_PROTECTION = "kubernetes.io/pvc-protection"
PV_PROTECTION = "kubernetes.io/pv-protection"
_PROTECTION = {"PersistentVolumeClaim": PVC_PROTECTION, "PersistentVolume": PV_PROTECTION}
_TMP = re.compile(r"^/tmp/.+")


def protect(obj: Manifest) -> None:
    """Admission: add the protection finalizer to a new PVC or PV."""
    finalizer = _PROTECTION.get(obj["kind"])
    if finalizer is None or obj["apiVersion"] != "v1":
        return
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if finalizer not in finalizers:
        finalizers.append(finalizer)


def mounted_claims(deployment: Manifest) -> list[str]:
    """The PVC names a Deployment's pod template mounts, in order."""
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    claims = []
    for volume in pod.get("volumes") or []:
        name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        if name:
            claims.append(str(name))
    return claims


class Protection:
    def __init__(self, api: ApiServer) -> None:
        self.api = api

    def run(self) -> None:
        for pvc in self.api.observe("v1", "PersistentVolumeClaim", None):
            if deleting(pvc) and not self._in_use(pvc):
                self._release(pvc, PVC_PROTECTION)
        for pv in self.api.observe("v1", "PersistentVolume", None):
            if deleting(pv) and not self._bound(pv):
                self._release(pv, PV_PROTECTION)

    def _in_use(self, pvc: Manifest) -> bool:
        namespace, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]
        deployments = self.api.observe("apps/v1", "Deployment", namespace)
        return any(name in mounted_claims(d) for d in deployments)

    def _bound(self, pv: Manifest) -> bool:
        """Kubernetes' test: the PV's phase; only the reclaimer moves it on from ``Bound``."""
        return phase(pv) == "Bound"

    def _release(self, obj: Manifest, finalizer: str) -> None:
        finalizers = obj["metadata"].get("finalizers", [])
        if finalizer in finalizers:
            rest = [f for f in finalizers if f != finalizer]
            self.api.set_finalizers(ObjectRef.of(obj), rest, obj["metadata"]["resourceVersion"])


class Reclaimer:
    def __init__(self, api: ApiServer, volume_root: Path, delete_any_hostpath: bool) -> None:
        self.api = api
        self.volume_root = volume_root
        self.delete_any_hostpath = delete_any_hostpath

    def run(self) -> None:
        pvcs = self.api.observe("v1", "PersistentVolumeClaim", None)
        claims = {c["metadata"]["uid"] for c in pvcs}
        for pv in self.api.observe("v1", "PersistentVolume", None):
            uid = claim_ref(pv).get("uid")
            if not uid or uid in claims or phase(pv) == "Failed":
                continue
            if pv["spec"].get("persistentVolumeReclaimPolicy") == "Delete":
                self._delete(pv)
            elif phase(pv) != "Released":
                self._status(pv, "Released", "")

    def _delete(self, pv: Manifest) -> None:
        refusal = self._refusal(pv)
        if refusal is None:
            try:
                remove_dir(self.volume_root, pv)
            except OutsideVolumeRoot as error:
                refusal = str(error)
        if refusal is not None:
            self._status(pv, "Failed", refusal)
            return
        self._status(pv, "Released", "")
        if not deleting(pv):
            self.api.delete(pv_ref(pv["metadata"]["name"]), pv["metadata"]["uid"])

    def _refusal(self, pv: Manifest) -> str | None:
        """Why no plugin can delete ``pv``'s volume, or ``None`` if one can."""
        if pv["metadata"].get("annotations", {}).get(PROVISIONED_BY) == PROVISIONER:
            return None
        path = host_path(pv)
        if path is None or "hostPath" not in pv["spec"]:
            return "error getting deleter volume plugin: no deletable volume plugin matched"
        if self.delete_any_hostpath or _TMP.match(path):
            return None
        return f"host_path deleter only supports /tmp/.+ but received provided {path}"

    def _status(self, pv: Manifest, new_phase: str, message: str) -> None:
        status = {"phase": new_phase, **({"message": message} if message else {})}
        self.api.update_status(pv_ref(pv["metadata"]["name"]), status, None)
