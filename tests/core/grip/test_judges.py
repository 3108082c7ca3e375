"""Role-realism judges: the heuristic classifier (held out), the LLM pair, human labels."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from core.grip import build_report, grip_frame
from core.grip.judges.base import UserTurn, first_sentence, persona_cards, user_turns
from core.grip.judges.heuristic import FEATURE_NAMES, HeuristicJudge, features
from core.grip.judges.llm import parse_letter, parse_same, shuffled_cards
from core.grip.metrics import balanced_accuracy
from core.grip.realism import eligible, load_user_turns, read_judgments
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.protocol.personas import load_personas
from core.runner import run_sweep
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer


def _simulate(path: Path, name: str, methods: tuple[str, ...], seeds: tuple[int, ...]) -> Store:
    store = Store.open(path)
    spec = RunSpec(name=name, benchmarks=("mock",), methods=methods, personas=PERSONAS, seeds=seeds)
    run_sweep(store, spec, RunOptions(workers=1, progress=False))
    return store


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Simulated episodes from the real protocol: mock world, every persona, three seeds."""
    return _simulate(tmp_path_factory.mktemp("sim") / "s.db", "sim", ("A0", "A1"), (0, 1, 2))


def test_features_over_user_replies() -> None:
    turns = [
        UserTurn("Maybe black? I think so, thanks!", "answer", n_answer=1, n_volunteer=1),
        UserTurn("I'd rather not say.", "decline", n_declined=1),
    ]
    f = dict(zip(FEATURE_NAMES, features(turns), strict=True))
    assert f["n_turns"] == 2 and f["decline_rate"] == 0.5
    assert f["answer_per_answer"] == 1.0 and f["volunteer_per_answer"] == 1.0
    assert f["hedges_per_turn"] == 1.0 and f["polite_per_turn"] == 0.5
    assert f["hint_rate"] == -1.0  # no rejection: marked, not zero
    events = [
        {"kind": "user_reply", "reply_kind": "mute", "text": "(silence)"},
        {
            "kind": "user_reply",
            "reply_kind": "answer",
            "text": "Black.",
            "disclosures": [{"slot": "color", "value": "black", "how": "answer"}],
            "asked": ["color"],
        },
        {"kind": "proposal_judged", "reason": "golden_actions_missing:x"},
    ]
    assert user_turns(events) == [UserTurn("Black.", "answer", n_answer=1, n_asked=1)]


def test_heuristic_judge_beats_chance_on_held_out_simulated_episodes(sim: Store) -> None:
    frame = eligible(grip_frame(sim, ["sim"]))
    turns = load_user_turns(sim, list(frame["episode_id"]))
    train = frame[frame["seed"] != 2]
    test = frame[frame["seed"] == 2]
    judge = HeuristicJudge(seed=0).fit(
        [turns[e] for e in train["episode_id"]], list(train["persona"])
    )
    pred = judge.predict([turns[e] for e in test["episode_id"]])
    acc = sum(p == t for p, t in zip(pred, test["persona"], strict=True)) / len(test)
    print(f"heuristic held-out accuracy (seed 2, n={len(test)}): {acc:.3f}")
    assert len(test) >= 50
    assert acc > 0.2 + 0.2, acc  # chance is 0.2


def test_heuristic_report_is_cross_fitted_and_stored(sim: Store) -> None:
    rep = build_report(sim, ["sim"], by="method,persona", judges="heuristic", use_cache=False)
    held = rep.role_realism["held_out"]
    (acc,) = [v["accuracy"] for v in held.values()]
    assert acc > 0.4
    cells = rep.to_json()["cells"]
    ident = [c["metrics"]["Identification"] for c in cells]
    assert all(e["value"] is not None and e["denominator"] > 0 for e in ident)
    cons = [c["metrics"]["Consistency"] for c in cells]
    assert any(e["value"] is not None for e in cons)
    # raw judgments are next to the run; a rerun replaces rather than duplicates them
    n1 = sim.conn.execute("SELECT count(*) FROM judgments WHERE judge='heuristic'").fetchone()[0]
    build_report(sim, ["sim"], by="method", judges="heuristic", use_cache=False)
    n2 = sim.conn.execute("SELECT count(*) FROM judgments WHERE judge='heuristic'").fetchone()[0]
    assert n1 == n2 > 0


def test_parsers_and_card_shuffle() -> None:
    assert parse_letter("Answer: C") == 2
    assert parse_letter("I would say **Answer: (b)**") == 1
    assert parse_letter("A or B") is None
    assert parse_letter("E") == 4
    assert parse_same("They seem alike.\nAnswer: SAME") == "SAME"
    assert parse_same("not the same at all: DIFFERENT") == "DIFFERENT"
    assert parse_same("no idea") == "invalid"
    cards = persona_cards(load_personas())
    assert [c.persona_id for c in cards] == sorted(PERSONAS)
    assert first_sentence("One two. Three.") == "One two."
    a = shuffled_cards(cards, "ep1")
    assert a == shuffled_cards(cards, "ep1") and sorted(a, key=lambda c: c.persona_id) == cards


def _block(prompt: str, start: str, end: str) -> str:
    return prompt.split(start, 1)[1].split(end, 1)[0].strip()


def test_llm_pair_against_fake_server(tmp_path: Path, fake_llm_server: FakeOpenAIServer) -> None:
    store = _simulate(tmp_path / "llm.db", "llmrun", ("A1",), (0, 1))
    frame = grip_frame(store, ["llmrun"])
    persona_of = dict(zip(frame["episode_id"], frame["persona"], strict=True))
    turns = load_user_turns(store, list(frame["episode_id"]))
    cards = {c.text: c.persona_id for c in persona_cards(load_personas())}
    block_persona: dict[str, set[str]] = {}
    from core.grip.judges.llm import _render_turns

    for eid, ts in turns.items():
        block_persona.setdefault(_render_turns(ts, 8).strip(), set()).add(persona_of[eid])
        block_persona.setdefault(_render_turns(ts, 6).strip(), set()).add(persona_of[eid])

    def responder(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        good = "judge-a" in body["model"]
        if "Persona cards:" in prompt:
            if not good:
                return "Answer: A"
            who = block_persona[_block(prompt, "User messages:", "Persona cards:")]
            lines = _block(prompt, "Persona cards:", "Which persona").splitlines()
            for line in lines:
                letter, _, text = line.partition(". ")
                if cards.get(text) in who:
                    return f"Let me think. Answer: {letter}"
            return "Answer: Z"
        if not good:
            return "Answer: SAME"  # always SAME: outside [0.1, 0.9], an invalid judge
        a = block_persona[_block(prompt, "Conversation 1:", "Conversation 2:")]
        b = block_persona[_block(prompt, "Conversation 2:", "Were both")]
        return "Answer: SAME" if a & b else "Answer: DIFFERENT"

    fake_llm_server.responder = responder
    base = fake_llm_server.base_url
    judges = f"openai/judge-a@{base},openai/judge-b@{base}"
    rep = build_report(store, ["llmrun"], by="method", judges=judges, per_cell=1, n_pairs=12)
    n_calls = len(fake_llm_server.requests)
    assert n_calls > 0
    jd = read_judgments(store, [rep.runs[0]], None)
    ident = jd[jd.task == "identification"]
    a_id = ident[ident.judge.str.contains("judge-a")]
    b_id = ident[ident.judge.str.contains("judge-b")]
    assert len(a_id) == len(b_id) == 5 * 2 * 1  # 5 personas × 2 seeds × 1 per cell
    acc_a = (a_id["value"] == a_id["target_id"].map(persona_of)).mean()
    acc_b = (b_id["value"] == b_id["target_id"].map(persona_of)).mean()
    assert acc_a >= 0.9
    # judge B always picks card A: its pick is the first card of that episode's shuffle
    for eid, value in zip(b_id["target_id"], b_id["value"], strict=True):
        assert value == shuffled_cards(persona_cards(load_personas()), eid)[0].persona_id
    cell = rep.to_json()["cells"][0]["metrics"]
    assert math.isclose(cell["Identification"]["value"], (acc_a + acc_b) / 2)
    assert cell["Identification"]["denominator"] == 10
    summary = rep.role_realism["judges"]
    b_name = next(j for j in summary if "judge-b" in j)
    a_name = next(j for j in summary if "judge-a" in j)
    assert summary[b_name]["same_rate"] == 1.0 and summary[b_name]["consistency_valid"] is False
    assert summary[a_name]["consistency_valid"] is True
    pairs = jd[(jd.task == "consistency") & jd.judge.str.contains("judge-a")]
    truth = [persona_of[a] == persona_of[b] for a, b in (t.split("|") for t in pairs.target_id)]
    said = [v == "SAME" for v in pairs["value"]]
    ba = balanced_accuracy(truth, said)
    assert ba is not None and math.isclose(cell["Consistency"]["value"], ba)
    # judgments are never asked twice
    build_report(
        store, ["llmrun"], by="method", judges=judges, per_cell=1, n_pairs=12, use_cache=False
    )
    assert len(fake_llm_server.requests) == n_calls


def test_human_labels_from_annotations(store: Store) -> None:
    from tests.core.grip.grip_builders import EpisodeBuilder

    store.put_run("h", "h", "{}", 0)
    ids = []
    for i, persona in enumerate(["rational", "dependent", "rational"]):
        b = EpisodeBuilder(f"h{i}", persona=persona, run_id="h")
        b.ask(("color",)).ask(("size",)).propose(True)
        b.end(__import__("core.model.episode").model.episode.Outcome.SUCCESS)
        b.store_into(store)
        ids.append(f"h{i}")
    add = store.add_annotation
    add(
        annotator="ann1",
        target_kind="episode",
        target_id="h0",
        label_kind="persona_id",
        value="rational",
    )
    add(
        annotator="ann1",
        target_kind="episode",
        target_id="h1",
        label_kind="persona_id",
        value="rational",
    )
    add(
        annotator="ann2",
        target_kind="episode",
        target_id="h1",
        label_kind="persona_id",
        value="dependent",
    )
    add(
        annotator="ann1",
        target_kind="pair",
        target_id="h0|h2",
        label_kind="same_persona",
        value=True,
    )
    add(
        annotator="ann1",
        target_kind="pair",
        target_id="h0|h1",
        label_kind="same_persona",
        value="DIFFERENT",
    )
    add(
        annotator="ann1",
        target_kind="pair",
        target_id="h1|h2",
        label_kind="same_persona",
        value=True,
    )
    rep = build_report(store, ["h"], by="benchmark", judges="human")
    m = rep.to_json()["cells"][0]["metrics"]
    # h0: ann1 right (1.0); h1: ann1 wrong, ann2 right (0.5); h2 unlabelled
    assert math.isclose(m["Identification"]["value"], 0.75)
    assert m["Identification"]["denominator"] == 2
    # ann1: SAME rate 2/3 (valid); SAME pairs 1/1 right, DIFFERENT pairs 1/2 right
    assert math.isclose(m["Consistency"]["value"], 0.75)
    assert m["Consistency"]["denominator"] == 3
