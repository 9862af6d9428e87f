"""An in-memory Kubernetes and clock implementing the core's ports (public: embedders' tests).

``FakeCluster`` is the ``Cluster`` port with Kubernetes' API rules and injectable faults;
``FakeWorld`` runs Kubernetes' own controllers around it (volume binding and provisioning,
protection, reclaim, the kubelet, background garbage collection) one ``tick`` at a time;
``save`` and ``load`` keep both on disk between processes.
"""

from adapters.fake.clock import FakeClock
from adapters.fake.cluster import Event, FakeCluster
from adapters.fake.faults import ControllerCrash, Faults
from adapters.fake.node import OutsideVolumeRoot
from adapters.fake.persistence import StateFileError, load, save
from adapters.fake.watch import WatchEvent
from adapters.fake.world import FakeWorld
from core.ports import Invalid

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
    "load",
    "save",
]
