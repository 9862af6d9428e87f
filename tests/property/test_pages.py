"""A chain's items in pages (``adapters/fake/pages.py``): after any sequence of appends, from an
empty chain or from one stored an item to a row (format 7), the chain and its prefixes (none,
one, half, all but one) read back as the texts appended, in as few rows as pages allow; an
append that would misplace or split an item is refused with the chain unchanged."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from katib_resume.adapters.fake import pages
from katib_resume.adapters.fake.pages import PAGE, PAGE_CHARS
from katib_resume.adapters.fake.sqlite import connect

CHAIN = 7
TEXTS = st.text(st.characters(blacklist_characters="\n", blacklist_categories=["Cs"]), max_size=8)
LONG = st.integers(PAGE_CHARS // 4, PAGE_CHARS + 2).map("x".__mul__)
"""Texts of which a few fill a row by their length, one alone more than fills it."""
BATCHES = st.lists(st.lists(TEXTS, max_size=PAGE + 20), max_size=8)
MIXED = st.lists(st.lists(st.one_of(TEXTS, TEXTS, LONG), max_size=PAGE + 20), max_size=6)


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute(
        "CREATE TABLE items (chain INTEGER NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, "
        "PRIMARY KEY (chain, idx)) WITHOUT ROWID"
    )
    return db


def _rows(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT count(*) FROM items").fetchone()[0])


def _appended(db: sqlite3.Connection, held: list[str], batches: list[list[str]]) -> Iterator[int]:
    """Each batch appended after ``held``, every prefix of the chain checked after each; the
    row count after each."""
    for batch in batches:
        pages.append(db, CHAIN, len(held), batch)
        held += batch
        assert pages.read(db, CHAIN, len(held)) == held
        for count in {0, 1, len(held) // 2, len(held) - 1}:
            assert pages.read(db, CHAIN, max(count, 0)) == held[: max(count, 0)]
        yield _rows(db)


@given(BATCHES)
def test_appends_read_back_in_the_fewest_rows(batches: list[list[str]]) -> None:
    db = _db()
    held: list[str] = []
    for rows in _appended(db, held, batches):
        assert rows == -(-len(held) // PAGE)


@given(MIXED)
def test_a_row_is_full_before_the_next_and_long_texts_get_their_own(
    batches: list[list[str]],
) -> None:
    """Each row holds at most ``PAGE`` items and ``PAGE_CHARS`` characters, or is one item, and
    the next row starts only where another item would break one of those bounds."""
    db = _db()
    for _ in _appended(db, [], batches):
        rows = [body.split("\n") for (body,) in db.execute("SELECT body FROM items ORDER BY idx")]
        for run in rows:
            assert len(run) <= PAGE and (len("\n".join(run)) <= PAGE_CHARS or len(run) == 1)
        for run, after in pairwise(rows):
            assert len(run) == PAGE or len("\n".join(run)) + 1 + len(after[0]) > PAGE_CHARS


@pytest.mark.parametrize("lead", [0, 1])
@pytest.mark.parametrize("cuts", [[], [1], [2], [1, 2]])
def test_a_row_takes_items_up_to_its_characters_exactly(lead: int, cuts: list[int]) -> None:
    """Two texts joined to ``PAGE_CHARS`` exactly share a row (the chain's first, or the next
    after a text that fills one alone), whether written at once or one by one; one character
    more starts another."""
    half = PAGE_CHARS // 2
    texts = ["z" * PAGE_CHARS] * lead + ["a" * half, "b" * (PAGE_CHARS - half - 1), "c"]
    db = _db()
    for held, upto in pairwise([0, *(lead + cut for cut in cuts), len(texts)]):
        pages.append(db, CHAIN, held, texts[held:upto])
    bodies = [body for (body,) in db.execute("SELECT body FROM items ORDER BY idx")]
    assert [len(body) for body in bodies] == [PAGE_CHARS] * (lead + 1) + [1]


@given(st.lists(TEXTS, min_size=1, max_size=2 * PAGE), BATCHES)
def test_a_chain_of_an_item_a_row_reads_as_it_is_and_grows(
    old: list[str], batches: list[list[str]]
) -> None:
    """Format 7's rows are runs of one: read unchanged, and only the last of them is filled."""
    db = _db()
    db.executemany("INSERT INTO items VALUES (?, ?, ?)", [(CHAIN, i, t) for i, t in enumerate(old)])
    assert pages.read(db, CHAIN, len(old)) == old
    held = list(old)
    for rows in _appended(db, held, batches):
        assert rows == len(old) - 1 + -(-(len(held) - len(old) + 1) // PAGE)


@given(st.lists(TEXTS, max_size=2 * PAGE), st.integers(-3, 3).filter(bool))
def test_an_append_out_of_step_is_refused_and_changes_nothing(old: list[str], off: int) -> None:
    """An append after more items than stored (a gap) or fewer (an item written twice)."""
    assume(len(old) + off >= 1)
    db = _db()
    pages.append(db, CHAIN, 0, old)
    before = db.execute("SELECT * FROM items").fetchall()
    with pytest.raises(ValueError, match=f"holds {len(old)} items"):
        pages.append(db, CHAIN, len(old) + off, ["x"])
    assert db.execute("SELECT * FROM items").fetchall() == before


def test_a_text_with_a_newline_is_refused_and_changes_nothing() -> None:
    db = _db()
    pages.append(db, CHAIN, 0, ["a", "b"])
    with pytest.raises(ValueError, match="newline"):
        pages.append(db, CHAIN, 2, ["c", "d\ne"])
    assert pages.read(db, CHAIN, 10) == ["a", "b"] and _rows(db) == 1


def test_the_store_schema_is_the_one_paged(tmp_path: Path) -> None:
    """The table these properties build is the store's own (``sqlite._SCHEMA``)."""
    db = connect(tmp_path / "s.db")
    columns = [(row[1], row[2], row[5]) for row in db.execute("PRAGMA table_info(items)")]
    assert columns == [("chain", "INTEGER", 1), ("idx", "INTEGER", 2), ("body", "TEXT", 0)]
    db.close()
