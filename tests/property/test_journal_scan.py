"""A journal's records checked by C-level passes over all of them (``journal._all_good``) are
the records read one by one: for journals of either version, whole or torn at any byte, with a
byte flipped, a line doubled, dropped or moved, a record whose body holds a line break or
spaces, ``journal.scan`` gives the same records, end and last digest as the reading record by
record, or the same ``Damaged``."""

from __future__ import annotations

import contextlib
from unittest import mock

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from katib_resume.adapters.local.suggestion import journal

BASE = "0123456789abcdef0123456789abcdef"

bodies = st.lists(
    st.one_of(
        st.binary(max_size=12).filter(lambda body: b"\n" not in body),  # as a save writes
        st.sampled_from([b"", b" ", b"a b\nc", b"\n", b"12 x"]),  # and what none writes
    ),
    max_size=6,
)


def _journal(version: int, records: list[bytes]) -> bytes:
    """A journal of ``version`` continuing ``BASE``, framed as this module frames them."""
    digest = journal.DIGESTS[version]
    line = b"%s %d %s" % (journal.MAGIC, version, BASE.encode())
    data, previous = b"%s %s\n" % (line, digest.of(line).encode()), BASE
    for body in records:
        previous = digest.of(previous.encode() + body)
        data += b"%d %s %s\n" % (len(body), previous.encode(), body)
    return data


def _r(line: bytes) -> bool:
    """Whether ``line`` starts a record (a length, then a space)."""
    return line.split(b" ", 1)[0].isdigit() and b" " in line


def _read(data: bytes, one_by_one: bool) -> journal.Scan | str | None:
    """``scan``'s answer, or its ``Damaged`` message; ``one_by_one``: with no C-level passes."""
    passes = mock.patch.object(journal, "_all_good", lambda *_: None)
    with passes if one_by_one else contextlib.nullcontext():
        try:
            return journal.scan(data, BASE)
        except journal.Damaged as damaged:
            return str(damaged)


@settings(max_examples=400)  # (fast: a few hundred bytes each)
@given(
    st.sampled_from(sorted(journal.DIGESTS)),
    bodies,
    st.sampled_from(["whole", "torn", "flip", "double", "drop", "move", "pad", "length"]),
    st.data(),
)
def test_the_passes_over_every_record_read_as_one_record_at_a_time(
    version: int, records: list[bytes], damage: str, data: st.DataObject
) -> None:
    text = _journal(version, records)
    header = text.index(b"\n") + 1
    lines = text[header:].splitlines(keepends=True)
    if damage == "torn" and len(text) > header:
        text = text[: data.draw(st.integers(header, len(text) - 1), label="cut")]
    elif damage == "flip" and len(text) > header:
        at = data.draw(st.integers(header, len(text) - 1), label="at")
        flipped = bytearray(text)
        flipped[at] ^= data.draw(st.integers(1, 255), label="bits")
        text = bytes(flipped)
    elif damage in ("pad", "length") and (framed := [i for i, x in enumerate(lines) if _r(x)]):
        at = data.draw(st.sampled_from(framed), label="line")
        length, rest = lines[at].split(b" ", 1)
        if damage == "pad":  # written with leading zeros: read up to 20 digits
            width = data.draw(st.sampled_from([1, 3, 20, 21, 22]), label="width")
            lines[at] = length.zfill(width) + b" " + rest
        else:  # not the body's, its digest good
            other = int(length) + data.draw(st.sampled_from([-1, 1, 2]), label="by")
            lines[at] = b"%d %s" % (abs(other), rest)
        text = text[:header] + b"".join(lines)
    elif damage in ("double", "drop", "move") and lines:
        at = data.draw(st.integers(0, len(lines) - 1), label="line")
        line = lines.pop(at)
        if damage != "drop":
            lines.insert(data.draw(st.integers(0, len(lines)), label="to"), line)
        if damage == "double":
            lines.insert(at, line)
        text = text[:header] + b"".join(lines)
    fast, slow = _read(text, one_by_one=False), _read(text, one_by_one=True)
    event(f"{damage}: {'damaged' if isinstance(slow, str) else 'read'}")
    assert fast == slow
    if damage == "whole" and all(b"\n" not in body for body in records):
        assert isinstance(fast, journal.Scan) and fast.bodies == records
        assert fast.version == version and fast.end == len(text)


def test_a_record_with_a_line_break_in_its_body_is_read_by_its_length() -> None:
    """No save writes one (JSON escapes a line break), but its length frames it."""
    text = _journal(2, [b"a\nb", b"c"])
    read = journal.scan(text, BASE)
    assert read is not None and read.bodies == [b"a\nb", b"c"] and read.end == len(text)


def test_a_journal_of_version_1_is_read_and_one_of_another_is_not() -> None:
    assert (scan := journal.scan(_journal(1, [b"x"]), BASE)) is not None and scan.version == 1
    text = _journal(2, [b"x"]).replace(b"journal 2 ", b"journal 02 ", 1)
    with pytest.raises(journal.Damaged, match="unsupported journal version '02'"):
        journal.scan(text, BASE)
