"""Over gRPC, a ``suggestion-server`` decodes each Trial once, not on every call.

Katib's controller sends every Trial in every ``GetSuggestions``; the server keeps what it made
of each Trial under its bytes (``app/suggestion/trial_memo.py``), so a call decodes only the
Trials that are new or changed since the last, and answers as one that decoded them all.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
from xxhash import xxh3_128_hexdigest

from benchmarks.grpc_service import Client, Pod
from katib_resume.adapters.fake import chained
from katib_resume.adapters.grpc import trial_message
from katib_resume.adapters.grpc.api import GET_SUGGESTIONS, decode
from katib_resume.app.suggestion.memo_file import FILE_NAME


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    made: list[bytes] = []
    original = trial_message.manifest_of

    def counted(data: bytes) -> Any:
        made.append(data)
        return original(data)

    monkeypatch.setattr(trial_message, "manifest_of", counted)
    return made


def _grown(tmp_path: Path, calls: int) -> tuple[Client, Path, Path]:
    """A volume grown by ``calls`` calls of 10 assignments, each made a Trial, and a copy of
    it without the trial memo's file; the client holding the Trials."""
    volume, client = tmp_path / "volume", Client()
    pod = Pod(volume)
    try:
        for _ in range(calls):
            client.took(pod.call(client.request(10)))
    finally:
        pod.stop()
    assert (volume / "served" / FILE_NAME).is_file()
    without = tmp_path / "without"
    shutil.copytree(volume, without)
    (without / "served" / FILE_NAME).unlink()
    return client, volume, without


def _names(reply: bytes) -> list[str]:
    items = decode(GET_SUGGESTIONS.reply, reply).get("parameter_assignments", [])
    return [item["trial_name"] for item in items]


def test_each_call_decodes_only_the_trials_it_has_not_seen(
    tmp_path: Path, decoded: list[bytes]
) -> None:
    client, pod = Client(), Pod(tmp_path / "volume")
    try:
        for _ in range(3):
            client.took(pod.call(client.request(10)))
        assert len(decoded) == 20  # the second call decoded 10, the third the 10 after them
        decoded.clear()
        client.took(pod.call(client.request(1)))
        assert len(decoded) == 10
        decoded.clear()
        first = pod.call(client.request(1))
        assert len(decoded) == 1  # the one assignment the last call issued, now a Trial
        decoded.clear()
        again = pod.call(client.request(1))  # the same Trials in another order: a lost reply
        assert decoded == []
        assert _names(again) == _names(first)
    finally:
        pod.stop()
    other, restarted = Client(), Pod(tmp_path / "other")
    try:
        other.took(restarted.call(other.request(30)))
        other.took(restarted.call(other.request(1)))
        assert _names(restarted.call(other.request(1))) == _names(first)
    finally:
        restarted.stop()


def test_a_restarted_server_decodes_only_the_trials_it_had_not_seen(
    tmp_path: Path, decoded: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo is kept on the volume (``memo_file``): a pod recreated on it reads the Trials
    it had seen from there, and answers as one recreated without it, which decodes them all.
    Neither decodes an assignment of the history: their texts are put in the saved order and
    compared with the saved ones as they are (``saved_order``, ``unparsed``)."""
    texts: list[str] = []
    original = chained._decoded

    def counted(held: Sequence[str]) -> list[Any]:
        texts.extend(held)
        return original(held)

    monkeypatch.setattr(chained, "_decoded", counted)
    client, volume, without = _grown(tmp_path, 4)
    request = client.request(2)
    replies = []
    for directory, decodes in ((volume, 10), (without, 40)):
        decoded.clear()
        restarted = Pod(directory)
        try:
            replies.append(restarted.call(request))
        finally:
            restarted.stop()
        assert len(decoded) == decodes  # with the memo: the last call's 10, not yet Trials
        assert texts == []
    assert replies[0] == replies[1] and len(_names(replies[0])) == 2


def test_a_memo_file_holding_an_assignment_that_is_no_json_is_dropped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A line whose checksum holds but whose assignment text is no JSON (only something else
    writes one) is not the service's failure: the memo is dropped with a warning, every Trial
    decoded, the file written anew, and the answer is the one without the file."""
    client, volume, without = _grown(tmp_path, 3)
    memo = volume / "served" / FILE_NAME
    lines = memo.read_bytes().split(b"\n")
    columns = orjson.loads(lines[-2].partition(b" ")[2])  # (the last line: the last call's)
    columns["items"][0] = '{"name":"t'  # (every other column as it was)
    body = orjson.dumps(columns)
    lines[-2] = xxh3_128_hexdigest(body).encode() + b" " + body
    memo.write_bytes(b"\n".join(lines))
    request, replies = client.request(2), []
    for directory in (volume, without):
        restarted = Pod(directory)
        try:
            replies.append(restarted.call(request))
        finally:
            restarted.stop()
    assert replies[0] == replies[1] and len(_names(replies[0])) == 2
    assert "the trial memo is dropped" in caplog.text
    assert b'{"name":"t"' not in memo.read_bytes()
    assert memo.read_bytes().count(b"\n") == 2  # the header and one line: written anew
