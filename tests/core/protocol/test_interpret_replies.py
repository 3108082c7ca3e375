"""The interpreter inside episodes: open questions, confirmations, no-requirement questions,
rejection hints, suggestibility on the question's own words; and the slot-safety property."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from interp_help import intents, read
from protohelp import ask, buy, persona

from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import mock_graph, mock_sample
from core.envs.registry import load_world
from core.model.actions import Ask, Propose
from core.model.config import ProtocolConfig
from core.model.events import ShiftFired, UserReplied
from core.model.sample import FaultType
from core.protocol.interpret import interpret

NEVER = ProtocolConfig(shift_fire_prob=0.0)
QUIET = {"volunteer": 0.0, "decline": 0.0}


def replies(log, eid):
    return [e for e in log.events(eid) if isinstance(e, UserReplied)]


def test_open_question_discloses_owed_slots_per_answer(play):
    lg, eid, _ = play(
        [ask(None, "Anything else I should know?")],
        config=NEVER,
        persona_=persona("rational", **QUIET),
    )
    r = replies(lg, eid)[0]
    assert r.reply_kind == "answer" and [d.how for d in r.disclosures] == ["answer"]
    assert r.disclosures[0].slot == "color" and "teal" in r.text
    lg, eid, _ = play(
        [ask(None, "What are you looking for?")],
        config=NEVER,
        persona_=persona("dependent", **QUIET),
        fault=FaultType.FACTUAL_ERROR,
    )
    assert len(replies(lg, eid)[0].disclosures) <= 2


def test_open_question_with_nothing_owed(play):
    acts = [ask("color"), Ask(text="Anything else?")]
    lg, eid, _ = play(acts, config=NEVER, persona_=persona("rational", **QUIET))
    r = replies(lg, eid)[1]
    assert r.reply_kind == "answer" and r.disclosures == ()
    assert "teal" not in r.text.lower()


def test_confirmation_yes_and_no_disclose_per_persona(play):
    p = persona("rational", **QUIET)
    lg, eid, _ = play(
        [Ask(text="I'll buy the teal shirt, shall I go ahead?")], config=NEVER, persona_=p
    )
    r = replies(lg, eid)[0]
    assert (
        r.reply_kind == "answer"
        and r.disclosures == ()
        and r.text.lower().startswith(("yes", "confirmed"))
    )
    # proto-4: a wrong confirmation is a no; with the hint probability it names the part that
    # is wrong (a hint, never the value), without it it is a plain no
    hinty = persona("rational", **{**QUIET, "hint_on_rejection": 1.0})
    lg, eid, _ = play([Ask(text="I'll buy the crimson shirt, OK?")], config=NEVER, persona_=hinty)
    r = replies(lg, eid)[0]
    assert [(d.slot, d.how, d.value) for d in r.disclosures] == [("color", "rejection_hint", None)]
    assert "teal" not in r.text.lower() and "colour" in r.text.lower()
    assert r.text.lower().startswith(("no", "incorrect"))
    silent = persona("rational", **{**QUIET, "hint_on_rejection": 0.0})
    lg, eid, _ = play([Ask(text="I'll buy the crimson shirt, OK?")], config=NEVER, persona_=silent)
    r = replies(lg, eid)[0]
    assert r.disclosures == () and "teal" not in r.text.lower()
    assert r.text.lower().startswith("no")


def test_confirmation_costs_a_question(play):
    lg, eid, st = play([Ask(text="Shall I go ahead?")], config=NEVER)
    charges = [e for e in lg.events(eid) if e.kind == "patience_charged"]
    assert charges and charges[0].reason == "question" and charges[0].cost == 2.0


def test_question_about_no_requirement_is_not_confusion(play):
    lg, eid, _ = play([Ask(text="What material would you like?")], config=NEVER)
    r = replies(lg, eid)[0]
    assert r.reply_kind == "answer" and r.disclosures == ()
    assert "understand" not in r.text.lower()
    lg, eid, _ = play([Ask(text="How is the weather?")], config=NEVER)
    assert replies(lg, eid)[0].reply_kind == "confusion"


def test_hint_names_what_is_wrong_in_plain_words(play):
    hinty = persona("rational", hint_on_rejection=1.0)
    lg, eid, _ = play([buy("s06"), Propose(text="done")], persona_=hinty, config=NEVER)
    r = [x for x in replies(lg, eid) if x.reply_kind == "rejection"][0]
    assert r.hinted == ("price_upper",) and "budget" in r.text and "40" not in r.text
    # the agent knew everything and still bought the wrong colour: still a hint
    acts = [ask("color"), ask("size"), ask("price_upper"), buy("s04"), Propose(text="done")]
    lg, eid, _ = play(acts, persona_=hinty, config=NEVER)
    r = [x for x in replies(lg, eid) if x.reply_kind == "rejection"][0]
    assert r.hinted == ("color",) and "colour" in r.text


def test_suggestibility_reads_the_words_not_the_declared_ids(play):
    p = persona("intuitive", suggestibility=1.0)
    graph = mock_graph()
    # declared slot ids name the size, the words ask something else entirely: no trigger
    q = Ask(text="Is it raining where you are?", asks=("size",))
    lg, eid, _ = play([q], persona_=p, config=ProtocolConfig(shift_fire_prob=0.0))
    assert not [e for e in lg.events(eid) if isinstance(e, ShiftFired)]
    # undeclared, but the words ask about the size ("how big"): the trigger fires on-topic
    for seed in range(6):
        lg, eid, _ = play([Ask(text="How big should it be?")], persona_=p, seed=seed)
        fired = [e for e in lg.events(eid) if isinstance(e, ShiftFired) and e.trigger]
        assert fired and "size" in fired[0].trigger.slots
        src, dst = graph.node(fired[0].edge.src), graph.node(fired[0].edge.dst)
        assert fired[0].edge.operator != "pivot" and src.intent_id != dst.intent_id


_WORDS = (
    "what which how many much colour color size budget price spend afford refund pay card order "
    "items return exchange bags insurance yes no ok shall i go ahead proceed confirm cabin flight "
    "passengers address zip email name reason why anything else help features pack scent the a "
    "you your would like want need do is it for with in on $40 12 2 black white teal"
).split()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.sampled_from(_WORDS) | st.text(max_size=8), min_size=0, max_size=14),
    which=st.integers(min_value=0, max_value=10_000),
    bench=st.sampled_from(["mock", "webshop", "tau2_retail", "tau2_airline"]),
    mark=st.sampled_from(["?", ".", "", "? (yes/no)"]),
)
def test_interpreter_never_returns_a_slot_outside_the_intent(words, which, bench, mark):
    pool = (mock_graph().root, *mock_graph().children) if bench == "mock" else intents(bench)
    it = pool[which % len(pool)]
    got = interpret(" ".join(words) + mark, it, load_world(bench))
    ids = {c.slot for c in it.conditions}
    assert set(got.slots) <= ids and set(got.wrong) <= set(got.slots) | ids
    assert set(got.wrong) <= ids
    assert got.act in ("slots", "open", "confirm", "offtopic")
    assert (got.confirm is None) == (got.act != "confirm")


def test_hints_never_recite_hidden_values_or_internal_labels():
    """Every world's rejection hints: plain words, no slot ids, no hidden values."""
    from core.construction.pipeline import load_bundled

    for bench in ("webshop", "tau2_retail", "tau2_airline"):
        graphs, samples = load_bundled(bench)
        by_id = {g.graph_id: g for g in graphs}
        for s in samples[:25]:
            g = by_id[s.graph_id]
            lg = InMemoryEventLog()
            eid = episode.start(
                lg, s, persona("rational", hint_on_rejection=1.0), 0, "L", NEVER, graph=g
            )
            st_ = episode.run(lg, eid, _Proposer())
            for r in replies(lg, eid):
                if r.reply_kind != "rejection":
                    continue
                low = r.text.lower()
                assert not re.search(r"\b(arg|attr|option):|address1|address2|_ids?\b", low), low
                for m in s.mask:
                    if m.hidden and isinstance(m.true_value, str) and len(m.true_value) > 3:
                        assert m.true_value.strip('"').lower() not in low, (m.slot, low)
                assert "the feature and the feature" not in low
            assert st_.ended


class _Proposer:
    spec = "P"

    def act(self, view):
        return Propose(text="done")


def test_interpreter_tests_use_the_sample_world():
    it = mock_sample(FaultType.INSUFFICIENT_INFORMATION)
    assert it.benchmark == "mock"
    assert read("mock", "Which colour?", mock_graph().root).slots == ("color",)
