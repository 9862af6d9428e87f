"""For any namespace and image, the install stream is well formed and self-consistent."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.app.manifests import Options, generate, render

NAMESPACES = st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
IMAGES = st.from_regex(r"\A[a-z0-9][a-z0-9./-]{0,40}(:[A-Za-z0-9_.-]{1,20})?\Z")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster
CONFIG = "apiVersion: config.kubeflow.org/v1beta1\nkind: KatibConfig\n"


@settings(max_examples=50)
@given(NAMESPACES, IMAGES, st.booleans(), st.booleans())
def test_namespace_and_image_reach_every_object(
    namespace: str, image: str, local_volumes: bool, cert_manager: bool
) -> None:
    options = Options(
        katib_config=CONFIG,
        image=image,
        namespace=namespace,
        local_volumes=local_volumes,
        cert_manager=cert_manager,
    )
    text = render(generate(options))
    docs: list[dict[str, Any]] = list(yaml.load_all(text, Loader=LOADER))
    assert docs == generate(options)
    for doc in docs:
        meta = doc["metadata"]
        assert meta.get("namespace", namespace) == namespace
        for subject in doc.get("subjects", []):
            assert subject["namespace"] == namespace
        for hook in doc.get("webhooks", []):
            assert hook["clientConfig"]["service"]["namespace"] == namespace
            assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == [namespace]
        if doc["kind"] == "Deployment":
            [container] = doc["spec"]["template"]["spec"]["containers"]
            assert container["image"] == image
            assert f"{namespace}/katib-config" in container["args"]
