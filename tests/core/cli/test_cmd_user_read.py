"""``driftbench user read``: the output contract per world, bad input, the LLM option."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def _sample(benchmark: str, prefix: str) -> str:
    from core.construction.pipeline import load_bundled

    return next(s.sample_id for s in load_bundled(benchmark)[1] if s.sample_id.startswith(prefix))


def _run(tmp_path, capsys, rows, *extra):
    src = _write(tmp_path / "r.jsonl", rows)
    code = main(["--store", str(tmp_path / "s.db"), "user", "read", "--from", str(src), *extra])
    cap = capsys.readouterr()
    return code, [json.loads(x) for x in cap.out.splitlines()], cap.err


def test_read_lines_follow_the_contract_in_every_world(tmp_path, capsys):
    ws = _sample("webshop", "001377b5")
    rt = _sample("tau2_retail", "00156d4d")
    af = _sample("tau2_airline", "0093c76f")
    rows = [
        {"sample_id": ws, "reply": "navy, size XL, under sixty bucks"},
        {"sample_id": ws, "reply": "not sure", "asked": ["option:0"]},
        {"sample_id": ws, "reply": "the red one"},
        {"sample_id": rt, "reply": "it's order W1850525"},
        {"sample_id": rt, "reply": "yes, that's right"},
        {"sample_id": af, "reply": "two checked bags, both paid"},
        {"sample_id": af, "reply": "no, wait"},
    ]
    code, out, err = _run(tmp_path, capsys, rows)
    assert code == 0 and err == "" and len(out) == 7
    assert all(
        list(o) == ["sample_id", "reply", "act", "disclosures", "contradictions"] for o in out
    )
    assert [o["act"] for o in out] == [
        "answer",
        "decline",
        "answer",
        "answer",
        "confirm_yes",
        "answer",
        "confirm_no",
    ]
    assert [d["slot"] for d in out[0]["disclosures"]] == ["option:0", "option:1", "price_upper"]
    assert out[0]["disclosures"][0]["value"] == "navy"
    assert out[2]["contradictions"] == [{"slot": "option:0", "said": "red", "goal": "navy"}]
    assert out[3]["disclosures"][0]["slot"].endswith(":order_id")
    assert sorted(d["slot"].split(":")[-1] for d in out[5]["disclosures"]) == [
        "nonfree_baggages",
        "total_baggages",
    ]
    assert not (tmp_path / "s.db").exists()


def test_turn_intent_id_reads_over_that_intent(tmp_path, capsys):
    from core.envs.mock import mock_graph, mock_samples

    sid = mock_samples()[0].sample_id
    child = next(
        c for c in mock_graph().children if any(x.slot == "material" for x in c.conditions)
    )
    material = child.slot_map()["material"].value
    code, out, _ = _run(
        tmp_path,
        capsys,
        [
            {"sample_id": sid, "reply": f"{material}, please"},
            {"sample_id": sid, "reply": f"{material}, please", "turn_intent_id": child.intent_id},
        ],
    )
    assert code == 0
    assert out[0]["disclosures"] == []
    assert [d["slot"] for d in out[1]["disclosures"]] == ["material"]


@pytest.mark.parametrize(
    "rows,needle",
    [
        (['{"sample_id": "x"'], "line 1"),
        ([{"sample_id": "S", "reply": ""}], "reply must be"),
        ([{"sample_id": "S", "question": "q"}], "unknown keys"),
        ([{"sample_id": "S", "reply": "navy", "asked": "color"}], "line 1: asked"),
        ([{"sample_id": "S", "reply": "navy", "asked": ["nope"]}], "line 1: asked"),
        ([{"sample_id": "nope", "reply": "navy"}], "line 1: sample_id"),
    ],
)
def test_bad_input_one_line_error_exit_2(tmp_path, capsys, rows, needle):
    from core.envs.mock import mock_samples

    sid = mock_samples()[0].sample_id
    rows = [
        json.loads(json.dumps(r).replace('"S"', json.dumps(sid))) if not isinstance(r, str) else r
        for r in rows
    ]
    code, out, err = _run(tmp_path, capsys, rows)
    assert code == 2 and out == []
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "r.jsonl" in lines[0] and needle in lines[0]


def test_llm_reader_answers_and_falls_back(tmp_path, capsys, monkeypatch):
    """A model reads through the one LLM client; an answer outside the contract falls back."""
    from core.protocol import reply_llm

    ws = _sample("webshop", "001377b5")
    answers = iter(
        [
            '{"act": "answer", "disclosures": ["option:0"], "contradictions": '
            '[{"slot": "price_upper", "said": "eighty"}]}',
            '{"act": "answer", "disclosures": ["not_a_slot"]}',
        ]
    )

    class Fake:
        def complete(self, messages, **params):
            assert "option:0" in messages[0]["content"]
            return type("R", (), {"text": next(answers)})()

    monkeypatch.setattr(
        reply_llm.LLMReader, "from_spec", classmethod(lambda cls, spec: cls(Fake(), name=spec))
    )
    reply_llm._READERS.clear()
    code, out, _ = _run(
        tmp_path,
        capsys,
        [
            {"sample_id": ws, "reply": "navy blue, up to eighty"},
            {"sample_id": ws, "reply": "navy blue, up to eighty dollars"},
        ],
        "--reader",
        "openai/fake-model",
    )
    assert code == 0
    assert out[0]["disclosures"] == [{"slot": "option:0", "value": "navy"}]
    assert out[0]["contradictions"] == [{"slot": "price_upper", "said": "eighty", "goal": 60}]
    # the second answer names a slot outside the intent: the offline reading is used instead
    assert [d["slot"] for d in out[1]["disclosures"]] == ["option:0"]
    assert [c["slot"] for c in out[1]["contradictions"]] == ["price_upper"]
    reading = reply_llm._READERS["openai/fake-model"]._memo
    assert any(r.fallback and "not a requirement" in r.detail for r in reading.values())
    reply_llm._READERS.clear()
