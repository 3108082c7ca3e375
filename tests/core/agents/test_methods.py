"""Each method's distinguishing mechanism (symbolic and LLM policies)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.agents.askbook import AskBook
from core.agents.factory import build_agent
from core.agents.lessons import LessonBook
from core.agents.llm_agent import LLMAgent
from core.agents.methods import LADDER
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_samples
from core.llm import ScriptedLLM
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import run_sweep
from core.runner.plan import literal_intent
from core.store import Store


def _play(method: str, sample_idx: int = 0, persona: str = "dependent", client=None):  # type: ignore[no-untyped-def]
    log = InMemoryEventLog()
    g, w = mock_graph(), load_mock_world()
    s = mock_samples()[sample_idx]
    eid = episode.start(log, s, persona, 0, "symbolic", graph=g, method=method)
    agent = build_agent(method, world=w, literal=literal_intent(s, g), client=client)
    if hasattr(agent, "attach"):
        agent.attach(log, eid)
    episode.run(log, eid, agent)
    return log, eid, agent


def test_ladder_table() -> None:
    assert not LADDER["B0"].can_ask and LADDER["A0"].can_ask
    assert LADDER["A2"].meter and LADDER["A3"].meter and not LADDER["A0"].meter
    assert LADDER["A3"].self_evolving and LADDER["L0"].mute_user and LADDER["RS"].informed


@pytest.mark.parametrize("method", ["B0", "L0", "LIT", "RS"])
def test_no_ask_methods_never_message_the_user(method: str) -> None:
    for i in range(len(mock_samples())):
        log, eid, _ = _play(method, i)
        kinds = [e.action.kind for e in log.events(eid) if e.kind == "agent_action"]
        assert "ask" not in kinds


def test_b0_prompt_has_no_clarify_action() -> None:
    llm = ScriptedLLM(["Action: Answer\nFinal Answer: done"], cycle=True)
    _play("B0", client=llm)
    system = llm.calls[0].messages[0]["content"]
    assert "Action: Clarify" not in system and "Action: Operation" in system
    llm2 = ScriptedLLM(["Action: Answer\nFinal Answer: done"], cycle=True)
    _play("A0", client=llm2)
    assert "Action: Clarify" in llm2.calls[0].messages[0]["content"]


def test_b0_clarify_reply_is_malformed() -> None:
    llm = ScriptedLLM(["Action: Clarify\nContent: what size?"], cycle=True)
    log, eid, agent = _play("B0", client=llm)
    acts = [e.action for e in log.events(eid) if e.kind == "agent_action"]
    assert acts and all(a.kind == "malformed" for a in acts)
    assert "reprompt" in agent.repairs  # one re-prompt quoting the parser complaint


def test_a2_sees_the_meter_and_a0_does_not() -> None:
    for method, visible in (("A2", True), ("A3", True), ("A0", False), ("A1", False)):
        llm = ScriptedLLM(["Action: Answer\nFinal Answer: done"], cycle=True)
        _play(method, client=llm)
        prompt = llm.calls[0].messages[-1]["content"]
        assert ("patience" in prompt.lower()) is visible, method
    log, eid, _ = _play("A2")
    assert episode.agent_view(log, eid).patience is not None
    log, eid, _ = _play("A0")
    assert episode.agent_view(log, eid).patience is None


def test_a0_asks_at_most_once_before_first_proposal() -> None:
    for i in range(len(mock_samples())):
        for persona in PERSONAS:
            log, eid, _ = _play("A0", i, persona)
            asks = 0
            for e in log.events(eid):
                if e.kind == "agent_action":
                    if e.action.kind == "ask":
                        asks += 1
                    if e.action.kind == "propose" or (
                        e.action.kind == "env" and e.action.action.tool == "buy"
                    ):
                        break
            assert asks <= 1


def test_a1_memory_block_is_carried_across_turns() -> None:
    replies = [
        "Action: Operation\n```\nsearch[shirt]\n```\n"
        'MEMORY: {"known": {"colour": "teal"}, "changed": []}',
        "Action: Answer\nFinal Answer: done",
    ]
    llm = ScriptedLLM(replies, cycle=True)
    _play("A1", client=llm)
    assert '"colour": "teal"' in llm.calls[1].messages[-1]["content"]
    assert "MEMORY: {}" in llm.calls[0].messages[-1]["content"]
    # earlier messages never change: the first turn's message (with its empty record) stays
    assert llm.calls[1].messages[1] == llm.calls[0].messages[1]


def test_a3_book_starts_empty_grows_within_run_and_holds_no_values(tmp_path: Path) -> None:
    book = AskBook()
    assert book.is_empty()
    g, w = mock_graph(), load_mock_world()
    for s in mock_samples():
        for persona in ("rational", "dependent"):
            log = InMemoryEventLog()
            eid = episode.start(log, s, persona, 0, "symbolic", graph=g, method="A3")
            agent = build_agent("A3", world=w, literal=literal_intent(s, g), askbook=book)
            agent.attach(log, eid)
            episode.run(log, eid, agent)
    assert book.is_empty() and book.pending  # within a generation the book does not move
    book.commit()
    assert not book.is_empty() and book.episodes == 2 * len(mock_samples())
    values = {str(c.value).lower() for n in g.nodes for c in n.conditions}
    assert "medium" in values  # a value that is also an ordinary English word
    vocab = {w.lower() for w in book.vocabulary()}
    assert vocab == {"mock"} | {f for fams in book.stats.values() for f in fams}
    assert vocab <= {"mock", "color", "size", "price", "material"}
    assert not vocab & values
    for sig in book.stats:
        assert re.fullmatch(r"mock\|([a-z_]+[0-9],)*[a-z_]+[0-9]", sig), sig
    # a fresh unit (another persona / seed / run) starts from an empty book
    assert build_agent("A3", world=w, literal=literal_intent(mock_samples()[0], g)).askbook is None


def test_a3_units_do_not_share_books_across_personas(tmp_path: Path) -> None:
    from core.runner.plan import SampleSource, plan_keys
    from core.runner.units import units_of

    spec = RunSpec(
        benchmarks=("mock",), methods=("A3", "B0"), personas=("rational", "avoidant"), seeds=(0, 1)
    )
    units = units_of(plan_keys(SampleSource(None), spec), spec)
    a3 = [u for u in units if u[0].method == "A3"]
    assert len(a3) == 4
    for u in a3:
        assert len({(k.benchmark, k.persona, k.seed) for k in u}) == 1


def test_lesson_book_validators() -> None:
    book = LessonBook(
        banned_words={"harbour shirt", "cancel_pending_order"},
        seen_texts=["I need a teal shirt in size medium up to forty dollars"],
    )
    assert book.render() == ""
    kept = book.update(
        [
            {
                "when": "the request names a colour vaguely",
                "do": "ask which colour before buying",
                "confidence": 0.8,
            },
            {"when": "price is over 40", "do": "ask"},
            {"when": "user wants Harbour Shirt", "do": "buy it"},
            {"when": "order", "do": "call cancel_pending_order"},
            {"when": "always", "do": "I need a teal shirt in size medium please"},
            {"when": "x", "do": "y", "bogus": 1},
        ]
    )
    assert kept == 1
    assert {r for r, _ in book.rejected} >= {"digits", "entity", "overlap", "schema"}
    assert "ask which colour" in book.render()


def test_lesson_book_reflection_keeps_book_on_bad_json() -> None:
    book = LessonBook()
    book.update([{"when": "the request is vague", "do": "ask one covering question"}])
    assert book.reflect(ScriptedLLM(["not json"]), [{"outcome": "SUCCESS"}]) == 1
    good = json.dumps({"lessons": [{"when": "a rejection names a feature", "do": "ask about it"}]})
    assert book.reflect(ScriptedLLM([good]), []) == 1
    assert "names a feature" in book.render()


def test_rs_is_told_the_current_intent_and_succeeds_more() -> None:
    wins = {m: 0 for m in ("RS", "B0")}
    for m in wins:
        for i in range(len(mock_samples())):
            for persona in PERSONAS:
                log, eid, _ = _play(m, i, persona)
                wins[m] += log.outcome(eid).value == "SUCCESS"  # type: ignore[union-attr]
    assert wins["RS"] > wins["B0"]


def test_l0_faces_a_mute_user(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    res = run_sweep(
        store,
        RunSpec(benchmarks=("mock",), methods=("L0",), personas=("rational",), seeds=(0,), limit=2),
        RunOptions(workers=1, progress=False),
    )
    for r in store.episode_rows(run_id=res.run_id):
        assert store.header(r["episode_id"]).user_voice == "mute"


def test_llm_agent_usage_accounting() -> None:
    llm = ScriptedLLM(["Action: Answer\nFinal Answer: done"], cycle=True)
    _, _, agent = _play("A0", client=llm)
    assert isinstance(agent, LLMAgent)
    assert agent.usage()["calls"] == len(llm.calls) >= 1
