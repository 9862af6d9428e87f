"""API requests of one FromVolume lifecycle on a real HTTP API server (kmock, filled in).

The controller runs in-process (``app.cluster.host.Host`` over ``KubeCluster``) against kmock while
``tests.support.cluster_player`` plays kubelet, binder, Katib's suggestion client, trial
controller and garbage collector (with ``--run-trials``, ``tests.support.job_player`` plays the
Job controller and each Job's pod, admitted through our pod webhook). Only the controller's own
requests are counted: its reads
after the caches synced (goal: none, every read is served by the watch cache), its writes by
method, and the patches the server found to change nothing (goal: none).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from statistics import median
from typing import TYPE_CHECKING

from katib_resume.adapters.k8s.cluster import KubeCluster
from katib_resume.adapters.k8s.config_map import ConfigMapSource
from katib_resume.adapters.k8s.connect import to_url
from katib_resume.adapters.k8s.transport import MERGE_PATCH, Transport
from katib_resume.app.cluster.host import Host
from katib_resume.app.cluster.main import SystemClock
from tests.support.cluster_player import (
    ClusterPlayer,
    conditions,
    defaulted_example,
    put_katib_config,
)
from tests.support.kube_mock import mock_server
from tests.support.waiting import eventually

if TYPE_CHECKING:
    from tests.support.job_player import TrialsPlayer

KATIB = "kubeflow.org/v1beta1"


def lifecycle_requests() -> dict[str, object]:
    logging.getLogger("katib_resume").setLevel(logging.ERROR)  # retried conflicts are expected
    with mock_server() as server:
        setup = to_url(server.url)
        put_katib_config(setup)
        transport = to_url(server.url)
        cluster = KubeCluster(transport)
        source = ConfigMapSource(to_url(server.url), "kubeflow")
        assert cluster.start(10) and source.start(10)
        synced = Counter(transport.counts.counts)
        host = Host(cluster, source, SystemClock(), poll_seconds=0.01)
        elapsed = _played(host, setup, ClusterPlayer(server, setup))
        cluster.close()
        source.close()
        counts = Counter(transport.counts.counts) - synced
        mock = server.mock
        assert mock is not None
        methods = Counter(m for m, _ in mock.log if m != "GET")
        return {
            "initial_lists": synced["read"],
            "reads_after_sync": counts["read"],
            "writes": counts["write"],
            "noop_writes": mock.noop_writes,
            "watch_requests": synced["watch"] + counts["watch"],
            "server_writes_by_method": dict(methods),
            "seconds": round(elapsed, 2),
        }


def _played(
    host: Host,
    setup: Transport,
    player: ClusterPlayer,
    drive: Callable[[Transport, ClusterPlayer], None] | None = None,
) -> float:
    """Run ``host``'s loop in a thread while ``player`` drives the lifecycle; seconds taken."""
    stop = threading.Event()
    loop = threading.Thread(target=host.run, args=(stop,), daemon=True)
    loop.start()
    started = time.perf_counter()
    (drive or _drive)(setup, player)
    elapsed = time.perf_counter() - started
    stop.set()
    loop.join(10)
    return elapsed


def _drive(setup: Transport, player: ClusterPlayer) -> None:
    body = defaulted_example()
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    path = f"/apis/{KATIB}/namespaces/{ns}/experiments"
    setup.request("POST", path, body=body)

    def experiment() -> dict[str, object]:
        return player.objects(f"{KATIB}/experiments")[0]

    _until(player, lambda: ("Succeeded", "True") in conditions(experiment()))
    patch = {"spec": {"maxTrialCount": 20}}
    setup.request("PATCH", f"{path}/{name}", body=patch, content_type=MERGE_PATCH)
    _until(player, lambda: len(player.objects(f"{KATIB}/trials")) >= 20)
    _until(player, lambda: ("Succeeded", "True") in conditions(experiment()))
    setup.request("DELETE", f"{path}/{name}")
    _until(player, lambda: not player.objects(f"{KATIB}/suggestions"))
    _until(player, lambda: not player.objects(f"{KATIB}/trials"))  # their finalizers done


def _until(player: ClusterPlayer, check: Callable[[], bool], seconds: float = 60.0) -> None:
    what = "the lifecycle's next step"
    eventually(check, seconds=seconds, what=what, between=player.tick, pause=0.05)


def help_startup(runs: int = 7) -> dict[str, float]:
    """``katib-resume --help``: the median wall time of a fresh process, in seconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        command = [sys.executable, "-m", "katib_resume", "--help"]
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return {"help_seconds_median": round(median(times), 3), "runs": runs}


def trial_lifecycle_requests(baseline_writes: int | None = None) -> dict[str, object]:
    """The same lifecycle with the controller running the Trials (``--run-trials``): every
    Trial a Job whose pod goes through our pod webhook, its metrics reported by the injected
    collector to a katib-db-manager stand-in over gRPC and read from there. With the writes
    of the lifecycle without (``baseline_writes``), the writes the Trials themselves cost."""
    result = _trial_run(_drive)
    if baseline_writes is not None:
        extra = int(str(result["writes"])) - baseline_writes
        result["trial_writes_per_trial"] = round(extra / max(int(str(result["trials"])), 1), 2)
    return result


def trials_growth(sizes: tuple[int, ...] = (10, 100)) -> dict[str, object]:
    """Controller work per Trial as the Experiment grows: one run to ``maxTrialCount`` n, then
    deletion, per size. ``marginal_writes_per_trial`` is the slope between the smallest and the
    largest run: what one more Trial costs, the Experiment's and Suggestion's own writes aside."""
    runs = {str(n): _trial_run(partial(_drive_budget, n)) for n in sizes}
    small, large = runs[str(min(sizes))], runs[str(max(sizes))]
    slope = (int(str(large["writes"])) - int(str(small["writes"]))) / (max(sizes) - min(sizes))
    return {"runs": runs, "marginal_writes_per_trial": round(slope, 2)}


def _trial_run(drive: Callable[[Transport, ClusterPlayer], None]) -> dict[str, object]:
    """``drive`` on kmock with the controller in-process running the Trials; its own requests."""
    from katib_resume.adapters.grpc.observations import GrpcObservationLog
    from katib_resume.adapters.k8s.cluster import WATCHED
    from katib_resume.app.loop.trial_reconcile import TrialWiring
    from tests.support.db_manager import DbManagerServer
    from tests.support.job_player import TrialsPlayer

    logging.getLogger("katib_resume").setLevel(logging.ERROR)
    db = DbManagerServer()
    with mock_server() as server:
        setup = to_url(server.url)
        put_katib_config(setup)
        transport = to_url(server.url)
        cluster = KubeCluster(transport, kinds=(*WATCHED, ("batch/v1", "Job")))
        source = ConfigMapSource(to_url(server.url), "kubeflow")
        assert cluster.start(10) and source.start(10)
        synced = Counter(transport.counts.counts)
        log = GrpcObservationLog(db.address, timeout=5)
        wiring = TrialWiring(log, served=frozenset({("batch/v1", "Job")}))
        host = Host(cluster, source, SystemClock(), poll_seconds=0.01, trials=wiring)
        player = TrialsPlayer(server, setup, db)
        elapsed = _played(host, setup, player, drive)
        cluster.close()
        source.close()
        log.close()
        counts = Counter(transport.counts.counts) - synced
        mock = server.mock
        assert mock is not None
        noop_writes = mock.noop_writes
    db.stop()
    return _per_trial(counts, noop_writes, player, len(db.calls), elapsed)


def _per_trial(
    counts: Counter[str], noop_writes: int, player: TrialsPlayer, db_calls: int, elapsed: float
) -> dict[str, object]:
    """The figures of one run; katib-db-manager calls are the controller's (the played
    collectors' reports left out)."""
    trials, pods = len(player.jobs.losses), player.jobs.pods
    return {
        "trials": trials,
        "reads_after_sync": counts["read"],
        "writes": counts["write"],
        "writes_per_trial": round(counts["write"] / max(trials, 1), 2),
        "noop_writes": noop_writes,
        "db_manager_calls_per_trial": round((db_calls - pods.reports) / max(trials, 1), 2),
        "pods_admitted": len(pods.admitted),
        "seconds": round(elapsed, 2),
    }


def _drive_budget(trials: int, setup: Transport, player: ClusterPlayer) -> None:
    """One run of the example to ``maxTrialCount: trials``, then its deletion."""
    body = defaulted_example()
    body["spec"]["maxTrialCount"] = trials
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    path = f"/apis/{KATIB}/namespaces/{ns}/experiments"
    setup.request("POST", path, body=body)

    def experiment() -> dict[str, object]:
        return player.objects(f"{KATIB}/experiments")[0]

    _until(player, lambda: ("Succeeded", "True") in conditions(experiment()), 60.0 + trials)
    setup.request("DELETE", f"{path}/{name}")
    _until(player, lambda: not player.objects(f"{KATIB}/trials"), 60.0 + trials)


def main() -> None:
    """``python -m benchmarks.cluster``: the per-Trial figures as JSON."""
    print(json.dumps({"cluster_trials": trial_lifecycle_requests(), "growth": trials_growth()}))


if __name__ == "__main__":
    main()
