"""Paired deltas under common random numbers: the bootstrap resamples draw clusters."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from core.grip.deltas import DRAW_KEYS, bootstrap_ci


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=40))
def test_one_pair_per_cluster_is_the_plain_paired_bootstrap(xs: list[float]) -> None:
    d = np.array(xs)
    plain = bootstrap_ci(d, n_boot=400)
    clustered = bootstrap_ci(d, n_boot=400, clusters=list(range(len(d))))
    # same estimator; the streams differ only in the order the units are laid out
    assert min(d) - 1e-9 <= clustered[0] <= clustered[1] <= max(d) + 1e-9
    assert min(d) - 1e-9 <= plain[0] <= plain[1] <= max(d) + 1e-9


def test_shared_draws_widen_the_interval() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(0.1, 0.5, size=30)
    copies = 5  # five personas on the same (sample, seed): identical draws, identical deltas
    d = np.repeat(base, copies)
    naive = bootstrap_ci(d, n_boot=2000)
    clustered = bootstrap_ci(d, n_boot=2000, clusters=list(np.repeat(np.arange(30), copies)))
    assert (clustered[1] - clustered[0]) > 1.8 * (naive[1] - naive[0])
    assert DRAW_KEYS == ("benchmark", "sample_id", "seed")


def test_cluster_order_does_not_matter() -> None:
    d = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.5])
    lab = ["a", "a", "b", "b", "c", "c"]
    assert bootstrap_ci(d, clusters=lab) == bootstrap_ci(d[::-1], clusters=lab[::-1])
