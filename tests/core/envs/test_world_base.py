"""WorldBase: each hook has its documented default; the per-world cache is bounded and locked."""

from __future__ import annotations

import pickle
import threading
from typing import Any

from core.envs.base import EnvSession, HostWorld, WorldBase
from core.envs.mock.world import MockWorld
from core.envs.requirement_lexicon import Problem, SlotLexicon
from core.model.config import ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, ToolSpec, Verdict


class Bare(WorldBase):
    """Implements only what every world must; inherits every hook."""

    benchmark = "bare"
    world_id = "bare-1"

    def __init__(self, unmet: list[str] | None = None) -> None:
        self.unmet = unmet

    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(name="look", description="Look.", kind="read"),
            ToolSpec(name="set", description="Set.", kind="write"),
        ]

    def seeds(self) -> list[Intent]:
        conds = (Condition(slot="arg:0:cancel_order:reason", value="no longer needed"),)
        return [Intent.build(benchmark="bare", env_id="e", base="b", conditions=conds)]

    def execute(self, intent: Intent) -> GroundTruth:
        return GroundTruth(kind="scalar", value=["x"])

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        return Verdict(accepted=False, reason="no")

    def phrase(self, condition: Condition) -> str:
        return str(condition.value)

    def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str] | None:
        return self.unmet


def test_the_documented_defaults() -> None:
    w = Bare()
    assert isinstance(w, HostWorld)
    intent = w.seeds()[0]
    cond = intent.conditions[0]
    assert w.slot_label(cond) == "reason"
    assert w.slot_words(cond) == {"reason", "longer", "needed"}
    assert w.context_facts(intent) == {} and w.context_of(intent) == {}
    lex = w.slot_lexicon(cond)
    assert isinstance(lex, SlotLexicon)
    assert (lex.slot, lex.label, lex.values) == (cond.slot, "reason", ("no longer needed",))
    assert w.context_lexicon("first_name").cues == ("first name",)
    assert w.lexicon_families() == () and w.action_lexicon(intent) is None
    assert w.compile_intent(intent) == [] and w.catalogue_words() is None
    assert w.task_count() == 1 and w.task_splits() == {}
    assert w.max_observation_chars == 4000 and w.source == ""
    assert "final answer" in w.final_answer_format()
    assert w.is_proposal_action(EnvAction(tool="set", args={})) is False
    assert w.is_mutating(EnvAction(tool="set", args={})) is True
    assert w.is_mutating(EnvAction(tool="look", args={})) is False
    assert w.is_mutating(EnvAction(tool="unknown", args={})) is False


def test_unmet_problems_default_follows_unmet_slots() -> None:
    intent = Bare().seeds()[0]
    session: Any = None
    assert Bare(unmet=None).unmet_problems(intent, session) is None
    got = Bare(unmet=[intent.conditions[0].slot, "other_slot"]).unmet_problems(intent, session)
    assert got == [
        Problem(slots=(intent.conditions[0].slot,), text="the reason isn't right"),
        Problem(slots=("other_slot",), text="the other slot isn't right"),
    ]


def test_memo_is_one_bounded_table_per_name() -> None:
    w = Bare()
    table = w.memo("t", size=2)
    assert w.memo("t") is table and w.memo("u") is not table
    for k in range(3):
        table.put(k, k)
    assert 0 not in table and len(table) == 2


def test_memo_tables_are_created_once_under_concurrency() -> None:
    w = Bare()
    got: list[object] = []
    barrier = threading.Barrier(8)

    def grab() -> None:
        barrier.wait()
        got.append(w.memo("shared"))

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(x) for x in got}) == 1


def test_memo_tables_are_not_pickled() -> None:
    w = MockWorld()
    w.memo("plans").put("k", "v")
    copy = pickle.loads(pickle.dumps(w))
    assert "_memo_tables" not in copy.__dict__ and copy.memo("plans").get("k") is None
    assert w.memo("plans").get("k") == "v"
