"""The ``suggestion-server``'s cost per call and per restart over gRPC as the history grows.

Katib's controller sends every Trial of the Experiment in every ``GetSuggestions`` call, so
the figure that matters on a cluster is one call's cost at ``n`` Trials, and the restart's:
a new server (a pod recreated on its volume, ``resumePolicy: FromVolume``) answering its
first call. The server runs in this process behind a real gRPC port; requests are built once
as bytes (each Trial's message encoded once and concatenated, as protobuf allows), so what is
timed is the server's side: the transport, the decode, the service. A pod recreated is a new
process, whose first call also pays for memory it has never touched, so the restart is timed
there too (``restart_new_process``: a child process starts the server, then is timed from its
first call to the answer: the service reads nothing before a call), and so, with the trial
memo's file removed first, is what the file saves (``restart_new_process_without_memo``: every
Trial decoded). ``random`` search, two parameters, every Trial Succeeded with a value. Beside
it, in the same run: Optuna's ``RandomSampler`` on SQLite, ``ask`` + ``tell`` per call and
``load_study`` + ``ask`` per restart (``benchmarks.embedded.optuna_restart``). Seconds of the
clock and of the process's CPU (the server's threads included), medians, and each figure's
growth over the smallest size; and the Python function calls of a restart's first call and of
a running service's call (``restart_python_calls``, ``call_python_calls``: counted, not timed,
so the machine does not move them).

Run: ``python -m benchmarks.grpc_service [--sizes 100 1000 5000] [--repeat 5]``; prints JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import grpc

from benchmarks import isolated
from benchmarks.python_calls import counted
from katib_resume.adapters.grpc.api import GET_SUGGESTIONS, Wire, decode, encode
from katib_resume.adapters.grpc.codec import experiment_wire, trial_wire
from katib_resume.adapters.grpc.server import ApiServer
from katib_resume.adapters.grpc.trial_bytes import decode_keeping_trials
from katib_resume.app.suggestion.memo_file import FILE_NAME
from katib_resume.app.suggestion.service import SuggestionApi
from katib_resume.core.manifest import Manifest
from katib_resume.core.trial_phases import TrialPhase

NAME = "served"
EXPERIMENT: Manifest = {
    "metadata": {"name": NAME, "namespace": "bench"},
    "spec": {
        "objective": {"type": "minimize", "objectiveMetricName": "loss"},
        "algorithm": {"algorithmName": "random"},
        "parallelTrialCount": 1,
        "maxTrialCount": 100_000,
        "parameters": [
            {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "-5", "max": "10"}},
            {"name": "y", "parameterType": "int", "feasibleSpace": {"min": "0", "max": "15"}},
        ],
    },
}


class Client:
    """The controller's side: the Trials' bytes kept, a request made by concatenation."""

    def __init__(self) -> None:
        self.trials: list[bytes] = []
        self.draw = random.Random(1)

    def request(self, count: int) -> bytes:
        head = {
            "experiment": experiment_wire(EXPERIMENT),
            "total_request_number": len(self.trials) + count,
            "current_request_number": count,
        }
        order = self.draw.sample(self.trials, len(self.trials))  # Katib's list: no order
        return encode(GET_SUGGESTIONS.request, head) + b"".join(order)

    def took(self, reply: bytes) -> None:
        """Each assignment of the reply becomes a Trial that succeeds with a value."""
        for item in decode(GET_SUGGESTIONS.reply, reply).get("parameter_assignments", []):
            trial = {
                "metadata": {"name": item["trial_name"]},
                "spec": {"parameterAssignments": item["assignments"]},
                "status": {
                    "startTime": "2026-01-01T00:00:00Z",
                    "observation": {"metrics": [{"name": "loss", "latest": "0.5"}]},
                },
            }
            wire = trial_wire(trial, TrialPhase.SUCCEEDED)
            self.trials.append(encode(GET_SUGGESTIONS.request, {"trials": [wire]}))


class Pod:
    """A ``suggestion-server`` on ``volume`` and a raw channel to it."""

    def __init__(self, volume: Path) -> None:
        self.server = ApiServer(SuggestionApi(volume, 0).handlers(), ["127.0.0.1:0"])
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.server.ports[0]}")
        raw: Any = self.channel.unary_unary(GET_SUGGESTIONS.path)  # bytes in, bytes out
        self.call = cast(Callable[[bytes], bytes], raw)

    def stop(self) -> None:
        self.channel.close()
        self.server.stop()


def _timed(work: Callable[[], Any]) -> tuple[Any, float, float]:
    clock, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - clock, time.process_time() - cpu


def ours(n: int, repeats: int, root: Path) -> dict[str, float]:
    volume, client = root / f"volume-{n}", Client()
    pod = Pod(volume)
    while len(client.trials) < n:
        client.took(pod.call(client.request(min(100, n - len(client.trials)))))
    calls, restarts = [], []
    for _ in range(repeats):
        request = client.request(1)
        reply, clock, cpu = _timed(partial(pod.call, request))
        client.took(reply)
        calls.append((clock, cpu))
    pod.stop()
    for _ in range(repeats):
        (pod, reply), clock, cpu = _timed(partial(_restarted, volume, client.request(1)))
        client.took(reply)
        restarts.append((clock, cpu))
        pod.stop()
    processes: dict[str, list[tuple[float, float]]] = {"": [], "_without_memo": []}
    for _ in range(repeats):
        for kind, times in processes.items():
            if kind:
                (volume / NAME / FILE_NAME).unlink()
            reply, clock, cpu = _in_new_process(volume, client.request(1), root)
            client.took(reply)
            times.append((clock, cpu))
    runs = {"call": calls, "restart": restarts}
    runs |= {f"restart_new_process{kind}": times for kind, times in processes.items()}
    return {**_medians(runs), **_python_calls(volume, client)}


def _python_calls(volume: Path, client: Client) -> dict[str, float]:
    """The Python function calls (``python_calls``: counted, not timed) of a service
    restarted on ``volume`` answering its first call, then its second (a running service's
    call), each with one new Trial. Counted on the service itself, the request decoded as the
    server decodes it: a server answers on a thread of its own, which no profile sees."""
    api, counts = SuggestionApi(volume, 0), dict[str, float]()
    for part in ("restart", "call"):
        request = decode_keeping_trials(GET_SUGGESTIONS.request, client.request(1))
        counts[f"{part}_python_calls"], reply = _counted_answer(api, request)
        client.took(encode(GET_SUGGESTIONS.reply, reply))
    return counts


def _counted_answer(api: SuggestionApi, request: Wire) -> tuple[int, Wire]:
    """The Python calls of ``api`` answering ``request``, and its answer."""
    replies: list[Wire] = []
    calls, _ = counted(lambda: replies.append(api.get_suggestions(request)))
    return calls, replies[0]


def _restarted(volume: Path, request: bytes) -> tuple[Pod, bytes]:
    """A new pod on the volume, and its answer to the first call."""
    pod = Pod(volume)
    return pod, pod.call(request)


def _in_new_process(volume: Path, request: bytes, root: Path) -> tuple[bytes, float, float]:
    """``_restarted`` in a child process (``--restart``): its answer, clock and CPU."""
    asked, answered = root / "request.bin", root / "reply.bin"
    asked.write_bytes(request)
    clock, cpu = isolated.child(
        "benchmarks.grpc_service", "--restart", str(volume), str(asked), str(answered)
    )
    return answered.read_bytes(), clock, cpu


def _restart_here(volume: Path, asked: Path, answered: Path) -> None:
    """The child of ``_in_new_process``: the restart timed, its answer written, the times
    printed (JSON)."""
    pod = Pod(volume)  # (its server's threads and port: no work of the service's)
    reply, clock, cpu = _timed(partial(pod.call, asked.read_bytes()))
    pod.stop()
    answered.write_bytes(reply)
    print(json.dumps([clock, cpu]))


def _medians(runs: dict[str, list[tuple[float, float]]]) -> dict[str, float]:
    figures = {}
    for part, times in runs.items():
        figures[f"{part}_s"] = round(statistics.median(t[0] for t in times), 5)
        figures[f"{part}_cpu_s"] = round(statistics.median(t[1] for t in times), 5)
    return figures


def optunas(n: int, repeats: int, root: Path) -> dict[str, float]:
    """Optuna's ``RandomSampler`` on SQLite holding ``n`` completed trials: ``load_study`` +
    ``ask`` (the restart) and ``tell`` + ``ask`` (a call), clock and CPU."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    space: dict[str, optuna.distributions.BaseDistribution] = {
        "x": optuna.distributions.FloatDistribution(-5, 10),
        "y": optuna.distributions.IntDistribution(0, 15),
    }
    draw, url = random.Random(1), f"sqlite:///{root / 'optuna.db'}"
    optuna.create_study(storage=url, study_name="s").add_trials(
        optuna.trial.create_trial(
            params={"x": -5 + 15 * draw.random(), "y": draw.randrange(16)},
            distributions=space,
            value=0.5,
        )
        for _ in range(n)
    )
    calls, restarts = [], []
    for _ in range(repeats):
        (study, trial), clock, cpu = _timed(partial(_resumed, url, space))
        restarts.append((clock, cpu))
        study.tell(trial, 0.5)
        trial, clock, cpu = _timed(partial(_called, study, space))
        calls.append((clock, cpu))
        study.tell(trial, 0.5)
    return {f"optuna_{k}": v for k, v in _medians({"call": calls, "restart": restarts}).items()}


def _resumed(url: str, space: Any) -> tuple[Any, Any]:
    import optuna

    sampler = optuna.samplers.RandomSampler(seed=1)
    study = optuna.load_study(study_name="s", storage=url, sampler=sampler)
    return study, study.ask(space)


def _called(study: Any, space: Any) -> Any:
    """A call: the last trial's result told (before this), the next one asked."""
    return study.ask(space)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--restart", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.restart:
        return _restart_here(*args.restart)
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for n in args.sizes:
            root = Path(directory) / str(n)
            root.mkdir()
            mine, theirs = ours(n, args.repeat, root), optunas(n, args.repeat, root)
            rows.append({"trials": n, **mine, **theirs})
    for row in rows:
        for field in ("call_cpu_s", "restart_cpu_s", "restart_new_process_cpu_s"):
            row[f"{field}_ratio"] = round(row[field] / rows[0][field], 2)
        for part in ("call", "restart"):
            row[f"{part}_to_optuna_cpu"] = round(
                row[f"{part}_cpu_s"] / row[f"optuna_{part}_cpu_s"], 3
            )
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
