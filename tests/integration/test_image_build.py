"""The image's build and entry point, without a container runtime: the ``Dockerfile``'s steps
done in a temporary directory, then its ``ENTRYPOINT`` run with the arguments our katib-config
entries give the suggestion Deployment.

What the image does: ``COPY`` the package's sources into ``/src`` (the ``katib_resume``
symlinks as symlinks), ``pip install .`` there (a wheel built in an isolated environment from
``pyproject.toml``: the symlinked packages must end up as files), and run ``katib-resume``.
Here: the same ``COPY`` sources (read from the ``Dockerfile``) copied to a temporary ``src``,
``pip install .`` of it into a fresh venv (a wheel built the same way; the dependencies are not
downloaded again, the fresh venv sees this one's), then the venv's ``katib-resume`` run with
the ``args`` of ``manifests --own-suggestions``, its port and volume moved to the test's, in an
empty working directory and without writing bytecode, as the image runs it. It must answer
gRPC health ``SERVING``, serve ``GetSuggestions`` with its state on the volume, and stop on
SIGTERM with 0. Not done here: the base image, the user 10001 (the interpreter is not readable
by it on this machine) and a read-only root file system.

It takes a pip build (about 10 s), so it runs when ``KATIB_RESUME_IMAGE_BUILD=1`` (``.ci/run``
sets it), and is skipped, saying why, when pip cannot get the build backend (no index).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from katib_resume.adapters.fake.cluster import FakeCluster
from katib_resume.adapters.grpc import Endpoints, GrpcSuggestionService
from katib_resume.adapters.grpc.server import HEALTH
from katib_resume.core.katib import API_VERSION, GRPC_HEALTH_SERVICE
from katib_resume.core.model import Suggestion
from tests.unit.test_dockerfile import ROOT, instructions, only, own_args

pytestmark = pytest.mark.skipif(
    os.environ.get("KATIB_RESUME_IMAGE_BUILD") != "1",
    reason="builds the package with pip (about 10 s): set KATIB_RESUME_IMAGE_BUILD=1",
)
NAME = "imaged"
ENV = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
"""The image's environment: nothing from ours (no ``PYTHONPATH`` to the checkout)."""
BACKEND_MISSING = ("No matching distribution found", "Could not find a version")


def copied(src: Path) -> None:
    """The ``Dockerfile``'s ``COPY`` sources into ``src`` (``.dockerignore``: no caches)."""
    for keyword, value in instructions():
        if keyword != "COPY":
            continue
        *sources, _ = shlex.split(value)
        for source in sources:
            path = ROOT / source
            if path.is_dir():
                ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
                shutil.copytree(path, src / source, symlinks=True, ignore=ignore)
            else:
                shutil.copy2(path, src / source)


def installed(tmp: Path) -> Path:
    """A fresh venv holding the package as ``pip install .`` of the copied sources builds it."""
    src, venv = tmp / "src", tmp / "venv"
    src.mkdir()
    copied(src)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    paths = sysconfig.get_paths()
    (site / "dependencies.pth").write_text(f"{paths['purelib']}\n{paths['platlib']}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install"]
    done = subprocess.run(
        [*pip, "--quiet", "--no-deps", "--no-cache-dir", str(src)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0 and any(text in done.stderr for text in BACKEND_MISSING):
        pytest.skip(f"pip cannot get the build backend here: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr
    return venv


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed(tmp_path_factory.mktemp("image"))


@pytest.fixture
def serving(image: Path, tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    volume, workdir = tmp_path / "volume", tmp_path / "workdir"
    volume.mkdir()
    workdir.mkdir()
    port = free_port()
    (entrypoint,) = json.loads(only("ENTRYPOINT"))
    command = [str(image / "bin" / entrypoint), *own_args()]
    command += ["--port", str(port), "--data-dir", str(volume)]
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
    process = subprocess.Popen(command, cwd=workdir, env=env, stderr=subprocess.PIPE, text=True)
    try:
        yield f"127.0.0.1:{port}", volume, process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def health(endpoint: str, deadline: float) -> dict[str, Any]:
    """The health check's answer, waiting for the server to listen."""
    with grpc.insecure_channel(endpoint) as channel:
        check: grpc.UnaryUnaryMultiCallable[Message, Message] = channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=HEALTH["HealthCheckResponse"].FromString,
        )
        request = HEALTH["HealthCheckRequest"](service=GRPC_HEALTH_SERVICE)
        while True:
            try:
                return json_format.MessageToDict(check(request, timeout=2, wait_for_ready=True))
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


def experiment() -> dict[str, Any]:
    x = {"name": "x", "parameterType": "double", "feasibleSpace": {"min": "-5", "max": "10"}}
    return {
        "apiVersion": API_VERSION,
        "kind": "Experiment",
        "metadata": {"name": NAME, "namespace": "kubeflow"},
        "spec": {
            "objective": {"type": "minimize", "objectiveMetricName": "loss"},
            "algorithm": {"algorithmName": "tpe", "algorithmSettings": []},
            "parallelTrialCount": 2,
            "maxTrialCount": 4,
            "parameters": [x, {**x, "name": "y"}],
        },
    }


def suggestion() -> Suggestion:
    spec = {"algorithm": {"algorithmName": "tpe"}, "requests": 0}
    return Suggestion.model_validate(
        {"metadata": {"name": NAME, "namespace": "kubeflow"}, "spec": spec, "status": {}}
    )


def test_the_installed_package_is_files_not_links_to_the_checkout(image: Path) -> None:
    (site,) = image.glob("lib/python*/site-packages")
    package = site / "katib_resume"
    assert {p.name for p in package.iterdir()} >= {"core", "adapters", "app", "__main__.py"}
    assert not [p for p in package.rglob("*") if p.is_symlink()]
    assert list((package / "app" / "data").glob("*.yaml"))  # what the manifests read
    where = subprocess.run(
        [image / "bin" / "python", "-c", "import katib_resume.core as c; print(c.__file__)"],
        cwd=image,  # as the image's WORKDIR, not a checkout (``-c`` imports from there first)
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(package)


def test_the_entry_point_serves_katibs_suggestion_api_from_the_volume(
    serving: tuple[str, Path, subprocess.Popen[str]],
) -> None:
    endpoint, volume, process = serving
    assert health(endpoint, time.monotonic() + 30) == {"status": "SERVING"}
    cluster = FakeCluster()
    cluster.create(experiment())
    client = GrpcSuggestionService(cluster, Endpoints(endpoint, endpoint))
    try:
        items = client.get_suggestions(suggestion(), 2).items
    finally:
        client.close()
    assert len(items) == 2 and len({item["name"] for item in items}) == 2
    assert (volume / NAME / "suggestion-state.json").is_file()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 0
    assert process.stderr is not None
    assert f"state in {volume}" in process.stderr.read()
