"""A3 = A2's guidance + a lesson book; generations are a run option; the book is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agents.lessons import credit_labels, digest
from core.agents.methods import method_spec
from core.agents.prompts import load_prompt, system_prompt
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_samples
from core.model.actions import Ask, EnvOp, Propose
from core.model.events import LessonBookUsed
from core.model.run import RunOptions, RunSpec
from core.model.world import EnvAction
from core.runner import run_sweep
from core.store import Store
from core.studio.inspector import lesson_lines


def test_a3_guidance_is_a2_plus_the_lesson_book() -> None:
    w = load_mock_world()
    a2 = system_prompt(method_spec("A2"), "mock", w.tools())
    a3 = system_prompt(method_spec("A3"), "mock", w.tools(), lessons="LESSON-BLOCK")
    planner = load_prompt("A2").strip()
    assert planner in a2 and planner in a3  # every budget-planning line of A2
    assert "LESSON-BLOCK" in a3 and "LESSON-BLOCK" not in a2
    assert a3.index(planner) < a3.index("LESSON-BLOCK")


def test_a0_is_told_to_ask_early() -> None:
    a0 = load_prompt("A0").lower()
    assert "one question" in a0 and "ask early" in a0


@pytest.mark.parametrize("size", [1, 3])
def test_symbolic_a3_generations_and_lesson_events(tmp_path: Path, size: int) -> None:
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("A3",),
        personas=("dependent",),
        seeds=(0,),
        a3_generation_size=size,
    )
    res = run_sweep(store, spec, RunOptions(workers=1, concurrency=1, progress=False))
    rows = store.episode_rows(run_id=res.run_id)
    books = []
    for row in rows:
        evs = store.events(row["episode_id"])
        got = [e for e in evs if isinstance(e, LessonBookUsed)]
        assert len(got) == 1 and evs[1] is not None and evs[1].kind == "lesson_book"
        books.append(got[0])
        assert lesson_lines(evs)[0].startswith("askbook: generation")
    gens = sorted({b.generation for b in books})
    assert gens == list(range(len(gens)))
    n = len(rows)
    assert len(gens) == -(-n // size)  # one book per generation, rewritten between them
    assert all(b.generation_size == size for b in books)
    first = min(books, key=lambda b: b.generation)
    assert first.generation == 0 and first.lessons == () and first.episodes_seen == 0
    # every episode of a generation plays against the same book
    for g in gens:
        same = {tuple(map(str, b.lessons)) for b in books if b.generation == g}
        assert len(same) == 1


def test_digest_credit_labels_are_computed_by_code_and_buy_now_is_a_final_answer() -> None:
    g, w = mock_graph(), load_mock_world()
    s = mock_samples()[0]
    log = InMemoryEventLog()
    eid = episode.start(log, s, "rational", 0, "LIST", graph=g, method="A3")
    acts = [
        Ask(text="Which colour would you like?", asks=()),
        EnvOp(action=EnvAction(tool="buy", args={"item_id": "s04"})),
        Propose(text="done"),
    ]

    class Agent:
        i = 0

        def act(self, view):  # type: ignore[no-untyped-def]
            self.i += 1
            return acts[min(self.i - 1, len(acts) - 1)]

    episode.run(log, eid, Agent())
    labels = credit_labels(log.events(eid))
    assert labels[0]["question"] in ("answered", "declined") and "facts" in labels[0]
    assert any("final_answer" in x for x in labels)
    view = episode.agent_view(log, eid)
    d = digest(view, credit=labels, is_proposal=w.is_proposal_action)
    assert d["credit"] == labels
    dids = [t["did"] for t in d["turns"] if "did" in t]
    if w.is_proposal_action(EnvAction(tool="buy", args={"item_id": "s04"})):
        assert "final answer (by operation)" in dids
    for x in labels:  # nothing hidden: only reception, counts and verdicts
        assert set(x) <= {"turn", "question", "facts", "final_answer", "via"}
