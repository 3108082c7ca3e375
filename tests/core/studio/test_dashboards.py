"""GRIP dashboard read models: grid, best-in-bold, undefined as "—", heatmap drill-down, memo."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from core.grip import EpisodeRecord, records_frame
from core.grip.record import GRIP_VERSION
from core.model.run import RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store
from core.studio import dashboards as d


def rec(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "episode_id": "ep",
        "run_id": "run-x",
        "sample_id": "s1",
        "benchmark": "webshop",
        "method": "A0",
        "persona": "rational",
        "backbone": "symbolic",
        "user_voice": "template",
        "seed": 0,
        "k": 1,
        "shifts_on": True,
        "outcome": "SUCCESS",
        "scored": True,
        "readable": True,
        "bucket": "EARNED",
        "hidden_target": True,
    }
    base.update(kw)
    return base


def frame_of(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return records_frame([EpisodeRecord(**rec(**r)) for r in rows])


@pytest.fixture
def small() -> pd.DataFrame:
    rows = []
    i = 0
    # A0: success 1 on seed 0, 0 on seed 1 -> 50 ± 70.71; staleness 0.5 / 0.5
    # B0: success 0 on both seeds; staleness 1.0; aim undefined (never asks)
    for method, succ, stale, aim in (
        ("A0", (1.0, 0.0), (0.5, 0.5), 1.0),
        ("B0", (0.0, 0.0), (1.0, 1.0), None),
    ):
        for seed in (0, 1):
            for persona in ("rational", "avoidant"):
                i += 1
                rows.append(
                    {
                        "episode_id": f"ep-{i:03d}",
                        "sample_id": f"s{persona}",
                        "method": method,
                        "persona": persona,
                        "seed": seed,
                        "success": succ[seed],
                        "earned": succ[seed],
                        "inferred": 0.0,
                        "recovery": succ[seed],
                        "patience": 4.0 if method == "A0" else 2.0,
                        "staleness": stale[seed],
                        "aim": aim,
                    }
                )
    return frame_of(rows)


def test_fmt_scales_and_never_zero_for_undefined() -> None:
    assert d.fmt("Success", 0.5, 0.1) == "50.00 ± 10.00"
    assert d.fmt("Patience", 3.25) == "3.25"
    assert d.fmt("Reaction", 2.0, None) == "2.00"
    assert d.fmt("Success", None) == d.UNDEFINED == "—"
    assert d.fmt("Aim", float("nan")) == "—"
    assert d.fmt("Success", 0.0) == "0.00"


def test_table2_mean_sd_over_seeds_and_best_bold(small: pd.DataFrame) -> None:
    t = d.table2(small, ("benchmark", "method"), min_n=1)
    disp = t.display.set_index("method")
    assert list(t.display["method"]) == ["B0", "A0"]  # ladder order, not alphabetical
    # per-seed means 1.0 and 0.0 -> 50 ± 70.71; best of the block -> bold
    assert disp.at["A0", "Success"] == f"**50.00 ± {math.sqrt(0.5) * 100:.2f}**"
    assert disp.at["B0", "Success"] == "0.00 ± 0.00"
    # lower is better for Staleness: B0 has 1.0, A0 0.5 -> A0 bold
    assert disp.at["A0", "Staleness"].startswith("**50.00")
    assert not disp.at["B0", "Staleness"].startswith("**")
    # undefined stays "—" and is never bold; Aim defined only for A0 -> no bold (single value)
    assert disp.at["B0", "Aim"] == "—"
    assert disp.at["A0", "Aim"] == "100.00 ± 0.00"
    # Identification needs judges: none ran, and the cell says so instead of "—"
    assert set(disp["Identification"]) == {d.NEEDS_JUDGES}
    # Inferred ties at 0 everywhere: no bold at all
    assert not any(v.startswith("**") for v in disp["Inferred"])
    assert t.best.shape == (2, len(t.metrics))


def test_table2_best_is_per_benchmark_block() -> None:
    f = frame_of(
        [
            {"episode_id": "1", "benchmark": "webshop", "method": "A0", "success": 0.2},
            {"episode_id": "2", "benchmark": "webshop", "method": "B0", "success": 0.1},
            {"episode_id": "3", "benchmark": "tau2_retail", "method": "A0", "success": 0.0},
            {"episode_id": "4", "benchmark": "tau2_retail", "method": "B0", "success": 0.9},
        ]
    )
    t = d.table2(f, ("benchmark", "method"), metrics=("Success",), min_n=1)
    bold = {
        (b.replace("\\", ""), m): v.startswith("**")
        for b, m, v in t.display[["benchmark", "method", "Success"]].itertuples(index=False)
    }
    assert bold == {
        ("tau2_retail", "B0"): True,
        ("tau2_retail", "A0"): False,
        ("webshop", "A0"): True,
        ("webshop", "B0"): False,
    }


def test_table2_empty_frame() -> None:
    t = d.table2(frame_of([{"episode_id": "x"}]).iloc[0:0], ("benchmark", "method"))
    assert t.display.empty
    assert list(t.display.columns)[:2] == ["benchmark", "method"]


def test_md_escape_makes_stored_text_inert() -> None:
    assert d.md_escape("a*b_[x](y)") == "a\\*b\\_\\[x\\]\\(y\\)"
    assert d.md_escape("<script>") == "\\<script\\>"


def test_filters_and_facets(small: pd.DataFrame) -> None:
    f = d.facets(small)
    assert f["method"] == ["A0", "B0"]
    assert f["persona"] == ["avoidant", "rational"]
    sub = d.filter_frame(small, {"method": ["B0"], "persona": []})
    assert set(sub["method"]) == {"B0"} and len(sub) == 4
    assert len(d.filter_frame(small, {})) == len(small)
    with pytest.raises(KeyError):
        d.filter_frame(small, {"outcome": ["SUCCESS"]})


def test_heatmap_cells_rank_text_and_denominators(small: pd.DataFrame) -> None:
    heat = d.heatmap_cells(small)
    assert set(heat["metric"]) == set(d.HEATMAP_METRICS)
    aim = heat[heat["metric"] == "Aim"].set_index("persona")
    # Aim is defined only for the A0 episodes (2 per persona)
    assert aim.at["rational", "n"] == 2
    assert aim.at["rational", "text"] == "100.00"
    ident = heat[heat["metric"] == "Identification"]
    assert set(ident["text"]) == {"—"} and ident["rank"].isna().all()
    assert set(heat["column"]) >= {"webshop · Success", "webshop · Aim"}


def test_cell_from_point_and_selection(small: pd.DataFrame) -> None:
    heat = d.heatmap_cells(small)
    by_cd = d.cell_from_point({"customdata": ["webshop", "Aim", "avoidant", 2]}, heat)
    assert by_cd == d.Cell(benchmark="webshop", metric="Aim", persona="avoidant")
    by_xy = d.cell_from_point({"x": "webshop · Success", "y": "rational"}, heat)
    assert by_xy == d.Cell(benchmark="webshop", metric="Success", persona="rational")
    assert d.cell_from_point({"x": "nope", "y": "rational"}, heat) is None
    event = {"selection": {"points": [{"x": "webshop · Patience", "y": "avoidant"}]}}
    assert d.selected_cell(event, heat) == d.Cell(
        benchmark="webshop", metric="Patience", persona="avoidant"
    )
    assert d.selected_cell({"selection": {"points": []}}, heat) is None
    assert d.selected_cell(None, heat) is None


def test_cell_episodes_lists_the_denominator_with_inspect_links(small: pd.DataFrame) -> None:
    cell = d.Cell(benchmark="webshop", metric="Aim", persona="rational")
    eps = d.cell_episodes(small, cell)
    assert list(eps.columns) == list(d.EPISODE_COLUMNS)
    assert set(eps["method"]) == {"A0"}  # B0 never asked: not in Aim's denominator
    assert len(eps) == 2
    assert list(eps["inspect"]) == [f"inspect?episode={e}" for e in eps["episode_id"]]
    succ = d.cell_episodes(small, cell.model_copy(update={"metric": "Success"}))
    assert len(succ) == 4 and set(succ["value"]) == {"100.00", "0.00"}


def test_delta_table_formats_paired_intervals(small: pd.DataFrame) -> None:
    t = d.delta_table(small, "B0", "A0", metrics=("Success", "Patience", "Aim"), n_boot=200)
    rows = t.set_index("metric")
    assert rows.at["Success", "pairs"] == 4
    assert rows.at["Success", "Δ"] == "+50.00"
    assert rows.at["Patience", "Δ"] == "+2.00"  # budget units, not ×100
    assert rows.at["Patience", "95% CI"] == "[+2.00, +2.00]"
    assert "Aim" not in rows.index  # no pair where both sides are defined
    none = d.delta_table(small, "B0", "A3")
    assert none.empty


def test_report_downloads_null_and_empty_never_zero(small: pd.DataFrame) -> None:
    js, csv_text = d.report_downloads(small, ["run-x"], ("benchmark", "method"))
    payload = json.loads(js)
    assert payload["grip_version"] == GRIP_VERSION
    b0 = next(c for c in payload["cells"] if c["method"] == "B0")
    assert b0["metrics"]["Aim"]["value"] is None
    assert b0["metrics"]["Success"]["value"] == 0.0
    header, *lines = csv_text.strip().splitlines()
    cols = header.split(",")
    b0_row = next(line.split(",") for line in lines if ",B0," in line)
    assert b0_row[cols.index("Aim")] == ""


def test_figure_frame_by_name(small: pd.DataFrame) -> None:
    ebi = d.figure_frame("earned_vs_inferred", small)
    assert set(ebi["component"]) == {"Earned", "Inferred"}
    assert d.figure_frame("persona_fans", small.iloc[0:0]).empty
    with pytest.raises(KeyError):
        d.figure_frame("nope", small)


# -- against a real store ------------------------------------------------------------------
@pytest.fixture
def two_runs(store: Store) -> Store:
    for name, methods in (("first", ("B0", "A0")), ("second", ("A1",))):
        spec = RunSpec(
            name=name,
            benchmarks=("mock",),
            methods=methods,
            personas=("rational", "avoidant"),
            seeds=(0, 1),
            limit=2,
        )
        run_sweep(store, spec, RunOptions(workers=1, progress=False))
    return store


def test_run_options_and_load_frame_memo(two_runs: Store) -> None:
    opts = d.run_options(two_runs)
    assert {o.name for o in opts} == {"first", "second"}
    assert all(o.symbolic and o.agent == "symbolic" for o in opts)
    assert "first" in next(o for o in opts if o.name == "first").label()
    d.frame_memo(two_runs).clear()
    f1 = d.load_frame(two_runs, ["first"])
    assert set(f1["method"]) == {"B0", "A0"}
    assert d.load_frame(two_runs, ["first"]) is f1  # warm: served from the memo
    f2 = d.load_frame(two_runs, ["second"])
    assert set(f2["method"]) == {"A1"}
    both = d.load_frame(two_runs, ["first", "second"])
    assert len(both) == len(f1) + len(f2)
    assert d.load_frame(two_runs, []).empty


def test_load_frame_recomputes_when_an_episode_ends(two_runs: Store) -> None:
    d.frame_memo(two_runs).clear()
    run_id = str(two_runs.get_run("second")["run_id"])
    # one episode of the run still in play
    eid = two_runs.conn.execute(
        "SELECT episode_id FROM episodes WHERE run_id=? ORDER BY episode_id LIMIT 1", (run_id,)
    ).fetchone()[0]
    with two_runs.transaction() as conn:
        conn.execute("UPDATE episodes SET status='running' WHERE episode_id=?", (eid,))
    f1 = d.load_frame(two_runs, ["second"])
    assert eid not in set(f1["episode_id"])
    more = RunSpec(
        name="second-more",
        benchmarks=("mock",),
        methods=("A1",),
        personas=("rational", "avoidant"),
        seeds=(0, 1, 2),
        limit=2,
    )
    run_sweep(two_runs, more, RunOptions(workers=1, progress=False))
    assert d.load_frame(two_runs, ["second"]) is f1  # other runs do not invalidate it
    fp = d.fingerprint(two_runs, [run_id])
    two_runs.finish(eid, "SUCCESS", {})
    assert d.fingerprint(two_runs, [run_id]) != fp
    f2 = d.load_frame(two_runs, ["second"])
    assert f2 is not f1 and eid in set(f2["episode_id"]) and len(f2) == len(f1) + 1


@pytest.mark.slow
def test_with_realism_heuristic_fills_identification_once(two_runs: Store) -> None:
    f = d.load_frame(two_runs, ["first"], memo=False)
    same, pairs = d.with_realism(two_runs, f, None)
    assert same is f and pairs is None
    judged, _ = d.with_realism(two_runs, f, "heuristic")
    assert "identification" in judged.columns
    again, _ = d.with_realism(two_runs, f, "heuristic")
    assert again is judged  # memoised: filters and reruns never re-fit the judge


def test_is_symbolic() -> None:
    assert d.is_symbolic("symbolic") and d.is_symbolic(" Heuristic ")
    assert not d.is_symbolic("openai/gpt-4o-mini")


def test_empty_store_has_no_runs(tmp_path: Path) -> None:
    s = Store.open(tmp_path / "e.db")
    assert d.run_options(s) == []


# -- construction explorer ---------------------------------------------------------------
@pytest.fixture
def retail(store: Store) -> Store:
    from core.construction.pipeline import load_bundled

    graphs, samples = load_bundled("tau2_retail")
    store.put_graphs_and_samples(graphs, samples, source="bundled")
    return store


def test_graph_index_counts_edges_by_operator(retail: Store) -> None:
    from core.model.intent import IntentGraph
    from core.studio.dashboards import construction_explorer as c

    assert c.benchmarks(retail) == ["tau2_retail"]
    idx = c.graph_index(retail, "tau2_retail")
    assert len(idx) == retail.counts()["graphs"]
    row = idx.iloc[0]
    g = IntentGraph.model_validate_json(retail.graph_json(row["graph_id"]))
    assert row["children"] == len(g.children)
    assert row["edges"] == len(g.edges)
    for op in c.OPERATORS:
        assert row[op] == sum(e.operator.value == op for e in g.edges)
    assert row["moved"] == sum(e.gt_moved for e in g.edges)
    detail = c.graph_detail(retail, row["graph_id"])
    assert list(detail["nodes"]["role"]).count("root") == 1
    assert len(detail["nodes"]) == 1 + len(g.children)
    assert set(detail["edges"]["operator"]) <= set(c.OPERATORS)
    root = detail["nodes"].iloc[0]
    assert root["gt_size"] == (g.root.ground_truth.cardinality if g.root.ground_truth else None)


def test_samples_by_fault_and_sample_detail_show_the_mask(retail: Store) -> None:
    from core.studio.dashboards import construction_explorer as c

    counts = c.fault_type_counts(retail, "tau2_retail")
    assert sum(counts.values()) >= retail.counts()["samples"]
    ftype = max(counts, key=lambda t: counts[t])
    rows = c.samples_by_fault(retail, "tau2_retail", ftype)
    assert len(rows) == counts[ftype]
    assert all(ftype in str(t).split(",") for t in rows["fault_types"])
    assert rows["query"].map(len).min() > 0
    singles = c.samples_by_fault(retail, "tau2_retail", None, k=1)
    assert set(singles["k"]) == {1}
    info = c.sample_detail(retail, rows["sample_id"][0])
    sample = info["sample"]
    assert info["mask"]["slot"].tolist() == [m.slot for m in sample.mask]
    hidden = set(info["mask"][info["mask"]["hidden"]]["slot"])
    assert hidden == set(sample.hidden_slots) & {m.slot for m in sample.mask}
    assert len(info["literal"]) == sum(len(r) for r in sample.literal_readings)
    assert info["verifier"]["passed"] is True


def test_overview_and_rejections_from_stats(retail: Store, tmp_path: Path) -> None:
    from core.studio.dashboards import construction_explorer as c

    d_ = tmp_path / "stats" / "tau2_retail"
    d_.mkdir(parents=True)
    stats = {
        "graphs": {"tasks": 3, "graphs": 2, "by_operator": {"pivot": 1}},
        "samples": {
            "k1": {
                "candidates": 10,
                "samples": 6,
                "rejected_by_step": {"1": 1, "2": 1, "3": 2},
                "by_fault_type": {"factual_error": 4, "vagueness_subjectivity": 2},
                "candidates_by_fault_type": {"factual_error": 5, "vagueness_subjectivity": 5},
                "rejected_by_fault_type": {"factual_error": 1, "vagueness_subjectivity": 3},
                "rejection_reasons": {"3:vagueness_subjectivity:did not widen": 2},
            },
            "k2": {
                "candidates": 4,
                "samples": 2,
                "rejected_by_step": {"1": 2},
                "by_fault_type": {"factual_error+vagueness_subjectivity": 2},
                "candidates_by_fault_type": {"factual_error+vagueness_subjectivity": 4},
                "rejected_by_fault_type": {"factual_error+vagueness_subjectivity": 2},
            },
        },
    }
    (d_ / "stats.json").write_text(json.dumps(stats))
    ov = c.overview(retail, tmp_path / "stats").set_index("benchmark")
    assert ov.at["tau2_retail", "candidates"] == 14
    assert ov.at["tau2_retail", "rejected step 1"] == 3
    assert ov.at["tau2_retail", "samples"] == 8
    assert ov.at["tau2_retail", "samples in store"] == retail.counts()["samples"]
    rej = c.rejections("tau2_retail", tmp_path / "stats")
    assert rej["by_step"]["rejected"].sum() == 6
    types = rej["by_fault_type"].set_index("fault type")
    # the k2 composite counts once for each type it carries
    assert types.at["factual_error", "candidates"] == 9
    assert types.at["vagueness_subjectivity", "rejected"] == 5
    assert types.at["factual_error", "rejection rate"] == round(3 / 9, 4)
    assert rej["reasons"].iloc[0]["reason"] == "did not widen"
    assert c.rejections("webshop", tmp_path / "stats")["by_step"].empty


def test_inspect_links_quote_stored_ids() -> None:
    assert d.inspect_link("ep-00ff") == "inspect?episode=ep-00ff"
    assert d.inspect_link("x)](javascript:alert(1)") == (
        "inspect?episode=x%29%5D%28javascript%3Aalert%281%29"
    )


def test_cell_episodes_limit_keeps_order_and_size_counts_all(small: pd.DataFrame) -> None:
    cell = d.Cell(benchmark="webshop", metric="Success", persona="rational")
    full = d.cell_episodes(small, cell)
    top = d.cell_episodes(small, cell, limit=3)
    assert list(top["episode_id"]) == list(full["episode_id"][:3])
    assert d.cell_size(small, cell) == len(full) == 4
    assert d.cell_size(small, cell.model_copy(update={"metric": "Aim"})) == 2
