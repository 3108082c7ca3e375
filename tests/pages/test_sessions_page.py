"""Sessions page: import (server path, all-or-nothing vs partial), synthetic demo, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store
from core.studies.sessions import session_rows, write_sessions_jsonl

PAGE = str(PROJECT_ROOT / "pages" / "sessions.py")


@pytest.fixture
def home(empty_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DRIFTBENCH_IMPORT_ROOTS", str(empty_home))
    return empty_home


def _store(home: Path) -> Store:
    return Store.open(home / "driftbench.db")


def test_sessions_empty_store(home: Path) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert any("No sessions imported yet" in i.value for i in at.info)
    assert at.button(key="ses-demo-go")


def test_sessions_demo_file_and_heuristic_report(home: Path) -> None:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.number_input(key="ses-demo-n").set_value(40)
    at.button(key="ses-demo-go").click().run()
    assert not at.exception
    assert any("Imported 40 session(s)" in s.value for s in at.success)
    assert (home / "uploads" / "synthetic_sessions_n40_s0.jsonl").exists()
    assert len(session_rows(_store(home))) == 40
    at.button(key="ses-run").click().run()
    assert not at.exception
    assert any("offline approximation" in w.value for w in at.warning)
    counts = {m.label: m.value for m in at.metric}
    assert sum(int(counts[k]) for k in ("Misaligned", "Clean", "Contested", "Unjudged")) == 40
    assert int(counts["Misaligned"]) > 0 and int(counts["Clean"]) > 0
    charts = at.get("plotly_chart")
    assert len(charts) == 4  # Figure 7 boxes, fault types, shift types, fault families
    fig7 = json.loads(charts[0].proto.spec)
    assert {t["name"] for t in fig7["data"]} == {"misaligned", "matched clean"}
    comparison = next(d.value for d in at.dataframe if "95% CI" in d.value.columns)
    assert list(comparison["measure"]) == ["Platform score", "Tool calls per session"]
    listing = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert set(listing["verdict"]) <= {"misaligned", "clean", "contested", "unjudged"}


def _bad_file(path: Path) -> Path:
    good = write_sessions_jsonl(path.with_suffix(".good"), 3, seed=1).read_text().splitlines()
    lines = [*good, '{"session_id": "x", "mesages": []}', "not json"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sessions_import_all_or_nothing_then_partial(home: Path) -> None:
    bad = _bad_file(home / "bad.jsonl")
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.text_input(key="ses-path").input(str(bad))
    at.button(key="ses-import-path").click().run()
    assert not at.exception
    assert any("2 malformed line(s): nothing imported" in e.value for e in at.error)
    errors = next(d.value for d in at.dataframe if "line" in d.value.columns)
    assert list(errors["line"]) == [4, 5]
    assert session_rows(_store(home)) == []
    at.checkbox(key="ses-partial").check()
    at.button(key="ses-import-path").click().run()
    assert any("Imported 3 session(s); 2 line(s) skipped" in w.value for w in at.warning)
    assert len(session_rows(_store(home))) == 3


def test_sessions_import_refuses_paths_outside_allowed_roots(home: Path) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.text_input(key="ses-path").input("/etc/passwd")
    at.button(key="ses-import-path").click().run()
    assert not at.exception
    assert any("outside the allowed import folders" in e.value for e in at.error)


def test_sessions_llm_mode_needs_two_specs(home: Path) -> None:
    write_sessions_jsonl(home / "s.jsonl", 6, seed=2)
    from core.studies.sessions import import_sessions

    import_sessions(_store(home), home / "s.jsonl")
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.radio(key="ses-judges").set_value("Two LLM judges").run()
    at.button(key="ses-run").click().run()
    assert any("Give two model specs" in w.value for w in at.warning)
    at.text_input(key="ses-llm-specs").input("only-one-model")
    at.button(key="ses-run").click().run()
    assert not at.exception
    assert any("expected 'heuristic' or two model specs" in e.value for e in at.error)


def test_sessions_human_study_report(home: Path) -> None:
    """Two annotators judge two sessions (one item through the Annotate page) → human report."""
    from core.studies import (
        add_annotator,
        annotator_queue,
        assign_study,
        create_study,
        label_item,
        list_labels,
    )
    from core.studies.sessions import import_sessions

    store = _store(home)
    write_sessions_jsonl(home / "s.jsonl", 2, seed=3)
    import_sessions(store, home / "s.jsonl")
    ids = [r["session_id"] for r in session_rows(store)]
    create_study(
        store,
        {
            "name": "prod-review",
            "sessions": ids,
            "label_kinds": ["fault_type", "shift_type", "intents"],
            "overlap": 2,
        },
    )
    for ann in ("ann1", "ann2"):
        add_annotator(store, ann)
    assign_study(store, "prod-review", ["ann1", "ann2"], overlap=2)

    annotate = AppTest.from_file(str(PROJECT_ROOT / "pages" / "annotate.py"), default_timeout=30)
    annotate.run()
    annotate.selectbox(key="ann-as").set_value("ann1").run()
    aid = annotator_queue(store, "prod-review", "ann1").items[0].assignment_id
    assert any("Session S" in c.value for c in annotate.caption)  # blind: no session id
    annotate.radio(key=f"ann-{aid}-fault_type").set_value("vagueness_subjectivity")
    annotate.radio(key=f"ann-{aid}-shift_type").set_value("pivot")
    annotate.number_input(key=f"ann-{aid}-shift_type-turn").set_value(2)
    annotate.text_area(key=f"ann-{aid}-intents").input("buy a gift\nbook a hotel")
    next(b for b in annotate.button if b.label.startswith("Save labels")).click()
    annotate.run()
    assert not annotate.exception
    assert annotate.subheader[0].value == "Item 2 of 2"
    stored = {(lb.label_kind, lb.turn): lb.value for lb in list_labels(store, annotator="ann1")}
    assert stored == {
        ("fault_type", None): "vagueness_subjectivity",
        ("shift_type", 2): "pivot",
        ("intents", None): ["buy a gift", "book a hotel"],
    }

    def finish(ann: str, fault: str, shift: str) -> None:
        for item in annotator_queue(store, "prod-review", ann).items:
            if item.status != "pending":
                continue
            label_item(store, item.assignment_id, "fault_type", fault)
            label_item(store, item.assignment_id, "shift_type", shift, turn=2)
            label_item(store, item.assignment_id, "intents", ["x"])

    finish("ann1", "vagueness_subjectivity", "pivot")
    finish("ann2", "vagueness_subjectivity", "pivot")
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.radio(key="ses-judges").set_value("Human study").run()
    at.selectbox(key="ses-study").set_value("prod-review")
    at.button(key="ses-run").click().run()
    assert not at.exception
    assert not any("offline approximation" in w.value for w in at.warning)
    assert any("human:ann1" in c.value and "human:ann2" in c.value for c in at.caption)
    counts = {m.label: m.value for m in at.metric}
    assert counts["Misaligned"] == "2" and counts["Clean"] == "0"
    assert any("No matched pairs" in c.value for c in at.caption)


def test_sessions_drill_down_shows_one_session(home: Path) -> None:
    store = _store(home)
    from core.studies.sessions import import_sessions

    import_sessions(store, write_sessions_jsonl(home / "s.jsonl", 6, 1))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    ids = [r["session_id"] for r in session_rows(store)]
    assert at.selectbox(key="ses-open").value == ids[0]
    at.selectbox(key="ses-open").select(ids[2]).run()
    assert not at.exception
    assert at.container(key="ses-drill") is not None
    labels = [m.label for m in at.metric]
    assert {"Tool calls", "Platform score", "Two-judge verdict"} <= set(labels)
    assert any("turn 1" in c.value for c in at.caption)  # the transcript of that session
