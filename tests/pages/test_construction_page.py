"""Construction explorer page (AppTest): empty store and the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT

PAGE = str(PROJECT_ROOT / "pages" / "construction.py")


def open_page(home: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    return AppTest.from_file(PAGE, default_timeout=60).run()


def frame_with(at: AppTest, column: str):  # type: ignore[no-untyped-def]
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with a {column!r} column")


def test_construction_page_on_an_empty_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_page(tmp_path, monkeypatch)
    assert not at.exception
    assert at.title[0].value == "Construction explorer"
    assert any("no intent graphs or samples" in i.value for i in at.info)
    # the committed build statistics still show, with zero stored rows
    overview = frame_with(at, "rejection rate")
    assert set(overview["benchmark"]) == {"webshop", "tau2_retail", "tau2_airline"}
    assert set(overview["samples in store"]) == {0}


def test_construction_page_on_the_demo_store(
    research_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_page(research_home, monkeypatch)
    assert not at.exception
    overview = frame_with(at, "rejection rate")
    assert (overview["samples in store"] > 0).all()
    assert set(at.selectbox(key="con-benchmark").options) == {
        "webshop",
        "tau2_retail",
        "tau2_airline",
    }
    at.selectbox(key="con-benchmark").select("tau2_retail").run()
    graphs = frame_with(at, "substitute")
    assert (
        len(graphs) > 0
        and (
            graphs["edges"] == graphs[["refine", "relax", "substitute", "pivot"]].sum(axis=1)
        ).all()
    )
    nodes = frame_with(at, "gt_size")
    assert list(nodes["role"]).count("root") == 1
    edges = frame_with(at, "gt_moved")
    assert set(edges["operator"]) <= {"refine", "relax", "substitute", "pivot"}


def test_samples_by_fault_type_show_query_mask_and_readings(
    research_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_page(research_home, monkeypatch)
    at.selectbox(key="con-benchmark").select("tau2_retail").run()
    options = at.selectbox(key="con-fault").options
    assert any(o.startswith("tool_capability_mismatch (") for o in options)
    at.selectbox(key="con-fault").select("tool_capability_mismatch").run()
    assert not at.exception
    samples = frame_with(at, "fault_types")
    assert len(samples) > 0
    assert all("tool_capability_mismatch" in t.split(",") for t in samples["fault_types"])
    chosen = at.selectbox(key="con-sample").value
    query = samples.set_index("sample_id").at[chosen, "query"]
    assert query in [t.value for t in at.text]  # shown inert, verbatim
    mask = frame_with(at, "stated value")
    assert mask["hidden"].any()  # researchers see the hidden slots
    assert any("passed" in str(j.value) for j in at.json)
    assert any("No literal reading" in c.value for c in at.caption)  # not executable as said
    at.selectbox(key="con-fault").select("factual_error").run()
    literal = frame_with(at, "reading")
    assert len(literal) > 0
    at.selectbox(key="con-k").select(2).run()
    assert set(frame_with(at, "fault_types")["k"]) <= {2}


def test_rejection_tab(research_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(research_home, monkeypatch)
    types = frame_with(at, "admitted")
    assert (types["rejected"] <= types["candidates"]).all()
    reasons = frame_with(at, "reason")
    assert len(reasons) > 0
