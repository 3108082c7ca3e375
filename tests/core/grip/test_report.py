"""Store round trip, seeds, reordering, null handling in JSON/CSV, the CLI, paired deltas."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cli import cmd_grip
from core.grip import (
    aggregate,
    build_report,
    episodes_for_cell,
    figure_frames,
    grip_frame,
    paired_deltas,
    persona_heatmap,
    records_frame,
    report_csv,
    score_episode,
)
from core.grip.record import GRIP_VERSION, RECORD_COLUMNS
from core.store import Store
from tests.core.grip.grip_archetypes import ARCHETYPES, POOLED
from tests.core.grip.grip_builders import EpisodeBuilder

SEEDS = (1, 2, 3)


def _put_run(store: Store, run_id: str) -> None:
    store.put_run(run_id, run_id, "{}", 0)


def _fill(store: Store, run_id: str = "r1") -> list[Any]:
    _put_run(store, run_id)
    recs = []
    for seed in SEEDS:
        for name, make in ARCHETYPES.items():
            b, _ = make(f"{run_id}-{name}-{seed}", seed=seed, run_id=run_id)
            b.store_into(store)
            recs.append(score_episode(b.header, b.events))
    return recs


def test_cached_columnar_path_equals_typed_path(store: Store) -> None:
    recs = _fill(store)
    frame = grip_frame(store, ["r1"])
    assert len(frame) == len(recs) == 3 * len(ARCHETYPES)
    want = records_frame(recs).sort_values("episode_id").reset_index(drop=True)
    got = frame.sort_values("episode_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(got[list(RECORD_COLUMNS)], want[list(RECORD_COLUMNS)])
    # cached: a second call computes nothing and returns the same frame
    again = grip_frame(store, ["r1"])
    pd.testing.assert_frame_equal(again, frame)
    n = store.conn.execute("SELECT count(*) FROM grip_cache").fetchone()[0]
    assert n == len(recs)


def test_three_seeds_mean_sd_and_pooled_denominators(store: Store) -> None:
    _fill(store)
    cells = aggregate(grip_frame(store, ["r1"]), by=("benchmark",))
    for row in cells.to_dict("records"):
        value, denom = POOLED[row["metric"]]
        assert row["denominator"] == 3 * denom
        if value is None:
            assert math.isnan(row["value"]) and row["n_seeds"] == 0
        else:
            assert math.isclose(row["value"], value)
            assert row["n_seeds"] == 3 and math.isclose(row["sd"], 0.0, abs_tol=1e-12)


def test_sample_sd_across_seeds() -> None:
    # seed 1: both silent successes; seed 2: one success one premature failure.
    recs = [
        score_episode(*_hb(ARCHETYPES["silent_success"]("a", seed=1))),
        score_episode(*_hb(ARCHETYPES["silent_success"]("b", seed=1))),
        score_episode(*_hb(ARCHETYPES["silent_success"]("c", seed=2))),
        score_episode(*_hb(ARCHETYPES["premature_failure"]("d", seed=2))),
    ]
    cells = aggregate(records_frame(recs), by=("method",))
    s = cells[cells.metric == "Success"].iloc[0]
    assert math.isclose(s["value"], 0.75)
    assert math.isclose(s["sd"], float(np.std([1.0, 0.5], ddof=1)))
    assert s["n_seeds"] == 2 and s["denominator"] == 4


def _hb(pair: Any) -> tuple[Any, Any]:
    b, _ = pair
    return b.header, b.events


@cache
def _pool() -> list[Any]:
    out = []
    for i, (name, make) in enumerate(sorted(ARCHETYPES.items())):
        for seed in (0, 1):
            for method in ("A0", "A3"):
                out.append(
                    score_episode(*_hb(make(f"{name}-{seed}-{method}", seed=seed, method=method)))
                )
        del i
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_metrics_unchanged_when_episodes_are_reordered(data: st.DataObject) -> None:
    pool = _pool()
    chosen = data.draw(st.lists(st.sampled_from(range(len(pool))), min_size=1, max_size=40))
    recs = [pool[i] for i in chosen]
    shuffled = data.draw(st.permutations(recs))
    a = aggregate(records_frame(recs), by=("benchmark", "method"))
    b = aggregate(records_frame(list(shuffled)), by=("benchmark", "method"))
    pd.testing.assert_frame_equal(a, b)
    da = paired_deltas(records_frame(recs), "A0", "A3", n_boot=200)
    db = paired_deltas(records_frame(list(shuffled)), "A0", "A3", n_boot=200)
    pd.testing.assert_frame_equal(da, db)


def test_report_json_and_csv_keep_undefined_null(store: Store) -> None:
    _fill(store)
    rep = build_report(store, ["r1"], by="benchmark,method,persona")
    data = json.loads(json.dumps(rep.to_json(), allow_nan=False))
    assert data["grip_version"] == GRIP_VERSION
    cells = {c["persona"]: c for c in data["cells"]}
    assert set(cells) == {"rational", "avoidant"}
    avoid = cells["avoidant"]["metrics"]
    # the avoidant cell holds only the exhausted-patience archetype: no success, no shift
    assert avoid["Success"] == {"value": 0.0, "sd": 0.0, "n_seeds": 3, "denominator": 3}
    for name in ("Staleness", "Reaction", "PostShift", "Identification", "Consistency"):
        assert avoid[name]["value"] is None and avoid[name]["sd"] is None, name
        assert avoid[name]["denominator"] == 0
    assert avoid["Reaction"]["median"] is None
    rows = list(csv.DictReader(io.StringIO(report_csv(rep))))
    row = next(r for r in rows if r["persona"] == "avoidant")
    assert row["Staleness"] == "" and row["Staleness_sd"] == "" and row["Staleness_n_seeds"] == "0"
    assert row["Success"] == "0.0"


def test_report_is_served_warm_from_cache(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(store)
    first = build_report(store, ["r1"])
    import core.grip.report as rmod

    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("recomputed")

    monkeypatch.setattr(rmod, "grip_frame", boom)
    assert build_report(store, ["r1"]).to_json() == first.to_json()
    # new episodes change the fingerprint: recomputed
    b, _ = ARCHETYPES["silent_success"]("r1-extra", seed=1, run_id="r1")
    b.store_into(store)
    with pytest.raises(AssertionError, match="recomputed"):
        build_report(store, ["r1"])


def _cli(store: Store, *argv: str, capsys: pytest.CaptureFixture[str]) -> str:
    parser = argparse.ArgumentParser(prog="driftbench")
    parser.add_argument("--store")
    sub = parser.add_subparsers(dest="command")
    cmd_grip.register(sub)
    args = parser.parse_args(["--store", str(store.path), *argv])
    assert args.handler(args) == 0
    return capsys.readouterr().out


def test_cli_formats(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    _fill(store)
    out = json.loads(
        _cli(
            store,
            "grip",
            "r1",
            "--by",
            "benchmark,method,persona",
            "--format",
            "json",
            capsys=capsys,
        )
    )
    assert out["grip_version"] == GRIP_VERSION
    cell = out["cells"][0]
    assert {"benchmark", "method", "persona", "metrics"} <= set(cell)
    assert set(cell["metrics"]["Success"]) >= {"value", "sd", "n_seeds", "denominator"}
    text = _cli(store, "grip", "r1", capsys=capsys)
    assert "—" in text and "Success" in text
    csv_text = _cli(store, "grip", "r1", "--format", "csv", capsys=capsys)
    assert csv_text.splitlines()[0].startswith("benchmark,method,persona,backbone,n_episodes")


def test_cli_unknown_run_and_bad_by(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    from core.errors import ConfigError, NotFoundError

    _fill(store)
    with pytest.raises(NotFoundError):
        _cli(store, "grip", "nope", capsys=capsys)
    with pytest.raises(ConfigError, match="--by"):
        _cli(store, "grip", "r1", "--by", "colour", capsys=capsys)


def test_paired_deltas_on_same_samples() -> None:
    recs = []
    for seed in (0, 1, 2):
        for persona in ("rational", "dependent"):
            a = EpisodeBuilder(f"a{seed}{persona}", method="A0", seed=seed, persona=persona)
            a.propose(True).end(__import__("core.model.episode").model.episode.Outcome.SUCCESS)
            b, _ = ARCHETYPES["earned_after_questions"](
                f"b{seed}{persona}", method="A3", seed=seed, persona=persona
            )
            recs += [score_episode(a.header, a.events), score_episode(b.header, b.events)]
    d = paired_deltas(records_frame(recs), "A0", "A3", metrics=("Recovery", "Success", "Aim"))
    rec = d[d.metric == "Recovery"].iloc[0]
    assert rec["n_pairs"] == 6 and rec["delta"] == 1.0
    assert rec["ci_low"] == 1.0 and rec["ci_high"] == 1.0
    assert d[d.metric == "Success"].iloc[0]["delta"] == 0.0
    assert d[d.metric == "Aim"].empty  # A0 never asked: Aim undefined on every pair


def test_bootstrap_interval_covers_the_mean_and_is_seeded() -> None:
    from core.grip import bootstrap_ci

    rng = np.random.default_rng(0)
    d = rng.normal(0.3, 1.0, size=200)
    lo, hi = bootstrap_ci(d, seed=7)
    assert lo < d.mean() < hi
    assert (lo, hi) == bootstrap_ci(d[::-1], seed=7)
    assert all(math.isnan(v) for v in bootstrap_ci(np.array([])))


def test_figure_frames_and_drilldown(store: Store) -> None:
    _fill(store)
    frame = grip_frame(store, ["r1"])
    figs = figure_frames(frame)
    assert set(figs) == {
        "success_by_backbone",
        "persona_fans",
        "a0_to_a3",
        "earned_vs_inferred",
        "fault_complexity",
        "patience_by_shifts",
        "persona_heatmap",
    }
    sb = figs["success_by_backbone"]
    assert set(sb["metric"]) == {"Success", "Score"} and set(sb["backbone"]) == {"symbolic"}
    ei = figs["earned_vs_inferred"]
    assert set(ei["component"]) == {"Earned", "Inferred"}
    rk = figs["fault_complexity"]
    react = rk[rk.metric == "Reaction"]
    assert list(react["value"]) == [1.0] and list(react["denominator"]) == [6]
    assert set(rk["metric"]) == {"Success", "Reaction"} and "err_plus" in rk.columns
    assert set(figs["patience_by_shifts"]["shifts"]) == {"on"}
    heat = persona_heatmap(frame, metrics=["Success", "Staleness"])
    succ = heat[heat.metric == "Success"].set_index("persona")
    assert succ.loc["rational", "rank"] == 1 and succ.loc["avoidant", "rank"] == 2
    cell = episodes_for_cell(frame, persona="avoidant", method="A0")
    assert len(cell) == 3 and set(cell["bucket"]) == {"INCOMPLETE"}


def test_parallel_scoring_equals_serial(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import core.grip.cache as cmod

    _fill(store)
    serial = grip_frame(store, ["r1"])
    with store.transaction() as conn:
        conn.execute("DELETE FROM grip_cache")
    monkeypatch.setattr(cmod, "PARALLEL_MIN", 1)
    assert cmod.compute_missing(store, ["r1"], workers=2) == len(serial)
    parallel = cmod.read_frame(store, ["r1"])
    pd.testing.assert_frame_equal(parallel, serial)
