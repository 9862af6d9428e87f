"""A seeded permutation of ``0 .. size - 1`` whose ``k``-th item costs the same at any ``k``.

Katib's grid (Optuna's ``GridSampler``) draws each cell at random from those not yet drawn, so
a budget smaller than the grid still spreads over the whole space; walking the product in order
would spend it on the first values of the first parameter. A shuffled list would do that, but a
grid can hold billions of cells, and the search must stay one integer (the position) so that it
resumes exactly. So the order is a keyed bijection: a four-round Feistel network over the
smallest even number of bits that holds ``size``, its round keys drawn from the seed, walked
again from any image at or past ``size`` ("cycle walking": the network permutes a range of at
most four times ``size``, so a walk takes under four steps on average). It is a bijection
whatever the round function, so the round function only has to mix: SplitMix64's finaliser of
the half and the round's key, whose every output bit depends on every input bit. A half is at
most 64 bits, so a permutation holds at most ``LIMIT`` items.
"""

from __future__ import annotations

import random

ROUNDS = 4
LIMIT = 1 << 128
_WORD = (1 << 64) - 1


class Permutation:
    """``self(k)`` for ``k`` in ``range(size)`` is every number of that range once, in an order
    that depends on ``seed`` alone."""

    __slots__ = ("_half", "_keys", "_mask", "size")

    def __init__(self, size: int, seed: int | str) -> None:
        if not 0 <= size <= LIMIT:
            raise ValueError(f"a permutation of {size} items (at most 2**128)")
        self.size = size
        self._half = max(1, ((size - 1).bit_length() + 1) // 2)
        self._mask = (1 << self._half) - 1
        keys = random.Random(f"{seed}/grid-order")  # a string seed: hashed, stable across runs
        self._keys = tuple(keys.getrandbits(64) for _ in range(ROUNDS))

    def __call__(self, index: int) -> int:
        if not 0 <= index < self.size:
            raise IndexError(f"position {index} of a permutation of {self.size}")
        value = self._network(index)
        while value >= self.size:
            value = self._network(value)
        return value

    def _network(self, value: int) -> int:
        half, mask = self._half, self._mask
        left, right = value >> half, value & mask
        for key in self._keys:
            left, right = right, left ^ (_mixed(right ^ key) & mask)
        return (left << half) | right


def _mixed(word: int) -> int:
    """SplitMix64's finaliser: a 64-bit word whose bits each depend on all of ``word``'s."""
    word = ((word ^ (word >> 30)) * 0xBF58476D1CE4E5B9) & _WORD
    word = ((word ^ (word >> 27)) * 0x94D049BB133111EB) & _WORD
    return word ^ (word >> 31)
