"""A Suggestion's assignments as a writer opens them: the chain's texts, decoded when read.

A writer's open decoded the Suggestion's ``status.suggestions`` whole (``items.py``: one row of
the ``items`` table per assignment), 40,000 objects at 5,000 assignments, though a restart reads
nothing of them but what ``core.history.History`` answers from the texts: the names (the
assignments without a Trial), that each is a JSON object (the model's check), and the texts
themselves (the suggestion service's proof that they are where its saved state starts). So
``rows.read`` for a writer puts a ``Chained`` there: the chain's stored texts (``Texts``, shared
by every revision read of the chain, and by every copy), how many of them the revision holds,
and the items appended since it was read (``extended``: a status write's new batch), as objects.

Every other read decodes, once per ``Texts``: a range of items in one ``orjson`` call, from the
first one read to the end (readers read the newest items; a read further back decodes at least
as many again, so reading backwards one by one costs what reading the whole does), except one
item further back than that (a restart's rebuild reads the best trial's point, anywhere in the
history), which is decoded alone (at about twice the cost of an item of a range: each text is
decoded at most once alone and once in a range), and read alone again without a decode; and
those decoded are the same objects on every later read, whichever ``Chained`` of the texts
reads them.
A text that cannot be decoded is ``DamagedHistory``, when first read: a ``DamagedObject``, as a
Trial's body is (``lazy.py``), and a ``core.history.Unreadable``, which the suggestion service
does not take for a damaged state of its own. Copies (``clone``, ``copy.deepcopy``,
``pickle``) share the texts, which are immutable, and decode their own items: a caller that
mutates a copy's item changes nothing stored. It is compared as a sequence: equal to a
``list``, a ``tuple`` or another history of equal items (it stands in for the stored object's
list and the model's tuple alike), by identity of the texts where it can (``extends``), else
by decoding.

The texts know the chain they were read from (``Texts.chain``, the store's name for it), so a
history whose first items are the chain's says so (``stored``): what a close proved of those
items holds of it (``core.trial_ledger.TrialLedger.vouched``).

``codec.encode`` writes it without decoding (the texts, as an ``orjson.Fragment``), ``clone``
copies it as above, and ``store.as_json``/``as_json_over`` convert only the items appended;
a ``Chained`` is never a ``list`` subclass, so that C code that reads a list's storage
(``orjson``, ``marshal``) refuses it rather than see an empty list.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter, methodcaller
from typing import Any, overload

import orjson

from katib_resume.adapters.fake.lazy import DamagedObject
from katib_resume.core.history import History, Item, Stored, Unreadable, plain

_OPEN = '{"name":"'
"""How a stored assignment starts whose first key is its name, a string (``names``)."""
_AFTER = len(_OPEN)
_named = methodcaller("startswith", _OPEN)
_FIRST = itemgetter(0)
_OBJECT = frozenset("{")
MIN_RANGE = 64
"""Items decoded at least by a read before the decoded suffix (``Texts.items``)."""


class Texts:
    """The stored JSON texts of a chain's first items, and those decoded so far: a suffix
    (``items``), and items read alone further back (``_alone``). Shared by every ``Chained``
    read of the chain in one open; a copy has one of its own over the same tuple of texts, and
    so decodes items of its own."""

    __slots__ = ("_alone", "_lock", "_read", "chain", "texts")

    def __init__(self, texts: Sequence[str], chain: int = 0) -> None:
        self.texts: tuple[str, ...] = tuple(texts)
        self.chain = chain
        """The stored chain whose first items ``texts`` are (``0``: not said)."""
        self._read: tuple[int, list[Any]] = (len(self.texts), [])
        """Where the decoded suffix starts, and its items (replaced whole, never changed)."""
        self._alone: dict[int, Any] = {}
        """Items before the suffix decoded one at a time, by index (``_one``)."""
        self._lock = threading.Lock()

    def items(self, lo: int, hi: int) -> list[Any]:
        """The items ``lo`` to ``hi`` (``0 <= lo <= hi <= len(texts)``), decoded once."""
        if lo >= hi:  # nothing to read: nothing decoded (an empty slice of a history)
            return []
        start, read = self._read
        if lo < start:
            with self._lock:  # one decode, whoever asks first
                start, read = self._read
                width = max(len(read), MIN_RANGE)
                if hi - lo == 1 and (lo in self._alone or lo < start - width):
                    return [self._one(lo)]
                if lo < start:
                    start, read = self._extended(lo, start, read, width)
        return read[lo - start : hi - start]

    def _one(self, index: int) -> Any:
        """The item ``index`` decoded alone, once (kept for the range that later covers it)."""
        if index not in self._alone:
            self._alone[index] = _decoded(self.texts[index : index + 1])[0]
        return self._alone[index]

    def _extended(self, lo: int, start: int, read: list[Any], width: int) -> tuple[int, list[Any]]:
        """The suffix extended down to ``lo``, by ``width`` items at least (a reader going
        backwards decodes as many again each time: the whole once, amortized), those
        decoded alone taking their places in it, the same objects."""
        begin = max(0, min(lo, start - width))
        fresh = _decoded(self.texts[begin:start])
        for index in [i for i in self._alone if begin <= i]:
            fresh[index - begin] = self._alone.pop(index)
        self._read = (begin, fresh + read)
        return self._read


def json_written(texts: Sequence[str]) -> bool:
    """Whether one of ``texts`` was written by ``json`` (``codec.encode``: behind a space, an
    integer beyond 64 bits, which ``orjson`` would read back as a float), found in one C-level
    pass rather than a Python step a text: no JSON text begins with a character below a space,
    so the least text begins with one if any does (and a text that is no JSON fails to decode
    either way)."""
    return bool(texts) and min(texts)[:1].isspace()


class DamagedHistory(DamagedObject, Unreadable):
    """Stored assignments that cannot be decoded: a ``DamagedObject`` (the command says so
    and stops, as for a Trial's body) that no reader mistakes for bad input of its own."""


def _decoded(texts: Sequence[str]) -> list[Any]:
    """The items ``texts`` hold, in one call (one by one if one was written by ``json``: its
    integer beyond 64 bits, ``codec.encode``); ``DamagedObject`` if one is no JSON."""
    try:  # (``codec.decode``'s reading, which imports this module to encode one)
        if json_written(texts):
            return [json.loads(text) for text in texts]
        items = orjson.loads("[" + ",".join(texts) + "]")
    except ValueError as error:
        raise DamagedHistory(f"stored assignments cannot be decoded: {error}") from None
    if type(items) is not list or len(items) != len(texts):
        raise DamagedHistory("a stored Suggestion's assignment is not one JSON value")
    return items


class Chained(History):
    """The texts ``lo`` to ``hi`` of ``texts``, decoded when read, then ``tail``'s items."""

    __slots__ = ("_hi", "_lo", "_tail", "_texts")

    def __init__(self, texts: Texts, lo: int, hi: int, tail: tuple[Any, ...] = ()) -> None:
        self._texts, self._lo, self._hi, self._tail = texts, lo, hi, tail

    @classmethod
    def of(cls, texts: Texts, count: int) -> Chained:
        """The first ``count`` items of ``texts`` (what one revision of the chain holds)."""
        return cls(texts, 0, count)

    def __len__(self) -> int:
        return self._hi - self._lo + len(self._tail)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> Chained: ...

    def __getitem__(self, index: int | slice) -> Item | Chained:
        held = self._hi - self._lo
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return _loose(tuple(self._all()[index]))
            stop = max(start, stop)
            if start >= held:
                return _loose(self._tail[start - held : stop - held])
            tail = self._tail[: max(0, stop - held)]
            return Chained(self._texts, self._lo + start, self._lo + min(stop, held), tail)
        at = index + len(self) if index < 0 else index
        if not 0 <= at < len(self):
            raise IndexError("history index out of range")
        item: Item = (
            self._tail[at - held]
            if at >= held
            else self._texts.items(self._lo + at, self._lo + at + 1)[0]
        )
        return item

    def __iter__(self) -> Iterator[Item]:
        every: list[Item] = self._all()
        return iter(every)

    def __reversed__(self) -> Iterator[Item]:
        every: list[Item] = self._all()
        return reversed(every)

    def __contains__(self, value: object) -> bool:
        return value in self._all()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Chained):
            if len(other) != len(self):
                return False
            if self.extends(other):
                return True
            return self._all() == other._all()
        if isinstance(other, (list, tuple)):  # a list stored, a model's tuple: their items
            return len(other) == len(self) and self._all() == list(other)
        if isinstance(other, History):
            return len(other) == len(self) and self._all() == list(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # a sequence that compares by value

    def __add__(self, other: object) -> Chained:
        """``history + batch`` (a ``list`` or ``tuple``): ``extended``, as the service's
        ``issued + tuple(new)`` does with its tuple."""
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return self.extended(other)

    def __repr__(self) -> str:
        return f"Chained({self._all()!r})"

    def __copy__(self) -> Chained:
        return self  # immutable

    def __deepcopy__(self, memo: dict[int, Any]) -> Chained:
        return self.copied(lambda tail: copy.deepcopy(tail, memo))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its texts and its appended items (the copy decodes its own)."""
        return (_rebuilt, (self._texts.texts[self._lo : self._hi], self._tail))

    def copied(self, copy_tail: Callable[[tuple[Any, ...]], tuple[Any, ...]]) -> Chained:
        """A copy: the same texts (immutable) over a ``Texts`` of its own, so that it decodes
        its own items, and the appended items copied by ``copy_tail``."""
        texts = Texts(self._texts.texts, self._texts.chain)
        return Chained(texts, self._lo, self._hi, copy_tail(self._tail))

    def converted(self, convert: Callable[[list[Any]], list[Any]], shared: int = 0) -> Chained:
        """This history with its appended items after the first ``shared`` converted by
        ``convert`` (the store's ``as_json``: the texts are stored JSON already)."""
        fresh = convert(list(self._tail[shared:]))
        return Chained(self._texts, self._lo, self._hi, (*self._tail[:shared], *fresh))

    def extended(self, fresh: Sequence[Item]) -> Chained:
        return Chained(self._texts, self._lo, self._hi, (*self._tail, *fresh))

    def extends(self, other: Sequence[Item]) -> bool:
        if other is self or not len(other):
            return True
        if not isinstance(other, Chained) or len(other) > len(self):
            return False
        if other._texts.texts is not self._texts.texts or other._lo != self._lo:
            return False
        if other._hi == self._hi:
            return self._tail[: len(other._tail)] == other._tail
        return other._hi < self._hi and not other._tail

    def shared(self, other: Sequence[Item]) -> int:
        """How many of ``other``'s appended items this history shares (``extends(other)``):
        the store keeps those, already converted."""
        return len(other._tail) if isinstance(other, Chained) and self.extends(other) else 0

    def names(self, start: int = 0) -> list[str]:
        """Each item's name from ``start`` on: of a stored text, read from the text where it
        begins ``{"name":"`` and the string holds no escape (then that is the object's first
        key, at its top level, and the string its value exactly; an object this store wrote
        has no key twice), about a tenth of decoding them; if one does not, all decoded.
        That every text begins so is asked of the least and the greatest of them (two C-level
        passes, a third of a test of each): a text between two that begin with a prefix, in
        the strings' order, begins with it too."""
        start = slice(start, None).indices(len(self))[0]  # from the end, as a slice counts
        held = self._hi - self._lo
        if start >= held:
            return super().names(start)
        texts = self._texts.texts[self._lo + start : self._hi]
        if texts and not (_named(min(texts)) and _named(max(texts))):
            return super().names(start)
        try:
            found = [text[_AFTER : text.index('"', _AFTER)] for text in texts]
        except ValueError:  # no closing quote: not a JSON text
            return super().names(start)
        if "\\" in "".join(found):
            return super().names(start)
        return found + list(map(str, map(_NAME, self._tail)))

    def plain(self, start: int = 0) -> bool:
        """Whether every item from ``start`` on is a JSON object: a stored text that is one
        begins ``{`` (and decodes to a ``dict`` whose keys are strings), read in one C-level
        pass; the appended items checked as ``plain`` checks them."""
        start = slice(start, None).indices(len(self))[0]  # from the end, as a slice counts
        held = self._hi - self._lo
        texts = self._texts.texts[self._lo + min(start, held) : self._hi]
        try:
            if not set(map(_FIRST, texts)) <= _OBJECT:
                return False
        except IndexError:  # an empty text: not JSON
            return False
        return plain(self._tail[max(0, start - held) :])

    def reordered(self, order: Sequence[int]) -> Chained | None:
        """The texts in ``order``, over a ``Texts`` of their own (no stored chain's first
        items: ``stored`` says none), if nothing was appended since they were read."""
        texts = self.texts()
        if texts is None:
            return None
        return Chained.of(Texts(list(map(texts.__getitem__, order))), len(order))

    def stored(self) -> Stored | None:
        """The chain the texts were read from and how many of its first items this history
        holds, if it starts with the texts' first (not a slice further on)."""
        chain = self._texts.chain
        return Stored(chain, self._hi) if chain and self._lo == 0 else None

    def texts(self) -> Sequence[str] | None:
        """The stored texts, if nothing was appended since they were read."""
        if self._tail:
            return None
        texts = self._texts.texts
        return texts if self._lo == 0 and self._hi == len(texts) else texts[self._lo : self._hi]

    def fragment(self) -> bytes:
        """This history's JSON list, its stored texts as they are and its appended items
        encoded by ``orjson`` (for ``codec.encode``: its ``TypeError`` where ``orjson``
        refuses one, as for any value, and ``codec`` writes it by ``json``). A stored text
        that ``json`` wrote (``json_written``) is such a one."""
        held = self._texts.texts[self._lo : self._hi]
        if json_written(held):
            raise TypeError("a stored assignment only json writes exactly")
        texts = ",".join(held).encode()
        tail = orjson.dumps(list(self._tail))[1:-1]
        return b"[" + b",".join(part for part in (texts, tail) if part) + b"]"

    def _all(self) -> list[Any]:
        """Every item (the texts decoded, once)."""
        return self._texts.items(self._lo, self._hi) + list(self._tail)


def _rebuilt(texts: tuple[str, ...], tail: tuple[Any, ...]) -> Chained:
    return Chained(Texts(texts), 0, len(texts), tail)


def _loose(items: tuple[Any, ...]) -> Chained:
    """A history of items held as objects only (a slice of the appended ones, or a stepped
    slice)."""
    return Chained(_NO_TEXTS, 0, 0, items)


_NAME = methodcaller("get", "name")
_NO_TEXTS = Texts(())
