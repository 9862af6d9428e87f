"""A request's Trials as bytes: read straight from the message, and remembered by content.

``trial_message.manifest_of`` must give what ``trial_manifest(decode("Trial", data))`` gives
for any Trial message, unknown condition numbers, empty strings and zero goals included.
``TrialMemo.read`` over a sequence of requests (Trials added, finished, changed, deleted; map
entries sent in any order, as Go's marshalling does) must give for each request what converting
each Trial afresh gives, and convert only the Trials whose content it has not seen.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from katib_resume.adapters.grpc import trial_message
from katib_resume.adapters.grpc.api import CLASSES, GET_SUGGESTIONS, TRIAL_CONDITIONS, decode
from katib_resume.adapters.grpc.codec import trial_manifest
from katib_resume.adapters.grpc.trial_bytes import decode_keeping_trials
from katib_resume.app.suggestion import memo_file, trial_memo
from katib_resume.app.suggestion.memo_file import MemoFile
from katib_resume.app.suggestion.trial_memo import TrialMemo, known

texts = st.text(max_size=6)
pairs = st.lists(st.tuples(texts, texts), max_size=3)
labels = st.dictionaries(st.text(min_size=1, max_size=4), texts, max_size=3)
TRIAL: Any = CLASSES["Trial"]  # a run-time class: its fields are not typed


@st.composite
def trial_fields(draw: st.DrawFn, name: str | None = None) -> dict[str, Any]:
    return {
        "name": draw(texts) if name is None else name,
        "objective": (
            draw(st.integers(0, 3)),
            draw(st.sampled_from([0.0, 1.5, -2.0])),
            draw(texts),
            draw(st.lists(texts, max_size=2)),
        ),
        "assignments": draw(pairs),
        "labels": draw(labels),
        "times": (draw(texts), draw(texts)),
        "condition": draw(st.integers(0, len(TRIAL_CONDITIONS) + 2)),
        "metrics": draw(pairs),
    }


def encoded(fields: dict[str, Any], reverse_labels: bool = False) -> bytes:
    """The Trial message of ``fields`` as bytes, its labels' entries on the wire in the given
    order, as Go sends a map (its iteration order is random): a message is the merge of
    messages concatenated, so each entry is appended as a Trial of that label alone."""
    trial: Any = TRIAL(name=fields["name"])
    kind, goal, metric, more = fields["objective"]
    trial.spec.objective.type, trial.spec.objective.goal = kind, goal
    trial.spec.objective.objective_metric_name = metric
    trial.spec.objective.additional_metric_names.extend(more)
    for name, value in fields["assignments"]:
        trial.spec.parameter_assignments.assignments.add(name=name, value=value)
    trial.status.start_time, trial.status.completion_time = fields["times"]
    trial.status.condition = fields["condition"]
    for name, value in fields["metrics"]:
        trial.status.observation.metrics.add(name=name, value=value)
    items = list(fields["labels"].items())
    entries = [TRIAL(spec={"labels": {k: v}}).SerializeToString() for k, v in items]
    head: bytes = trial.SerializeToString()
    return head + b"".join(reversed(entries) if reverse_labels else entries)


def _varint(number: int) -> bytes:
    out = bytearray()
    while True:
        low, number = number & 0x7F, number >> 7
        out.append(low | (0x80 if number else 0))
        if not number:
            return bytes(out)


@given(trial_fields())
def test_a_trial_read_from_its_message_is_the_decoded_trials_manifest(
    fields: dict[str, Any],
) -> None:
    data = encoded(fields)
    assert trial_message.manifest_of(data) == trial_manifest(decode("Trial", data))
    if len(fields["labels"]) > 1:  # the entries' order is on the wire, not in the content
        assert encoded(fields, reverse_labels=True) != data
        assert decode("Trial", encoded(fields, reverse_labels=True)) == decode("Trial", data)


def request_keys(trials: list[dict[str, Any]], reverse: bool) -> list[bytes]:
    """The request as the wire carries it (labels in either order), decoded by the server."""
    body = [encoded(fields, reverse_labels=reverse) for fields in trials]
    data = b"".join(b"\x12" + _varint(len(trial)) + trial for trial in body)  # field 2
    wire = decode_keeping_trials(GET_SUGGESTIONS.request, data)
    keys: list[bytes] = wire.get("trials", [])
    return keys


steps = st.lists(
    st.tuples(st.sampled_from(["add", "change", "delete", "same"]), st.integers(0, 99)),
    min_size=1,
    max_size=12,
)


@given(st.data(), steps, st.sampled_from([None, "", "loss"]))
def test_the_memo_reads_each_request_as_converting_every_trial_would(
    data: st.DataObject, script: list[tuple[str, int]], metric: str | None
) -> None:
    memo, trials, seen = TrialMemo(metric), dict[str, dict[str, Any]](), set[bytes]()
    made: list[bytes] = []
    original = trial_message.manifest_of

    def counted(data_: bytes) -> Any:
        made.append(data_)
        return original(data_)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trial_message, "manifest_of", counted)
        for serial, (step, pick) in enumerate(script):
            names = sorted(trials)
            if step == "add" or not names:
                trials[f"t{serial}"] = data.draw(trial_fields(f"t{serial}"))
            elif step == "change":
                name = names[pick % len(names)]
                trials[name] = data.draw(trial_fields(name))
            elif step == "delete":
                del trials[names[pick % len(names)]]
            order = data.draw(st.permutations(sorted(trials)))
            keys = request_keys([trials[n] for n in order], reverse=data.draw(st.booleans()))
            made.clear()
            read = memo.read(keys)
            fresh = [known(trial_manifest(decode("Trial", k)), metric) for k in keys]
            assert read == fresh
            assert trial_memo.results(read) == trial_memo.results(fresh)
            assert made == [k for k in keys if k not in seen]  # only contents not seen
            seen = set(keys)


damages = st.sampled_from(["none", "none", "torn", "flipped", "garbage", "removed", "metric"])


@settings(max_examples=150, deadline=None)
@given(st.data(), steps, st.sampled_from([None, "loss"]), st.integers(1, 3))
def test_a_memo_kept_on_the_volume_reads_as_converting_every_trial_would(
    data: st.DataObject, script: list[tuple[str, int]], metric: str | None, lines: int
) -> None:
    """As above, with the memo kept in a file (``memo_file``, written anew every ``lines``
    appends) and restarted at any call, the file as it was, torn mid-line, a byte flipped,
    garbage appended, removed or of another metric: every read is what converting each Trial
    gives, and a restart with the file whole decodes only the Trials the call before did not
    hold."""
    trials, previous = dict[str, dict[str, Any]](), list[bytes]()
    made: list[bytes] = []
    original = trial_message.manifest_of

    def counted(data_: bytes) -> Any:
        made.append(data_)
        return original(data_)

    with tempfile.TemporaryDirectory() as directory, pytest.MonkeyPatch.context() as patch:
        path = Path(directory) / memo_file.FILE_NAME
        patch.setattr(trial_message, "manifest_of", counted)
        patch.setattr(memo_file, "LINES", lines)
        memo = TrialMemo(metric, MemoFile(path, metric))
        for serial, (step, pick) in enumerate(script):
            names = sorted(trials)
            if step == "add" or not names:
                trials[f"t{serial}"] = data.draw(trial_fields(f"t{serial}"))
            elif step == "change":
                trials[names[pick % len(names)]] = data.draw(trial_fields(names[pick % len(names)]))
            elif step == "delete":
                del trials[names[pick % len(names)]]
            whole = True
            if data.draw(st.booleans()):  # a restart
                damage = data.draw(damages)
                whole = damage == "none"
                _damaged(path, damage, data)
                memo = TrialMemo(metric, MemoFile(path, metric))
            keys = request_keys([trials[n] for n in sorted(trials)], reverse=False)
            made.clear()
            read = memo.read(keys)
            assert read == [known(trial_manifest(decode("Trial", k)), metric) for k in keys]
            if whole:
                assert made == [k for k in keys if k not in previous]
            previous = keys


def _damaged(path: Path, damage: str, data: st.DataObject) -> None:
    if not path.exists() or damage == "none":
        return
    content = path.read_bytes()
    if damage == "torn":
        path.write_bytes(content[: data.draw(st.integers(0, len(content)))])
    elif damage == "flipped":
        at = data.draw(st.integers(0, len(content) - 1))
        path.write_bytes(content[:at] + bytes([content[at] ^ 0x01]) + content[at + 1 :])
    elif damage == "garbage":
        path.write_bytes(content + data.draw(st.binary(max_size=20)))
    elif damage == "removed":
        path.unlink()
    elif damage == "metric":
        path.write_bytes(
            content.replace(b" null\n", b' "other"\n', 1).replace(b' "loss"\n', b" null\n", 1)
        )
