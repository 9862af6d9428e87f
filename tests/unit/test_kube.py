"""The resource base (``core.kube``): Kubernetes time stamps, label selection, and models that are
camelCase, frozen and loss-free."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pydantic
import pytest

from katib_resume.core.kube import KubeModel, KubeTime
from katib_resume.core.manifest import format_time, has_labels


def test_times_are_rfc3339_in_utc_with_whole_seconds() -> None:
    assert format_time(datetime(2026, 3, 4, 5, 6, 7, 890_000, tzinfo=UTC)) == "2026-03-04T05:06:07Z"
    east = timezone(timedelta(hours=2))
    assert format_time(datetime(2026, 1, 1, 1, 0, 0, tzinfo=east)) == "2025-12-31T23:00:00Z"


@pytest.mark.parametrize(
    ("labels", "selector", "expected"),
    [
        (None, {}, True),
        ({"a": "1"}, {}, True),
        ({"a": "1", "b": "2"}, {"a": "1"}, True),
        ({"a": "1", "b": "2"}, {"a": "1", "b": "2"}, True),
        ({"a": "1"}, {"a": "2"}, False),
        ({"a": "1"}, {"a": "1", "b": "2"}, False),
        (None, {"a": "1"}, False),
    ],
)
def test_an_equality_selector_needs_every_label(
    labels: dict[str, str] | None, selector: dict[str, str], expected: bool
) -> None:
    metadata = {"name": "x"} if labels is None else {"name": "x", "labels": labels}
    assert has_labels({"metadata": metadata}, selector) is expected


class Part(KubeModel):
    max_trial_count: int | None = None
    goal: float | None = None
    stamp: KubeTime | None = None


def test_models_read_camel_case_or_python_names_and_keep_unknown_fields() -> None:
    part = Part.model_validate({"maxTrialCount": 3, "futureField": {"x": 1}})
    assert part.max_trial_count == 3
    assert Part.model_validate({"max_trial_count": 4}).max_trial_count == 4
    assert part.to_dict() == {"maxTrialCount": 3, "futureField": {"x": 1}}
    assert part.to_dict(exclude={"max_trial_count"}) == {"futureField": {"x": 1}}
    with pytest.raises(pydantic.ValidationError):
        part.max_trial_count = 5  # type: ignore[misc]


def test_to_dict_is_json_only_the_given_fields() -> None:
    stamp = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    assert Part(stamp=stamp).to_dict() == {"stamp": "2026-03-04T05:06:07Z"}
    assert Part(goal=None).to_dict() == {"goal": None}
    assert Part().to_dict() == {}
    assert '"goal":Infinity' in Part(goal=float("inf")).model_dump_json()  # not null
