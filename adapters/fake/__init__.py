"""An in-memory Kubernetes and clock implementing the core's ports (public: embedders' tests).

``FakeCluster`` is the ``Cluster`` port with Kubernetes' API rules and injectable faults;
``FakeWorld`` runs Kubernetes' own controllers around it (volume binding and provisioning,
protection, reclaim, the kubelet, background garbage collection) one ``tick`` at a time, with
faults of their own (``WorldFaults``; the watch's are ``WatchFaults``);
``save`` and ``load`` keep both on disk between processes.
"""

from katib_resume.adapters.fake.clock import FakeClock
from katib_resume.adapters.fake.cluster import Event, FakeCluster
from katib_resume.adapters.fake.faults import ControllerCrash, Faults
from katib_resume.adapters.fake.node import OutsideVolumeRoot
from katib_resume.adapters.fake.persistence import StateFileError, load, save
from katib_resume.adapters.fake.watch import WatchEvent
from katib_resume.adapters.fake.watch_faults import WatchFaults
from katib_resume.adapters.fake.world import FakeWorld
from katib_resume.adapters.fake.world_faults import WorldFaults
from katib_resume.core.ports import Invalid

__all__ = [
    "ControllerCrash",
    "Event",
    "FakeClock",
    "FakeCluster",
    "FakeWorld",
    "Faults",
    "Invalid",
    "OutsideVolumeRoot",
    "StateFileError",
    "WatchEvent",
    "WatchFaults",
    "WorldFaults",
    "load",
    "save",
]
