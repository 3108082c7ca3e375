"""GRIP aggregates do not depend on the order in which episodes were stored.

Floating-point sums depend on the order of their terms; the report adds every cell's values in
a canonical order (ascending value), so shuffling the episodes, or storing them in another
order (a resumed run, the same spec under another name), gives byte-identical JSON.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from core.grip.metrics import aggregate, order_free_sums


def _frame(values: list[float], seeds: int = 3) -> pd.DataFrame:
    n = len(values)
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "episode_id": [f"ep-{i:05d}" for i in range(n)],
            "benchmark": ["webshop"] * n,
            "method": rng.choice(["B0", "A0"], n),
            "persona": ["rational"] * n,
            "backbone": ["symbolic"] * n,
            "seed": [i % seeds for i in range(n)],
            "success": values,
            "patience": [v * 7.3 for v in values],
            "reaction": [v * 3.1 if i % 4 else np.nan for i, v in enumerate(values)],
        }
    )


def _cells_json(frame: pd.DataFrame) -> str:
    cells = aggregate(frame, ("benchmark", "method"))
    return json.dumps(cells.astype(object).where(cells.notna(), None).to_dict("records"))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.floats(min_value=0, max_value=1, allow_nan=False, width=64), min_size=6, max_size=80
    ),
    st.randoms(use_true_random=False),
)
def test_any_storage_order_gives_the_same_bytes(values: list[float], rnd) -> None:  # type: ignore[no-untyped-def]
    frame = _frame(values)
    order = list(range(len(frame)))
    rnd.shuffle(order)
    shuffled = frame.iloc[order].reset_index(drop=True)
    assert _cells_json(shuffled) == _cells_json(frame)


def test_a_naive_sum_would_differ_and_the_canonical_one_does_not() -> None:
    """The case the issue found: the same values in another order sum to other last bits."""
    vals = [0.1, 0.2, 0.3, 1e-17, 0.7, 1e16, -1e16, 0.05] * 3
    frame = _frame(vals, seeds=1)
    frame["method"] = "A0"
    rev = frame.iloc[::-1].reset_index(drop=True)
    assert sum(frame["patience"]) != sum(rev["patience"])  # order matters for a plain sum
    g = ["benchmark", "method", "seed"]
    idx = frame.groupby(g, sort=True)["patience"].count().index
    a = order_free_sums(frame, g, ["patience"], idx)
    b = order_free_sums(rev, g, ["patience"], idx)
    assert a.equals(b)
    assert _cells_json(frame) == _cells_json(rev)


def test_undefined_stays_undefined() -> None:
    frame = _frame([0.5, 0.25, 1.0], seeds=1)
    frame["success"] = np.nan
    cells = aggregate(frame, ("benchmark",))
    assert cells.loc[cells["metric"] == "Success", "value"].isna().all()
    assert int(cells.loc[cells["metric"] == "Success", "denominator"].iloc[0]) == 0
