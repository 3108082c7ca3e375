from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from core.cli._common import fail
from core.cli.cmd_studies import add_import_sessions, register
from core.errors import ConfigError, DriftBenchError
from core.studies import StudySpec, annotator_queue, assign_study, create_study, label_item
from core.studies.sessions import (
    LexiconJudge,
    SessionJudgment,
    StructureJudge,
    build_report,
    generate_sessions,
    get_judgments,
    get_session,
    import_sessions,
    judge_sessions,
    match_clean,
    run_sessions_report,
    session_rows,
    strict_verdict,
    write_sessions_jsonl,
)

GOOD = {
    "session_id": "s1",
    "messages": [
        {"role": "user", "content": "Cancel order W123 please."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_order", "arguments": {"id": 1}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ],
    "score": 0.9,
    "metadata": {"task": "retail"},
}


def main(argv: list[str]) -> int:
    """The CLI as the lead will wire it: ``register`` plus ``import sessions``."""
    import argparse

    parser = argparse.ArgumentParser(prog="driftbench")
    parser.add_argument("--store")
    sub = parser.add_subparsers(dest="command")
    register(sub)
    add_import_sessions(sub.add_parser("import").add_subparsers(dest="what"))
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except DriftBenchError as exc:
        return fail(str(exc))


def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "sessions.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _bad_file(tmp_path: Path) -> Path:
    second = dict(GOOD, session_id="s2")
    return _write(
        tmp_path,
        [
            json.dumps(GOOD),
            "{not json",
            "",
            json.dumps({"session_id": "s3", "messages": [{"role": "assistant", "content": "hi"}]}),
            json.dumps(dict(GOOD, extra=1)),
            json.dumps(second),
            json.dumps(GOOD),
            json.dumps({"session_id": "s4", "messages": [{"role": "robot", "content": "x"}]}),
            "[1, 2]",
        ],
    )


def test_import_reports_each_malformed_line_and_is_all_or_nothing(store, tmp_path) -> None:
    result = import_sessions(store, _bad_file(tmp_path))
    errs = {e.line: e.message for e in result.errors}
    assert sorted(errs) == [2, 4, 5, 7, 8, 9]  # line 3 is blank: skipped, not an error
    assert "invalid JSON" in errs[2]
    assert "user message" in errs[4]
    assert "unknown field" in errs[5] and "metadata" in errs[5]
    assert "duplicate session_id 's1' (first on line 1)" in errs[7]
    assert "messages.0.role" in errs[8]
    assert "JSON object" in errs[9]
    assert result.valid == 2 and result.imported == 0 and not result.ok
    assert session_rows(store) == []


def test_partial_import_keeps_the_valid_lines(store, tmp_path) -> None:
    result = import_sessions(store, _bad_file(tmp_path), partial=True)
    assert result.ok and result.imported == 2 and len(result.errors) == 6
    rows = {r["session_id"]: r for r in session_rows(store)}
    assert set(rows) == {"s1", "s2"}
    assert rows["s1"]["n_tool_calls"] == 1 and rows["s1"]["platform_score"] == 0.9
    s = get_session(store, "s1")
    assert s.messages[1].tool_calls[0].function.arguments == '{"id": 1}'
    assert s.messages[3].content == "Done."


def test_missing_file_is_a_config_error(store, tmp_path) -> None:
    with pytest.raises(ConfigError):
        import_sessions(store, tmp_path / "nope.jsonl")


def test_cli_import_sessions_json_and_exit_codes(store_path, tmp_path, capsys) -> None:
    bad = _bad_file(tmp_path)
    assert (
        main(["--store", str(store_path), "import", "sessions", "--from", str(bad), "--json"]) == 2
    )
    out = json.loads(capsys.readouterr().out)
    assert out["imported"] == 0 and [e["line"] for e in out["errors"]] == [2, 4, 5, 7, 8, 9]
    good = write_sessions_jsonl(tmp_path / "good.jsonl", 40, seed=2)
    assert (
        main(["--store", str(store_path), "import", "sessions", "--from", str(good), "--json"]) == 0
    )
    assert json.loads(capsys.readouterr().out) == {
        "imported": 40,
        "errors": [],
        "valid": 40,
        "mode": "all_or_nothing",
        "file": str(good),
    }
    bad_partial = [
        "--store",
        str(store_path),
        "import",
        "sessions",
        "--from",
        str(bad),
        "--partial",
    ]
    assert main(bad_partial) == 0
    text = capsys.readouterr().out
    assert "imported 2 session(s)" in text and "line 2: invalid JSON" in text


def _j(sid: str, judge: str, faults=(), shifts=(), valid=True) -> SessionJudgment:
    return SessionJudgment(
        session_id=sid,
        judge=judge,
        kind="heuristic",
        fault_types=faults,
        shift_types=shifts,
        valid=valid,
    )


def test_strict_two_judge_rule() -> None:
    both = strict_verdict(
        _j("s", "a", faults=("vagueness_subjectivity", "factual_error")),
        _j("s", "b", faults=("vagueness_subjectivity",), shifts=("pivot",)),
    )
    assert both.verdict == "misaligned"
    assert [f.value for f in both.fault_types] == ["vagueness_subjectivity"]
    assert both.shift_types == ()
    assert strict_verdict(_j("s", "a"), _j("s", "b")).verdict == "clean"
    # one judge alone never makes a session misaligned
    assert (
        strict_verdict(_j("s", "a", faults=("vagueness_subjectivity",)), _j("s", "b")).verdict
        == "contested"
    )
    # both flag, nothing in common: contested
    assert (
        strict_verdict(
            _j("s", "a", faults=("factual_error",)), _j("s", "b", shifts=("relax",))
        ).verdict
        == "contested"
    )
    assert strict_verdict(_j("s", "a"), _j("s", "b", valid=False)).verdict == "unjudged"
    with pytest.raises(ValueError):
        strict_verdict(_j("s", "a"), _j("t", "b"))


def test_report_filters_strictly_and_matches_clean_sessions() -> None:
    rows = [
        {
            "session_id": f"s{i}",
            "n_user_turns": t,
            "n_messages": 2 * t,
            "n_tool_calls": c,
            "platform_score": sc,
            "metadata": {},
        }
        for i, (t, c, sc) in enumerate(
            [(2, 6, 0.4), (3, 5, 0.5), (2, 1, 0.9), (3, 2, 0.8), (9, 1, 1.0), (2, 4, 0.2)]
        )
    ]
    pairs = {
        "s0": (
            _j("s0", "a", faults=("vagueness_subjectivity",)),
            _j("s0", "b", faults=("vagueness_subjectivity",)),
        ),
        "s1": (_j("s1", "a", shifts=("pivot",)), _j("s1", "b", shifts=("pivot",))),
        "s2": (_j("s2", "a"), _j("s2", "b")),
        "s3": (_j("s3", "a"), _j("s3", "b")),
        "s4": (_j("s4", "a"), _j("s4", "b")),
        "s5": (_j("s5", "a", faults=("factual_error",)), _j("s5", "b")),  # contested
    }
    rep = build_report(pairs, rows, seed=1, reps=200)
    assert rep.counts == {"misaligned": 2, "clean": 3, "contested": 1, "unjudged": 0}
    assert rep.matched_pairs == (("s0", "s2"), ("s1", "s3"))  # nearest in user turns
    score, tools = rep.comparisons
    assert score.misaligned_mean == pytest.approx(0.45) and score.clean_mean == pytest.approx(0.85)
    assert score.mean_difference == pytest.approx(-0.4)
    assert tools.misaligned_mean == pytest.approx(5.5) and tools.clean_mean == pytest.approx(1.5)
    assert rep.fault_types["vagueness_subjectivity"] == 1 and rep.fault_types["factual_error"] == 0
    assert rep.shift_types["pivot"] == 1 and rep.fault_families["expression"] == 1
    assert rep.heuristic


def test_match_on_metadata() -> None:
    mis = [{"session_id": "m", "n_user_turns": 2, "n_messages": 4, "metadata": {"task": "air"}}]
    clean = [
        {"session_id": "c1", "n_user_turns": 2, "n_messages": 4, "metadata": {"task": "shop"}},
        {"session_id": "c2", "n_user_turns": 7, "n_messages": 14, "metadata": {"task": "air"}},
    ]
    assert match_clean(mis, clean) == [("m", "c1")]
    assert match_clean(mis, clean, match_on="task") == [("m", "c2")]


def test_heuristic_judges_are_labelled_and_track_synthetic_truth() -> None:
    sessions = generate_sessions(200, random.Random(5))
    from core.studies.sessions import SessionRecord

    hits = total = 0
    for raw in sessions:
        rec = SessionRecord.model_validate(raw)
        a, b = LexiconJudge().judge(rec), StructureJudge().judge(rec)
        assert a.kind == b.kind == "heuristic" and a.judge != b.judge
        truth = bool(
            raw["metadata"]["synthetic"]["fault_types"]
            or raw["metadata"]["synthetic"]["shift_types"]
        )
        v = strict_verdict(a, b).verdict
        if v in ("misaligned", "clean"):
            total += 1
            hits += (v == "misaligned") == truth
    assert total > 150 and hits / total > 0.9


def test_offline_pipeline_end_to_end_and_judgments_are_cached(store, tmp_path) -> None:
    path = write_sessions_jsonl(tmp_path / "s.jsonl", 150, seed=3)
    assert import_sessions(store, path).imported == 150
    rep = run_sessions_report(store, "heuristic", seed=0)
    assert rep.n_sessions == 150 and rep.counts["misaligned"] > 20 and rep.counts["clean"] > 20
    score, tools = rep.comparisons
    assert score.mean_difference < 0 and score.ci95 is not None and score.ci95[1] < 0
    assert tools.mean_difference > 0
    assert sum(rep.shift_types.values()) > 0 and sum(rep.fault_types.values()) > 0
    stored = get_judgments(store, "heuristic:lexicon")
    assert len(stored) == 150

    class Boom:
        name = "heuristic:lexicon"

        def judge(self, session):  # pragma: no cover - must not be called
            raise AssertionError("stored judgments must be reused")

    assert len(judge_sessions(store, Boom())) == 150  # type: ignore[arg-type]


def test_human_judges_through_the_queue(store, tmp_path) -> None:
    path = write_sessions_jsonl(tmp_path / "s.jsonl", 6, seed=9)
    import_sessions(store, path)
    ids = [r["session_id"] for r in session_rows(store)]
    create_study(
        store,
        StudySpec(
            name="prod",
            sessions=tuple(ids),
            label_kinds=("fault_type", "shift_type", "intents"),
            overlap=2,
        ),
    )
    assign_study(store, "prod", ["h1", "h2", "h3"])
    for ann in ("h1", "h2", "h3"):
        for item in annotator_queue(store, "prod", ann, reveal_ids=True).items:
            flagged = item.target_id in ids[:3]
            label_item(
                store,
                item.assignment_id,
                "fault_type",
                "vagueness_subjectivity" if flagged else "none",
            )
            label_item(store, item.assignment_id, "shift_type", "none")
            label_item(store, item.assignment_id, "intents", ["buy something"])
        assert (
            annotator_queue(store, "prod", ann, reveal_ids=True).done
            == annotator_queue(store, "prod", ann, reveal_ids=True).total
        )
    rep = run_sessions_report(store, study="prod")
    assert rep.counts == {"misaligned": 3, "clean": 3, "contested": 0, "unjudged": 0}
    assert all(j.startswith("human:") for j in rep.judges) and not rep.heuristic


def test_cli_sessions_report(store_path, tmp_path, capsys) -> None:
    assert main(["--store", str(store_path), "sessions", "report"]) == 2  # nothing imported
    capsys.readouterr()
    from core.store import Store

    import_sessions(Store.open(store_path), write_sessions_jsonl(tmp_path / "s.jsonl", 60, seed=4))
    assert main(["--store", str(store_path), "sessions", "report", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_sessions"] == 60 and out["heuristic"] is True
    assert {c["measure"] for c in out["comparisons"]} == {"platform_score", "tool_calls"}
    assert main(["--store", str(store_path), "sessions", "report"]) == 0
    text = capsys.readouterr().out
    assert "heuristic judges" in text and "platform_score" in text
    assert (
        main(["--store", str(store_path), "sessions", "report", "--judges", "only-one-model"]) == 2
    )
