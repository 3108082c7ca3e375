"""The paper's table layout: golden Table 2 (Markdown, LaTeX, CSV) and the marking rules.

Methods are rows, benchmark × metric the columns; mean ± sd over seeds; the best value of a
column bold, the second underlined; no mark under five episodes; undefined is "—". Rewrite the
golden files with ``DRIFTBENCH_WRITE_GOLDEN=1`` only for a deliberate layout change.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.grip.paper import MIN_MARK_N, build_table, fault_complexity, to_csv, to_latex, to_markdown

GOLDEN = Path(__file__).parent / "golden"
METHODS = ("B0", "A0", "A1", "A2", "A3")
TABLE2 = ("Success", "Earned", "Aim", "Recovery", "Patience", "PostShift")


def _frame(n_per_cell: int = 6) -> pd.DataFrame:
    """A fixed per-episode frame: 3 benchmarks × 5 methods × 2 seeds (values by formula)."""
    rows = []
    for bi, bench in enumerate(("webshop", "tau2_retail", "tau2_airline")):
        for mi, method in enumerate(METHODS):
            for seed in (0, 1):
                for i in range(n_per_cell // 2):
                    ok = (i + mi + seed + bi) % 3 != 0
                    rows.append(
                        {
                            "episode_id": f"e-{bench}-{method}-{seed}-{i}",
                            "benchmark": bench,
                            "method": method,
                            "persona": "rational",
                            "backbone": "symbolic",
                            "seed": seed,
                            "k": 1,
                            "success": float(ok),
                            "earned": float(ok and i % 2 == 0),
                            "aim": np.nan if method == "B0" else (i + mi) / (i + mi + 2),
                            "recovery": float((i + mi) % 2 == 0),
                            "patience": 10.0 - 2 * mi - seed,
                            "postshift": np.nan if i else float(ok),
                        }
                    )
    return pd.DataFrame(rows)


def _table2() -> object:
    return build_table(
        _frame(),
        key="table2_main",
        title="Table 2",
        row_keys=("method",),
        group_keys=("benchmark",),
        metrics=TABLE2,
        row_order=[(m,) for m in METHODS],
        group_order=("webshop", "tau2_retail", "tau2_airline"),
    )


@pytest.mark.parametrize(
    ("ext", "render"), [("md", to_markdown), ("tex", to_latex), ("csv", to_csv)]
)
def test_table2_layout_is_golden(ext: str, render) -> None:  # type: ignore[no-untyped-def]
    got = render(_table2())
    path = GOLDEN / f"table2_layout.{ext}"
    if os.environ.get("DRIFTBENCH_WRITE_GOLDEN") == "1":
        path.write_text(got, encoding="utf-8")
        pytest.skip(f"{path.name} rewritten")
    assert got == path.read_text(encoding="utf-8")


def test_rows_are_methods_and_columns_benchmark_by_metric() -> None:
    t = _table2()
    assert t.rows == [(m,) for m in METHODS]
    assert t.columns[:2] == [("webshop", "Success"), ("webshop", "Earned")]
    assert t.columns[-1] == ("tau2_airline", "PostShift") and len(t.columns) == 18


def test_best_is_bold_second_underlined_and_lower_is_better_respected() -> None:
    t = _table2()
    col = ("webshop", "Patience")  # higher is better: B0 keeps the most patience
    marks = {r[0]: t.cells[(r, col)].mark for r in t.rows}
    assert marks["B0"] == "best" and marks["A0"] == "second"
    md = to_markdown(t)
    assert "**" in md and "<u>" in md
    tex = to_latex(t)
    assert r"\textbf{" in tex and r"\underline{" in tex and r"$\pm$" in tex
    assert "—" in md and "--" in tex  # B0's Aim is undefined, never 0


def test_no_mark_below_five_episodes() -> None:
    small = build_table(
        _frame(n_per_cell=2),
        key="t",
        title="t",
        row_keys=("method",),
        group_keys=("benchmark",),
        metrics=("Success",),
    )
    assert MIN_MARK_N == 5
    assert all(c.mark == "" for c in small.cells.values())


def test_fig10_is_mean_and_sd_over_seeds() -> None:
    """Ruling: Fig. 10 plots per-seed means (mean ± sd over seeds), not a pooled median."""
    f = _frame()
    f["reaction"] = np.where(f["success"] > 0, 2.0 + f["seed"] * 2.0, np.nan)
    f = pd.concat([f, f.assign(k=2, reaction=f["reaction"] + 1.0)], ignore_index=True)
    out = fault_complexity(f)
    row = out[(out.benchmark == "webshop") & (out.method == "A0") & (out.k == 1)]
    react = row[row.metric == "Reaction"].iloc[0]
    assert react["value"] == pytest.approx(3.0)  # seeds 0 and 1: means 2 and 4
    assert react["sd"] == pytest.approx(np.std([2.0, 4.0], ddof=1))
    assert int(react["n_seeds"]) == 2
    assert set(out["k"]) == {1, 2}
    # issue 30's error bars: the sd over seeds, named
    assert react["err_kind"] == "sd over seeds"
    assert react["err_minus"] == react["err_plus"] == pytest.approx(react["sd"])
