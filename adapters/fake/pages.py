"""A chain's items on disk, a page of them to a row of ``items``.

A long list kept beside its object's rows (``items.py``: a Suggestion's assignments, an
Experiment's splices of trial names) is a chain of items, only ever appended to. One row per
item made a restart fetch a row per assignment: 1.8 ms of a cold open's CPU for 5,000
assignments, a tenth of the whole restart, against 0.7 ms for the same texts in rows of 64
(measured on a grown state, 2026-12-04). So a row holds a run of consecutive items, keyed by
the index of its first, their texts joined by newlines: a compact JSON text holds none (a
string's newline is written escaped, by ``orjson`` and by ``json`` alike).

An append fills the chain's last row before it starts another, and a row takes another item
while it holds fewer than ``PAGE`` items and the item fits in ``PAGE_CHARS`` with the rest; an
item that does not fit in an empty row gets one of its own. So a write rewrites at most
``PAGE_CHARS`` of the items stored beside those it adds (an Experiment's chain begins with its
whole list of names: filling that row would rewrite the list on every status write), and a
chain of assignments is ``ceil(n / PAGE)`` rows whatever its appends were. A row of format 7 (one
item) is a run of one, read as it is; an older build refuses a database of this layout
(``sqlite.FORMAT``) rather than read a run as one item.
"""

from __future__ import annotations

import sqlite3

PAGE = 64
"""Items a row holds at most: a cold fetch of 5,000 assignments takes 0.69 ms in rows of 64,
0.62 in rows of 256 (a longer row only makes its rewrite dearer)."""
PAGE_CHARS = 16_384
"""Characters a row of more than one item holds at most: 64 of Katib's assignments (about 160
each) fit, and a status write rewrites a page's worth at most (four of SQLite's pages)."""
_SEPARATOR = "\n"


def read(db: sqlite3.Connection, chain: int, held: int) -> list[str]:
    """The texts of the first ``held`` items of ``chain``, in order (fewer if fewer are
    stored)."""
    bodies = [
        body
        for (body,) in db.execute(
            "SELECT body FROM items WHERE chain = ? AND idx < ? ORDER BY idx", (chain, held)
        )
    ]
    return _SEPARATOR.join(bodies).split(_SEPARATOR)[:held] if bodies else []


def append(db: sqlite3.Connection, chain: int, held: int, texts: list[str]) -> None:
    """``texts`` stored as the items of ``chain`` from index ``held`` on, the chain's last row
    filled first. ``ValueError`` if a text holds a newline, or if the chain does not hold
    exactly ``held`` items (an item is never written twice, nor after a gap)."""
    if any(_SEPARATOR in text for text in texts):
        raise ValueError("an item's text holds a newline: not compact JSON")
    if not texts:
        return
    last = _last(db, chain, held) if held else None
    runs = _runs(texts, last)
    if last is not None and runs[0][0] == last[0]:
        start, filled = runs.pop(0)
        db.execute(
            "UPDATE items SET body = body || ? WHERE chain = ? AND idx = ?",
            (_SEPARATOR + _SEPARATOR.join(filled), chain, start),
        )
    db.executemany(
        "INSERT INTO items VALUES (?, ?, ?)",
        [(chain, start, _SEPARATOR.join(run)) for start, run in runs],
    )


_Row = tuple[int, int, int]
"""A stored row: the index of its first item, its items, its characters."""


def _runs(texts: list[str], last: _Row | None) -> list[tuple[int, list[str]]]:
    """``texts`` packed into rows, each with the index of its first item: the first continuing
    ``last`` (same index) if the first text fits there."""
    start, count, chars = last if last is not None else (0, 0, -1)
    runs: list[tuple[int, list[str]]] = [(start, [])]
    for text in texts:
        if count and (count >= PAGE or chars + 1 + len(text) > PAGE_CHARS):
            start, count, chars = start + count, 0, -1
            runs.append((start, []))
        runs[-1][1].append(text)
        count, chars = count + 1, chars + 1 + len(text)
    return runs if runs[0][1] else runs[1:]


def _last(db: sqlite3.Connection, chain: int, held: int) -> _Row:
    """The last row of ``chain`` (its items counted by its newlines: a row is at most
    ``PAGE_CHARS`` long, or one item)."""
    row = db.execute(
        "SELECT idx, body FROM items WHERE chain = ? ORDER BY idx DESC LIMIT 1", (chain,)
    ).fetchone()
    stored = 0 if row is None else row[0] + 1 + row[1].count(_SEPARATOR)
    if row is None or stored != held:
        raise ValueError(f"chain {chain} holds {stored} items, not {held}: cannot append")
    return row[0], held - row[0], len(row[1])
