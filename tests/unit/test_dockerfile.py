"""The ``Dockerfile`` runs what the CLI and the manifests expect (no image is built here: the
machine that runs the tests may have no container runtime).

The image's entry point is the ``katib-resume`` console script, every ``COPY`` source exists and
the packages it copies are those the ``katib_resume`` symlinks point to, and the arguments
``manifests --own-suggestions`` gives our suggestion entries parse as ``suggestion-server`` with
Katib's ports and volume mount path.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import yaml

from katib_resume.app.cli.handlers import HANDLERS
from katib_resume.app.cli.main import build_parser
from katib_resume.app.manifests import Options, generate
from katib_resume.app.manifests.katib_config import OWN_ALGORITHMS
from katib_resume.app.manifests.main import _katib_config_text
from katib_resume.core.katib import DEFAULT_MOUNT_PATH, SUGGESTION_PORT

ROOT = Path(__file__).resolve().parents[2]


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuation lines joined, comments dropped)."""
    joined = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in joined.splitlines()]
    pairs = [line.split(None, 1) for line in lines if line and not line.startswith("#")]
    return [(pair[0].upper(), pair[1] if len(pair) > 1 else "") for pair in pairs]


def only(keyword: str) -> str:
    (value,) = [v for k, v in instructions() if k == keyword]
    return value


def test_the_entry_point_is_the_console_script() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert json.loads(only("ENTRYPOINT")) == ["katib-resume"]
    assert scripts["katib-resume"] == "katib_resume.app.cli.main:main"
    command = json.loads(only("CMD"))
    try:  # the default arguments are the CLI's (``--help`` prints and exits 0)
        build_parser().parse_args(command)
    except SystemExit as exited:
        assert exited.code == 0, command


def test_what_is_copied_exists_and_is_what_the_package_links_to() -> None:
    copied = [shlex.split(v)[:-1] for k, v in instructions() if k == "COPY"]
    sources = {source for group in copied for source in group}
    assert all((ROOT / source).exists() for source in sources), sources
    linked = {p.resolve().name for p in (ROOT / "katib_resume").iterdir() if p.is_symlink()}
    assert linked <= sources, linked - sources


def own_args() -> list[str]:
    """The ``args`` of the katib-config entries ``manifests --own-suggestions`` writes."""
    options = Options(katib_config=_katib_config_text(None), image="i", own_suggestions=True)
    (config_map,) = [d for d in generate(options) if d["kind"] == "ConfigMap"]
    config = yaml.safe_load(config_map["data"]["katib-config.yaml"])
    entries = [e for e in config["runtime"]["suggestions"] if e["algorithmName"] in OWN_ALGORITHMS]
    (args,) = {tuple(e["args"]) for e in entries}
    return list(args)


def test_the_suggestion_entries_args_start_our_suggestion_server() -> None:
    args = build_parser().parse_args(own_args())
    assert args.command == "suggestion-server" and "suggestion-server" in HANDLERS
    assert args.port == SUGGESTION_PORT and args.early_stopping_port == 0
    assert args.data_dir is None  # the server's default, Katib's volumeMountPath:
    assert DEFAULT_MOUNT_PATH == "/opt/katib/data"
