"""Named, counter-based random streams.

A draw is a pure function of (episode key, stream name, counter): no long-lived generator
exists, so replaying an event log, resuming a crashed worker or forking an episode reproduces
every draw exactly.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_SCALE = float(1 << 53)


def draw(key: str, stream: str, counter: int) -> float:
    """Return a uniform float in [0, 1) for (``key``, ``stream``, ``counter``).

    >>> draw("s:1", "decline", 3) == draw("s:1", "decline", 3)
    True
    """
    h = hashlib.blake2b(f"{key}\x1f{stream}\x1f{counter}".encode(), digest_size=8).digest()
    return (int.from_bytes(h, "big") >> 11) / _SCALE


def pick(items: Sequence[T], u: float) -> T:
    """Return the element of ``items`` selected by the uniform ``u`` (items non-empty)."""
    return items[min(int(u * len(items)), len(items) - 1)]


def weighted(weights: Sequence[tuple[str, float]], u: float) -> str:
    """Return the key chosen by ``u`` among positive ``weights`` (renormalised)."""
    pos = [(k, w) for k, w in weights if w > 0]
    total = sum(w for _, w in pos)
    acc = 0.0
    for k, w in pos:
        acc += w / total
        if u < acc:
            return k
    return pos[-1][0]
