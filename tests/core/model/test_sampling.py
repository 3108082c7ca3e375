"""The one seeded sample draw."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.model.sampling import draw_sample

IDS = st.lists(st.text("abcdef0123", min_size=1, max_size=6), min_size=1, max_size=30)


@given(IDS, st.integers(0, 10_000), st.randoms())
def test_the_draw_depends_on_the_set_and_the_seed_only(
    ids: list[str], seed: int, rnd: random.Random
) -> None:
    shuffled = ids[:]
    rnd.shuffle(shuffled)
    got = draw_sample(ids, seed)
    assert got in ids
    assert draw_sample(shuffled, seed) == got == draw_sample(ids + ids, seed)


def test_it_is_the_historical_rule_on_a_sorted_pool() -> None:
    pool = [f"s{i:03d}" for i in range(40)]
    for seed in range(20):
        assert draw_sample(pool, seed) == random.Random(seed).choice(pool)


def test_an_empty_pool_is_an_error() -> None:
    with pytest.raises(ValueError, match="no samples"):
        draw_sample([], 0)
