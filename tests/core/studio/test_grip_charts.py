"""GRIP charts people can read: ranks and n in every heatmap cell, error bars on every mean."""

from __future__ import annotations

import random
import re

import numpy as np
import pandas as pd
import pytest

from core.grip.intervals import CI_OVER_EPISODES, SD_OVER_SEEDS, bootstrap_interval, with_errors
from core.grip.metrics import aggregate
from core.studio import dashboards as d
from tests.core.studio.test_dashboards import frame_of

PERSONAS = ("rational", "dependent", "avoidant", "intuitive", "spontaneous")


def sweep(seeds: tuple[int, ...] = (0,), n_samples: int = 3) -> pd.DataFrame:
    """A synthetic sweep: 2 benchmarks × 4 methods × 5 personas × samples × seeds."""
    rng = random.Random(11)
    rows = []
    i = 0
    for bench in ("webshop", "tau2_retail"):
        for method in ("B0", "A0", "A2", "A3"):
            for persona in PERSONAS:
                for s in range(n_samples):
                    for seed in seeds:
                        i += 1
                        ok = rng.random() < 0.5
                        asked = method != "B0"
                        rows.append(
                            {
                                "episode_id": f"ep-{i:04d}",
                                "sample_id": f"{bench}-{s}",
                                "benchmark": bench,
                                "method": method,
                                "persona": persona,
                                "seed": seed,
                                "k": 1 + s % 3,
                                "shifts_on": bool(s % 2),
                                "outcome": "SUCCESS" if ok else "EXHAUSTED",
                                "bucket": "EARNED" if ok else "INCOMPLETE",
                                "success": float(ok),
                                "score": rng.random() if bench == "webshop" else None,
                                "earned": float(ok),
                                "inferred": float(rng.random() < 0.2),
                                "aim": rng.random() if asked else None,
                                "recovery": float(rng.random() < 0.5),
                                "patience": rng.uniform(0, 8),
                                "staleness": float(rng.random() < 0.3),
                                "reaction": float(rng.randint(1, 6)) if ok else None,
                                "postshift": float(rng.random() < 0.5),
                            }
                        )
    return frame_of(rows)


def test_every_heatmap_cell_carries_its_rank_and_n() -> None:
    frame = sweep()
    heat = d.heatmap_cells(frame)
    fig = d.heatmap_figure(heat)
    points = {}
    for trace in fig.data:
        for cd, text in zip(trace.customdata, trace.text, strict=True):
            points[(cd[0], cd[1], cd[2])] = (text, int(cd[3]))
    assert len(points) == len(heat)  # one point per cell, nothing dropped
    for row in heat.to_dict("records"):
        text, n = points[(row["benchmark"], row["metric"], row["persona"])]
        assert n == row["n"]
        assert text.endswith(f"n={row['n']}")
        if pd.notna(row["rank"]):
            assert f"<b>{row['rank']:g}</b>" in text  # the rank number is in the cell
        else:
            assert text.startswith(("tie", d.UNDEFINED))
    # faceted by benchmark, horizontal metric names, a legend that says 1 = best
    assert {a.text for a in fig.layout.annotations} >= {"webshop", "tau2_retail"}
    axes = [fig.layout[k] for k in fig.layout if k.startswith("xaxis")]
    assert len(axes) == 2 and all(ax.tickangle == 0 for ax in axes)
    bars = [t.marker.colorbar.title.text for t in fig.data if t.marker.showscale]
    assert bars and "1 = best" in bars[0]


def test_heatmap_n_is_the_cells_denominator() -> None:
    frame = sweep()
    heat = d.heatmap_cells(frame).set_index(["benchmark", "metric", "persona"])
    aim = frame[(frame["benchmark"] == "webshop") & (frame["persona"] == "avoidant")]
    assert heat.at[("webshop", "Aim", "avoidant"), "n"] == aim["aim"].notna().sum()
    assert heat.at[("webshop", "Identification", "avoidant"), "n"] == 0  # nothing judged


@pytest.mark.parametrize("seeds", [(0,), (0, 1)])
def test_every_chart_of_means_carries_error_bars(seeds: tuple[int, ...]) -> None:
    frame = sweep(seeds)
    for name in d.FIGURES:
        df = d.figure_frame(name, frame)
        fig = d.grip_figure(name, df, metric="Success")
        traces = [t for t in fig.data if t.type in ("bar", "scatter")]
        assert traces, name
        for t in traces:
            err = t.error_y
            assert err is not None and err.array is not None, (name, t.name)
            shown = np.isfinite(np.asarray(t.y, dtype=float))  # a drawn bar or point
            plus = np.asarray(err.array, dtype=float)
            minus = np.asarray(
                err.arrayminus if err.arrayminus is not None else err.array, dtype=float
            )
            assert np.isfinite(plus[shown]).all(), (name, t.name)  # every mean has its bar
            assert (plus[shown] >= 0).all() and (minus[shown] >= 0).all()
        assert "error bars" in fig.layout.title.text, name
    kind = SD_OVER_SEEDS if len(seeds) > 1 else CI_OVER_EPISODES
    fig = d.grip_figure("persona_fans", d.figure_frame("persona_fans", frame), metric="Aim")
    assert kind in fig.layout.title.text


def test_intervals_are_order_free_and_contain_the_mean() -> None:
    frame = sweep()
    keys = ("benchmark", "method")
    cells = aggregate(frame, by=keys)
    a = with_errors(cells, frame, keys)
    b = with_errors(cells, frame.sample(frac=1.0, random_state=3), keys)
    pd.testing.assert_frame_equal(a, b)
    shown = a[a["value"].notna() & a["err_minus"].notna()]
    assert (shown["err_minus"] >= 0).all() and (shown["err_plus"] >= 0).all()
    lo, hi = bootstrap_interval(np.array([0.0, 1.0, 1.0, 0.0]), ("k",))
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    assert bootstrap_interval(np.array([np.nan]), ("k",)) != bootstrap_interval(
        np.array([1.0]), ("k",)
    )


def test_second_best_is_underlined_in_the_grid() -> None:
    frame = sweep()
    t = d.table2(frame, ("benchmark", "method"), metrics=("Success", "Patience"), min_n=1)
    assert t.second is not None
    html = d.grid_styler(t).to_html()
    for m_i in range(len(t.metrics)):
        for i in range(len(t.display)):
            assert not (t.best.iat[i, m_i] and t.second.iat[i, m_i])
    assert t.second.to_numpy().any() and "text-decoration: underline" in html
    assert "**" not in html and not re.search(r"tau2\\\\_retail", html)


def test_studio_fig10_draws_the_papers_mean_over_seeds() -> None:
    """Fig. 10 in the studio is ``core.grip.paper.fault_complexity`` (mean ± sd over seeds, the
    frame ``driftbench reproduce`` draws), not a pooled median."""
    from core.grip.paper import fault_complexity

    frame = sweep(seeds=(0, 1, 2))
    # skew one cell so a pooled median and the mean of per-seed means disagree
    cell = (frame["benchmark"] == "webshop") & (frame["method"] == "A0") & (frame["k"] == 1)
    frame.loc[cell, "reaction"] = np.where(frame.loc[cell, "seed"] == 0, 9.0, 1.0)
    frame.loc[cell, "success"] = 1.0
    df = d.figure_frame("fault_complexity", frame)
    expected = fault_complexity(frame)
    pd.testing.assert_frame_equal(df, expected)
    react = expected[
        (expected.benchmark == "webshop")
        & (expected.method == "A0")
        & (expected.k == 1)
        & (expected.metric == "Reaction")
    ].iloc[0]
    pooled_median = float(frame.loc[cell, "reaction"].median())
    assert react["value"] == pytest.approx((9.0 + 1.0 + 1.0) / 3) != pooled_median
    assert react["err_kind"] == SD_OVER_SEEDS
    assert react["err_plus"] == pytest.approx(np.std([9.0, 1.0, 1.0], ddof=1))
    fig = d.grip_figure("fault_complexity", df)
    assert SD_OVER_SEEDS in fig.layout.title.text
    drawn: dict[tuple[str, str, str, int], tuple[float, float]] = {}
    for t in fig.data:
        facet = dict(part.split("=", 1) for part in t.hovertemplate.split("<br>")[:3])
        for x, y, e in zip(t.x, t.y, t.error_y.array, strict=True):
            drawn[(facet["method"], facet["benchmark"], facet["metric"], int(x))] = (y, e)
    shown = expected[expected["value"].notna()]
    assert len(drawn) == len(expected) and not shown.empty
    for r in shown.to_dict("records"):
        scale = 100.0 if r["metric"] == "Success" else 1.0
        y, e = drawn[(r["method"], r["benchmark"], r["metric"], int(r["k"]))]
        assert y == pytest.approx(r["value"] * scale)
        assert e == pytest.approx(r["err_plus"] * scale)
