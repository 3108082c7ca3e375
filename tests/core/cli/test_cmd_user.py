"""``driftbench user interpret``: the output contract and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from core.envs.mock import mock_graph, mock_samples


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_interpret_lines_follow_the_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    sid = mock_samples()[0].sample_id
    child = next(
        c for c in mock_graph().children if any(x.slot == "material" for x in c.conditions)
    )
    src = _write(
        tmp_path / "q.jsonl",
        [
            {"sample_id": sid, "question": "Which colour would you like?"},
            {"sample_id": sid, "question": "What's your budget?"},
            {"sample_id": sid, "question": "Anything else?"},
            {"sample_id": sid, "question": "I'll buy the crimson shirt, OK?"},
            {"sample_id": sid, "question": "Shall I go ahead?"},
            {"sample_id": sid, "question": "Nice weather, huh?"},
            {"sample_id": sid, "question": "What material?", "turn_intent_id": child.intent_id},
        ],
    )
    code = main(["--store", str(tmp_path / "s.db"), "user", "interpret", "--from", str(src)])
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0 and len(out) == 7
    assert all(list(o) == ["sample_id", "question", "act", "slots", "confirm"] for o in out)
    assert [(o["act"], o["slots"], o["confirm"]) for o in out] == [
        ("slots", ["color"], None),
        ("slots", ["price_upper"], None),
        ("open", [], None),
        ("confirm", ["color"], False),
        ("confirm", [], True),
        ("offtopic", [], None),
        ("slots", ["material"], None),
    ]
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(
    "rows,needle",
    [
        (['{"sample_id": "x"'], "line 1"),
        ([{"sample_id": "x", "question": "q"}, {"question": "no id"}], "line 2"),
        ([{"sample_id": "nope", "question": "Which colour?"}], "line 1: sample_id"),
        ([[1, 2]], "line 1"),
        ([{"sample_id": "S", "question": "q", "turn_intent_id": "zzz"}], "turn_intent_id"),
        ([{"sample_id": "S", "question": "q", "extra": 1}], "unknown keys"),
    ],
)
def test_bad_input_one_line_error_exit_2(tmp_path, capsys, rows, needle):
    sid = mock_samples()[0].sample_id
    rows = [
        json.loads(json.dumps(r).replace('"S"', json.dumps(sid))) if not isinstance(r, str) else r
        for r in rows
    ]
    src = _write(tmp_path / "bad.jsonl", rows)
    code = main(["--store", str(tmp_path / "s.db"), "user", "interpret", "--from", str(src)])
    cap = capsys.readouterr()
    assert code == 2 and cap.out == ""
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and "bad.jsonl" in err[0] and needle in err[0]


def test_missing_file(tmp_path, capsys):
    code = main(["user", "interpret", "--from", str(tmp_path / "none.jsonl")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "none.jsonl" in err[0]
