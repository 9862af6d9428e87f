"""``manifests --own-suggestions``: katib-config runs our suggestion-server for our algorithms."""

from __future__ import annotations

from typing import Any

import yaml

from katib_resume.app.manifests import Options, generate
from katib_resume.app.manifests.katib_config import OWN_ALGORITHMS
from katib_resume.app.manifests.main import _katib_config_text
from katib_resume.core.config import parse_katib_config

IMAGE = "registry.example/katib-resume:0.1.0"


def katib_config(**given: Any) -> dict[str, Any]:
    options = Options(katib_config=_katib_config_text(None), image=IMAGE, **given)
    (config_map,) = [d for d in generate(options) if d["kind"] == "ConfigMap"]
    data: dict[str, Any] = yaml.safe_load(config_map["data"]["katib-config.yaml"])
    return data


def test_our_algorithms_run_our_image_and_katibs_stay() -> None:
    runtime = katib_config(own_suggestions=True)["runtime"]
    by_name = {e["algorithmName"]: e for e in runtime["suggestions"]}
    for name in OWN_ALGORITHMS:
        assert by_name[name]["image"] == IMAGE
        assert by_name[name]["args"] == ["suggestion-server", "--early-stopping-port", "0"]
    assert by_name["darts"]["image"] == "ghcr.io/kubeflow/katib/suggestion-darts:latest"
    claim = by_name["pbt"]["persistentVolumeClaimSpec"]  # ours now, on Katib's shared claim
    assert claim["accessModes"] == ["ReadWriteMany"]
    assert by_name["enas"]["resources"] == {"limits": {"memory": "400Mi"}}
    assert runtime["earlyStoppings"][0]["image"].startswith("ghcr.io/kubeflow/katib/")
    parse_katib_config(katib_config(own_suggestions=True, local_volumes=True))


def test_without_the_flag_katibs_images_stay() -> None:
    runtime = katib_config()["runtime"]
    assert all(e["image"].startswith("ghcr.io/") for e in runtime["suggestions"])
