"""The kubelet for pods, simulated: it runs a pod's containers and writes the pod's status.

The containers run on a ``ContainerRuntime``: real local processes (``processes.py``) or
``SimulatedRuntime``, whose containers print what a callable says and exit at once (for images
that cannot run here). Once per tick, for every pod that has not finished:

- a new pod's containers are started (``command`` then ``args``, literal ``env``, in the working
  directory ``<root>/<namespace>/<job name or pod name>``, shared by the attempts of one Job);
  the pod is ``Running``, or ``Failed`` when a container cannot start (reason ``StartError``,
  exit code 128, and a Warning Event saying why, as a kubelet's);
- a running pod whose containers have all exited gets its final phase: ``Succeeded`` when every
  exit code is 0, else ``Failed`` (reason ``Error``); just before, ``on_success`` is told about
  a pod that succeeded, with its containers' logs (what Katib's metrics collector sidecar
  reads); if that fails (a ``ClusterError``), the pod stays Running and ends on a later tick;
- a pod marked Running that this kubelet did not start was left by a command that died: its
  container groups are stopped (``ContainerRuntime.recover``) and the pod fails as Kubernetes
  reports a container that was lost (``ContainerStatusUnknown``, exit code 137), so its Job
  makes a new pod (within ``backoffLimit``), and no Trial is ever run twice at once.

A pod that is deleted has its containers stopped (SIGTERM, then SIGKILL after the pod's
``terminationGracePeriodSeconds``, at most ``MAX_GRACE``), while the loop goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from katib_resume.adapters.fake.api import ApiServer
from katib_resume.adapters.fake.groups import reap
from katib_resume.adapters.fake.jobs import LABEL_JOB_NAME, POD, phase
from katib_resume.adapters.fake.processes import Container, StartError
from katib_resume.core.actions import ObjectRef
from katib_resume.core.manifest import Manifest, format_time
from katib_resume.core.ports import ClusterError

MAX_GRACE = 30.0
LOST = "The container could not be located when the pod was terminated"
Logs = Mapping[str, str]
"""Container name -> its log."""
OnSuccess = Callable[[Manifest, Logs, Path], None]
"""(pod, its containers' logs, its working directory)."""
EventSink = Callable[[ObjectRef, str, str], None]
"""(pod, reason, message): a Warning Event."""


class ContainerRuntime(Protocol):
    def start(self, container: Container) -> None: ...
    def poll(self, name: str) -> int | None: ...
    def log(self, container: Container) -> str: ...
    def recover(self, container: Container) -> None: ...
    def stop(self, name: str, grace: float) -> None: ...
    def forget(self, name: str) -> None: ...
    def finish_stopping(self) -> None: ...
    def stop_all(self) -> None: ...
    def wait(self, timeout: float) -> None: ...
    @property
    def busy(self) -> int: ...


@dataclass
class SimulatedRuntime:
    """Containers that print ``script(pod)`` and exit 0 as soon as they start."""

    script: Callable[[Manifest], str]
    logs: dict[str, str] = field(default_factory=dict)

    def start(self, container: Container) -> None:
        self.logs[container.name] = self.script(container.pod)

    def poll(self, name: str) -> int | None:
        return 0 if name in self.logs else None

    def log(self, container: Container) -> str:
        return self.logs.get(container.name, "")

    def recover(self, container: Container) -> None:
        """A process a killed command started (with ``--trial-command``) is stopped all the
        same: a command given no such flag must not leave one running."""
        reap(container.record, container.name)

    def stop(self, name: str, grace: float) -> None:
        self.logs.pop(name, None)

    def forget(self, name: str) -> None:
        self.logs.pop(name, None)

    def finish_stopping(self) -> None:
        return None

    def stop_all(self) -> None:
        self.logs.clear()

    def wait(self, timeout: float) -> None:
        return None

    @property
    def busy(self) -> int:
        return 0


class PodKubelet:
    def __init__(self, api: ApiServer, root: Path) -> None:
        self.api, self.root = api, root
        self.runtime: ContainerRuntime | None = None
        """None: pods are not run (a world nobody gave a container runtime)."""
        self.on_success: OnSuccess = lambda pod, logs, workdir: None
        self.warn: EventSink = lambda ref, reason, message: None
        self.started: dict[str, tuple[Container, ...]] = {}
        """Pod UID -> the containers this kubelet started for it."""

    def run(self, runtime: ContainerRuntime | None = None) -> None:
        runtime = runtime or self.runtime
        if runtime is None:
            return
        live: set[str] = set()
        for pod in self.api.observe(*POD, None):
            uid = pod["metadata"]["uid"]
            live.add(uid)
            if _active(pod):
                self._advance(runtime, pod)
        for uid in [uid for uid in self.started if uid not in live]:
            for container in self.started.pop(uid):
                runtime.stop(container.name, MAX_GRACE)
        runtime.finish_stopping()

    def _advance(self, runtime: ContainerRuntime, pod: Manifest) -> None:
        uid = pod["metadata"]["uid"]
        containers = self.started.get(uid)
        if containers is None:
            if phase(pod) == "Running":  # marked by a kubelet that died with its command
                self._lost(runtime, pod)
                return
            containers = self._start(runtime, pod)
            if containers is None:
                return
        codes = [runtime.poll(c.name) for c in containers]
        if any(code is None for code in codes):
            if phase(pod) != "Running":
                self._write(pod, "Running", self._running(pod, containers))
            return
        if all(code == 0 for code in codes):
            logs = {c.spec_name: runtime.log(c) for c in containers}
            try:
                self.on_success(pod, logs, containers[0].workdir if containers else self.root)
            except ClusterError:  # the report did not get through: the pod ends next tick
                return
        self._end(pod, containers, [code or 0 for code in codes])
        for container in self.started.pop(uid):
            runtime.forget(container.name)

    def _start(self, runtime: ContainerRuntime, pod: Manifest) -> tuple[Container, ...] | None:
        containers = tuple(self._container(pod, spec) for spec in _specs(pod))
        try:
            for container in containers:
                if not container.argv:
                    name = container.spec_name
                    raise StartError(
                        f"container {name!r} has no command: its image is not run here"
                    )
                runtime.start(container)
        except StartError as error:
            for container in containers:
                runtime.stop(container.name, 0.0)
            self.warn(ObjectRef.of(pod), "Failed", f"Error: {error}")
            self._end(pod, containers, [128] * len(containers), "StartError", str(error))
            return None
        self.started[pod["metadata"]["uid"]] = containers
        return containers

    def _lost(self, runtime: ContainerRuntime, pod: Manifest) -> None:
        containers = tuple(self._container(pod, spec) for spec in _specs(pod))
        for container in containers:
            runtime.recover(container)
        self._end(pod, containers, [137] * len(containers), "ContainerStatusUnknown", LOST)

    def _container(self, pod: Manifest, spec: Manifest) -> Container:
        meta = pod["metadata"]
        owner = (meta.get("labels") or {}).get(LABEL_JOB_NAME) or meta["name"]
        argv = tuple(str(a) for a in [*(spec.get("command") or ()), *(spec.get("args") or ())])
        env = {
            str(e["name"]): str(e["value"])
            for e in spec.get("env") or ()
            if isinstance(e, dict) and "name" in e and "value" in e
        }
        workdir = self.root / _safe(meta.get("namespace") or "default") / _safe(owner)
        name = f"{_safe(meta['name'])}.{_safe(str(spec.get('name') or 'main'))}"
        return Container(argv, env, workdir, name, str(spec.get("name") or ""), pod)

    def _running(self, pod: Manifest, containers: tuple[Container, ...]) -> list[Manifest]:
        now = self._now()
        return [
            {
                "name": c.spec_name,
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
            for c in containers
        ]

    def _end(
        self,
        pod: Manifest,
        containers: tuple[Container, ...],
        codes: list[int],
        reason: str = "",
        message: str = "",
    ) -> None:
        """The pod's final status: Succeeded when every container exited 0, else Failed."""
        started = (pod.get("status") or {}).get("startTime") or self._now()
        ended = [
            _terminated(c.spec_name, code, (started, self._now()), reason, message)
            for c, code in zip(containers, codes, strict=True)
        ]
        self._write(pod, "Succeeded" if not any(codes) else "Failed", ended)

    def _write(self, pod: Manifest, new_phase: str, statuses: list[Manifest]) -> None:
        old = pod.get("status") or {}
        status = {
            "phase": new_phase,
            "startTime": old.get("startTime") or self._now(),
            "containerStatuses": statuses,
        }
        self.api.update_status(ObjectRef.of(pod), status, None, copy=False)  # answer unread

    def _now(self) -> str:
        return format_time(self.api.clock.now())


def _specs(pod: Manifest) -> list[Manifest]:
    return [c for c in (pod.get("spec") or {}).get("containers") or () if isinstance(c, dict)]


def _active(pod: Manifest) -> bool:
    return phase(pod) not in ("Succeeded", "Failed") and not pod["metadata"].get(
        "deletionTimestamp"
    )


def _terminated(
    name: str, code: int, times: tuple[str, str], reason: str, message: str
) -> Manifest:
    state: Manifest = {
        "exitCode": code,
        "reason": reason or ("Completed" if code == 0 else "Error"),
        "startedAt": times[0],
        "finishedAt": times[1],
    }
    if message:
        state["message"] = message
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}}


def _safe(part: str) -> str:
    """A path component that stays inside the root, whatever the name."""
    cleaned = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in part)
    return "_" if cleaned in ("", ".", "..") else cleaned
