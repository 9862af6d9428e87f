"""Kubernetes' PV controller, simulated: binding claims to volumes and provisioning new ones.

Per unbound, live PVC, on each tick, in the order Kubernetes tries (``pkg/controller/volume/
persistentvolume``):

1. ``spec.volumeName`` names a PV: bind to it if it exists and is not claimed by another claim
   (its ``claimRef``, if any, names this PVC and, once bound, this PVC's UID). Otherwise the PVC
   stays ``Pending``: Kubernetes never falls back to another volume.
2. A PV whose ``claimRef`` names this PVC (pre-bound from the volume's side) is taken.
3. An ``Available`` PV without ``claimRef`` of the same storage class, with the access modes
   asked for and enough capacity is taken (the smallest such). A PVC without a storage class
   counts as the default class here (Kubernetes' admission writes it into the PVC; the fake
   leaves the PVC's spec as written). This is how a claim "steals" an unclaimed volume.
4. A PVC of the default class gets a new PV from the default dynamic provisioner:
   ``pvc-<claim uid>``, a ``hostPath`` volume, the claim's capacity and access modes, reclaim
   ``Delete``, pre-bound to the claim. Other classes have no provisioner: ``Pending``.

Binding writes what Kubernetes writes, in its order: the PV's ``claimRef`` (with the claim's
UID), the PV's phase ``Bound``, the PVC's ``volumeName`` and bind annotations, then the PVC's
phase, capacity and access modes. A new PV turns ``Available`` first (so a claim can take it on
the same tick); a bound claim whose volume is gone becomes ``Lost``.
"""

from __future__ import annotations

from katib_resume.adapters.fake.api import ApiServer
from katib_resume.adapters.fake.clone import clone
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest
from katib_resume.core.quantity import QuantityError, parse_quantity

PROVISIONER = "fake.katib-resume.kubeflow.org/hostpath"
PROVISIONED_PATH = "/var/lib/fake-provisioner"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def pv_ref(name: str) -> ObjectRef:
    return ObjectRef("v1", "PersistentVolume", None, name)


def deleting(obj: Manifest) -> bool:
    return "deletionTimestamp" in obj["metadata"]


def phase(obj: Manifest) -> str | None:
    value = (obj.get("status") or {}).get("phase")
    return str(value) if value is not None else None


def claim_ref(pv: Manifest) -> Manifest:
    return dict((pv.get("spec") or {}).get("claimRef") or {})


def names_claim(pv: Manifest, pvc: Manifest) -> bool:
    """``pv``'s ``claimRef`` names ``pvc`` (and, if it records a UID, this very PVC)."""
    ref, meta = claim_ref(pv), pvc["metadata"]
    same = (ref.get("namespace"), ref.get("name")) == (meta["namespace"], meta["name"])
    return same and ref.get("uid") in (None, "", meta["uid"])


class Binder:
    def __init__(self, api: ApiServer, default_class: str) -> None:
        self.api = api
        self.default_class = default_class

    def run(self) -> None:
        for new in self.api.observe("v1", "PersistentVolume", None):
            if phase(new) == "Pending" and not claim_ref(new).get("uid"):
                self.api.update_status(ObjectRef.of(new), {"phase": "Available"}, None)
        for pvc in self.api.observe("v1", "PersistentVolumeClaim", None):
            if deleting(pvc):
                continue
            if phase(pvc) == "Bound":
                self._check_lost(pvc)
                continue
            pv = self._volume_for(pvc)
            if pv is not None:
                self._bind(pvc, pv)

    def _volume_for(self, pvc: Manifest) -> Manifest | None:
        name = pvc["spec"].get("volumeName")
        if name:
            pv = self.api.store.find(pv_ref(name))
            if pv is None or deleting(pv) or (claim_ref(pv) and not names_claim(pv, pvc)):
                return None
            return pv
        volumes = [v for v in self.api.observe("v1", "PersistentVolume", None) if not deleting(v)]
        prebound = [v for v in volumes if claim_ref(v) and names_claim(v, pvc)]
        if prebound:
            return prebound[0]
        fitting = [v for v in volumes if self._fits(v, pvc)]
        if fitting:
            return min(fitting, key=lambda v: (_capacity(v), v["metadata"]["name"]))
        return self._provision(pvc) if self._class(pvc) == self.default_class else None

    def _fits(self, pv: Manifest, pvc: Manifest) -> bool:
        spec = pv.get("spec") or {}
        if claim_ref(pv) or phase(pv) != "Available":
            return False
        if spec.get("storageClassName", "") != self._class(pvc):
            return False
        wanted = set(pvc["spec"].get("accessModes") or [])
        return wanted <= set(spec.get("accessModes") or []) and _capacity(pv) >= _request(pvc)

    def _class(self, pvc: Manifest) -> str:
        return str(pvc["spec"].get("storageClassName", self.default_class))

    def _provision(self, pvc: Manifest) -> Manifest:
        meta = pvc["metadata"]
        name = f"pvc-{meta['uid']}"
        existing = self.api.store.find(pv_ref(name))
        if existing is not None:
            return existing
        spec = {
            "capacity": {"storage": pvc["spec"]["resources"]["requests"]["storage"]},
            "accessModes": list(pvc["spec"].get("accessModes") or ["ReadWriteOnce"]),
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": self._class(pvc),
            "hostPath": {"path": f"{PROVISIONED_PATH}/{name}", "type": "DirectoryOrCreate"},
            "claimRef": _ref_to(pvc),
        }
        metadata = {"name": name, "annotations": {PROVISIONED_BY: PROVISIONER}}
        return self.api.create(
            {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": metadata, "spec": spec}
        )

    def _bind(self, pvc: Manifest, pv: Manifest) -> None:
        """Bind the two; they may be stored objects (read without copies), so it edits copies."""
        pvc, pv = clone(pvc), clone(pv)
        ref = pv_ref(pv["metadata"]["name"])
        if claim_ref(pv).get("uid") != pvc["metadata"]["uid"]:
            if not claim_ref(pv):
                pv["metadata"].setdefault("annotations", {})[BOUND_BY_CONTROLLER] = "yes"
            pv["spec"]["claimRef"] = _ref_to(pvc)
            pv = self.api.update(pv)
        self.api.update_status(ref, {"phase": "Bound"}, None)
        annotations = pvc["metadata"].setdefault("annotations", {})
        if not pvc["spec"].get("volumeName"):
            pvc["spec"]["volumeName"] = ref.name
            annotations[BOUND_BY_CONTROLLER] = "yes"
        annotations[BIND_COMPLETED] = "yes"
        claim = self.api.update(pvc)
        status = {"phase": "Bound", "accessModes": pv["spec"].get("accessModes", [])}
        status["capacity"] = clone(pv["spec"].get("capacity", {}))
        self.api.update_status(ObjectRef.of(claim), status, None)

    def _check_lost(self, pvc: Manifest) -> None:
        name = pvc["spec"].get("volumeName")
        if name and self.api.store.find(pv_ref(name)) is None:
            self.api.update_status(ObjectRef.of(pvc), {"phase": "Lost"}, None)


def _ref_to(pvc: Manifest) -> Manifest:
    meta = pvc["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
    }


def _storage(value: object) -> float:
    try:
        return float(parse_quantity(value).value)
    except QuantityError:
        return 0.0


def _capacity(pv: Manifest) -> float:
    return _storage(((pv.get("spec") or {}).get("capacity") or {}).get("storage", 0))


def _request(pvc: Manifest) -> float:
    return _storage(((pvc["spec"].get("resources") or {}).get("requests") or {}).get("storage", 0))
