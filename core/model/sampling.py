"""The seeded draw of a sample: one rule, so the same seed picks the same sample everywhere.

The play pages (a sample left on "random"), the live watcher and any other caller that lets a
seed choose a sample use :func:`draw_sample`. The draw depends only on the *set* of ids and the
seed: the ids are sorted first, so the store's order or a bundled fallback's cannot change it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable


def draw_sample(sample_ids: Iterable[str], seed: int | str) -> str:
    """Return the sample id that ``seed`` draws from ``sample_ids``.

    Args:
        sample_ids: The candidate ids (any order; duplicates count once).
        seed: The episode seed (or a string derived from it, for a second, independent draw).

    Returns:
        The id that ``random.Random(seed)`` chooses from the sorted, de-duplicated ids.

    Raises:
        ValueError: When there is nothing to draw from.

    >>> draw_sample(["s2", "s1", "s3"], 0) == draw_sample(["s3", "s1", "s2"], 0)
    True
    """
    pool = sorted(set(sample_ids))
    if not pool:
        raise ValueError("no samples to draw from")
    return random.Random(seed).choice(pool)
