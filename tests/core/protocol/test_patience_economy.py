"""Patience economy: budgets, costs, affordability, exact float arithmetic (reference §9)."""

from __future__ import annotations

import pytest
from protohelp import ask, buy, search

from core.model.actions import Malformed, Propose
from core.model.config import ProtocolConfig
from core.model.episode import Outcome, TerminationReason
from core.model.events import PatienceCharged, ProposalJudged
from core.protocol.patience import affordable, after_charge
from core.protocol.personas import load_personas

NO_SHIFTS = ProtocolConfig(shift_fire_prob=0.0)


def charges(log, eid):
    return [e for e in log.events(eid) if isinstance(e, PatienceCharged)]


@pytest.mark.parametrize(
    ("pid", "budget"),
    [
        ("rational", 10.0),
        ("dependent", 12.0),
        ("avoidant", 8.0),
        ("intuitive", 9.0),
        ("spontaneous", 7.0),
    ],
)
def test_effective_budgets(pid, budget):
    assert load_personas()[pid].budget(10.0) == budget


def test_costs_are_decisions_defaults():
    c = ProtocolConfig()
    assert (c.base_patience, c.cost_question, c.cost_rejected_proposal) == (10, 2, 4)
    assert (c.cost_malformed, c.cost_env_action, c.cost_accepted_proposal) == (1, 0, 0)
    assert c.shift_fire_prob == 0.6
    assert c.for_benchmark("webshop").turn_cap == 40
    assert c.for_benchmark("tau2_retail").turn_cap == 30
    assert c.for_benchmark("tau2_airline").turn_cap == 100
    assert c.for_benchmark("webshop").category_mix == {
        "refine": 0.25,
        "relax": 0.25,
        "substitute": 0.30,
        "pivot": 0.20,
    }
    assert c.tau2_acceptance == "actions"
    assert len(c.config_hash()) == 16
    assert ProtocolConfig(cost_question=3).config_hash() != c.config_hash()


def test_spontaneous_after_one_rejection_exact(play):
    lg, eid, st = play([Propose(text="x")], persona_="spontaneous", config=NO_SHIFTS)
    ch = charges(lg, eid)
    assert ch[0].reason == "rejected_proposal" and ch[0].before == 7.0 and ch[0].after == 3.0


def test_dependent_after_one_question_exact(play):
    lg, eid, _ = play([ask("color")], persona_="dependent", config=NO_SHIFTS)
    ch = charges(lg, eid)
    assert ch[0].reason == "question" and ch[0].before == 12.0 and ch[0].after == 10.0


def test_reference_economy_base_8_floats(play):
    cfg = ProtocolConfig(base_patience=8.0, shift_fire_prob=0.0)
    lg, eid, _ = play([Propose(text="x")], persona_="spontaneous", config=cfg)
    assert (
        charges(lg, eid)[0].after == pytest.approx(1.6) and charges(lg, eid)[0].after == 8 * 0.7 - 4
    )
    lg, eid, _ = play([ask("color")], persona_="dependent", config=cfg)
    assert charges(lg, eid)[0].after == 8 * 1.2 - 2 == pytest.approx(7.6)


def test_env_actions_are_free_and_malformed_costs_one(play):
    lg, eid, st = play([search(), buy("s04"), Malformed(raw="??")], config=NO_SHIFTS)
    ch = charges(lg, eid)
    assert [c.reason for c in ch[:1]] == ["malformed"] and ch[0].cost == 1.0 and ch[0].after == 9.0


def test_accepted_proposal_costs_nothing(play):
    lg, eid, st = play([ask("color"), buy("s01"), Propose(text="done")], config=NO_SHIFTS)
    assert st.outcome is Outcome.SUCCESS and st.patience == 8.0
    assert [c.reason for c in charges(lg, eid)] == ["question"]


def test_unaffordable_proposal_is_the_final_shot_uncharged(play):
    # spontaneous: 7 -> 3 after one rejection; the next proposal (3 < 4) is the final shot
    lg, eid, st = play(
        [Propose(text="a"), buy("s04"), Propose(text="b")], persona_="spontaneous", config=NO_SHIFTS
    )
    judged = [e for e in lg.events(eid) if isinstance(e, ProposalJudged)]
    assert [j.via for j in judged] == ["answer", "final_shot"]
    assert st.outcome is Outcome.EXHAUSTED and st.reason is TerminationReason.FINAL_SHOT_REJECTED
    assert st.patience == 3.0 and len(charges(lg, eid)) == 1


def test_unaffordable_final_shot_can_succeed(play):
    lg, eid, st = play(
        [Propose(text="a"), buy("s01"), Propose(text="b")], persona_="spontaneous", config=NO_SHIFTS
    )
    assert st.outcome is Outcome.SUCCESS and st.reason is TerminationReason.FINAL_SHOT_ACCEPTED


def test_unaffordable_question_forces_final_answer(play):
    # avoidant 8: a rejection (4 left), three malformed (1 left): a question (2) is unaffordable
    cfg = NO_SHIFTS
    acts = [Propose(text="a"), Malformed(), Malformed(), Malformed(), ask("color")]
    lg, eid, st = play(acts, persona_="avoidant", config=cfg)
    kinds = [e.kind for e in lg.events(eid)]
    assert "forced_final" in kinds
    ff = next(e for e in lg.events(eid) if e.kind == "forced_final")
    assert ff.reason == "unaffordable_question"
    assert st.outcome is Outcome.EXHAUSTED
    assert not any(e.kind == "user_reply" and e.reply_kind == "answer" for e in lg.events(eid))


def test_patience_never_negative(play):
    lg, eid, st = play([Malformed()] * 30, persona_="spontaneous", config=NO_SHIFTS)
    assert all(c.after >= 0 for c in charges(lg, eid))
    assert st.patience == 0.0 and st.outcome is Outcome.EXHAUSTED


def test_affordability_helpers():
    assert affordable(4.0, 4.0, 1e-9) and not affordable(3.999, 4.0, 1e-9)
    assert after_charge(1.0, 4.0, 1e-9) == 0.0
    assert after_charge(2.0 + 1e-12, 2.0, 1e-9) == 0.0
