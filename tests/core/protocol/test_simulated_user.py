"""The simulated user's rules: disclosure, decline/persistence, volunteer, repeats, context."""

from __future__ import annotations

from protohelp import ask, buy, persona

from core.engine import episode
from core.envs.mock import mock_graph, mock_sample
from core.errors import ProtocolError
from core.model.actions import Propose
from core.model.config import ProtocolConfig
from core.model.events import UserReplied
from core.model.sample import FaultType
from core.protocol.matching import slots_asked

NEVER = ProtocolConfig(shift_fire_prob=0.0)


def replies(log, eid):
    return [e for e in log.events(eid) if isinstance(e, UserReplied)]


def test_answer_discloses_asked_hidden_slot(play):
    lg, eid, st = play([ask("color")], config=NEVER)
    r = replies(lg, eid)[0]
    assert r.reply_kind == "answer"
    assert [(d.slot, d.value, d.how) for d in r.disclosures if d.how == "answer"] == [
        ("color", "teal", "answer")
    ]
    assert "teal" in r.text


def test_slots_per_answer_caps_disclosures(play):
    one = persona("rational", volunteer=0.0)
    two = persona("dependent", volunteer=0.0)
    q = ask(None, "What colour and size and price?")
    q = q.model_copy(update={"asks": ("color", "size", "price_upper")})
    lg, eid, _ = play([q], persona_=one, config=NEVER)
    assert len(replies(lg, eid)[0].disclosures) == 1
    lg, eid, _ = play([q], persona_=two, config=NEVER)
    assert len(replies(lg, eid)[0].disclosures) == 2


def test_decline_and_per_slot_persistence(play):
    always = persona("avoidant", decline=1.0)
    # 1st ask declined; the same slot in 2 consecutive questions overrides the decline
    lg, eid, _ = play([ask("color"), ask("color")], persona_=always, config=NEVER)
    r = replies(lg, eid)
    assert r[0].reply_kind == "decline" and r[0].declined == ("color",) and not r[0].disclosures
    assert r[1].reply_kind == "answer" and r[1].disclosures[0].slot == "color"


def test_persistence_is_tracked_per_slot(play):
    always = persona("avoidant", decline=1.0, patience_multiplier=3.0)
    # alternating slots: never consecutive; the 4th ask of 'color' in total cracks it
    acts = [
        ask("color"),
        ask("size"),
        ask("color"),
        ask("size"),
        ask("color"),
        ask("size"),
        ask("color"),
    ]
    lg, eid, _ = play(acts, persona_=always, config=NEVER)
    r = replies(lg, eid)
    assert [x.reply_kind for x in r[:6]] == ["decline"] * 6
    assert r[6].reply_kind == "answer" and r[6].disclosures[0].slot == "color"


def test_volunteer_adds_one_owed_slot_flagged(play):
    vol = persona("rational", volunteer=1.0)
    # fault with two hidden-ish owed slots: ask about the stated price, volunteer the hidden colour
    lg, eid, _ = play([ask("price_upper")], persona_=vol, config=NEVER)
    d = replies(lg, eid)[0].disclosures
    assert [(x.slot, x.how) for x in d] == [("price_upper", "answer"), ("color", "volunteer")]


def test_already_asked_gives_no_new_information(play):
    lg, eid, _ = play([ask("color"), ask("color"), ask("color")], config=NEVER)
    r = replies(lg, eid)
    assert r[1].reply_kind == "already_asked" and r[1].repeated == ("color",)
    assert not r[1].disclosures and r[2].text != "" and r[2].reply_kind == "already_asked"


def test_unmatched_question_confusion_and_context_facts(play, world):
    lg, eid, _ = play([ask(None, "How is the weather?")], config=NEVER)
    assert replies(lg, eid)[0].reply_kind == "confusion"
    # context facts answered without any reveal
    from core.model.intent import Intent, IntentGraph

    g = mock_graph()
    root = g.root.model_copy(update={"context": {"account id": "acct_77"}})
    g2 = IntentGraph(
        graph_id=g.graph_id,
        benchmark=g.benchmark,
        env_id=g.env_id,
        root=root,
        children=g.children,
        edges=g.edges,
    )
    assert isinstance(root, Intent)
    from protohelp import ListAgent

    from core.engine.eventlog import InMemoryEventLog

    lg = InMemoryEventLog()
    eid = episode.start(
        lg, mock_sample(FaultType.INSUFFICIENT_INFORMATION), "rational", 0, "L", NEVER, graph=g2
    )
    episode.run(lg, eid, ListAgent([ask(None, "What is your account id?")]))
    r = replies(lg, eid)[0]
    assert r.reply_kind == "context" and r.disclosures[0].how == "context"
    assert "acct_77" in r.text
    assert episode.researcher_view(lg, eid).state["disclosed"] == {}


def test_rejection_hint_names_without_reciting(play):
    hinty = persona("rational", hint_on_rejection=1.0)
    lg, eid, _ = play([buy("s04"), Propose(text="done")], persona_=hinty, config=NEVER)
    r = [x for x in replies(lg, eid) if x.reply_kind == "rejection"][0]
    assert r.hinted == ("color",)
    assert "colour" in r.text.lower() and "teal" not in r.text.lower()
    assert [(d.slot, d.value, d.how) for d in r.disclosures] == [("color", None, "rejection_hint")]
    quiet = persona("rational", hint_on_rejection=0.0)
    lg, eid, _ = play([buy("s04"), Propose(text="done")], persona_=quiet, config=NEVER)
    r = [x for x in replies(lg, eid) if x.reply_kind == "rejection"][0]
    assert r.hinted == () and r.disclosures == ()


def test_acceptance_reply(play):
    lg, eid, st = play([buy("s01"), Propose(text="done")], config=NEVER)
    assert replies(lg, eid)[-1].reply_kind == "acceptance"


def test_mute_user_discloses_nothing(play):
    lg, eid, _ = play([ask("color")], config=NEVER, user_voice="mute")
    r = replies(lg, eid)[0]
    assert (
        r.reply_kind == "mute" and r.disclosures == () and r.text == "(the user does not respond)"
    )


def test_human_user_reply_becomes_the_same_events(log):
    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "h",
        NEVER,
        graph=mock_graph(),
        user_voice="human",
    )
    view = episode.step(log, eid, ask("color"))
    assert view.awaiting_user
    uv = episode.user_view(log, eid)
    assert uv.pending_question == "Which color?" and uv.pending_asked == ("color",)
    try:
        episode.step(log, eid, ask("size"))
        raise AssertionError("expected ProtocolError")
    except ProtocolError:
        pass
    uv = episode.respond(log, eid, "Teal, and medium please.", ["color", "size"])
    r = replies(log, eid)[-1]
    assert r.voice == "human" and r.text == "Teal, and medium please."
    assert [(d.slot, d.how) for d in r.disclosures] == [("color", "answer"), ("size", "volunteer")]
    assert uv.disclosed == {"color": "teal", "size": "medium"}
    assert not episode.agent_view(log, eid).awaiting_user


def test_slots_asked_keyword_matcher(world):
    root = mock_graph().root
    assert slots_asked("What colour do you like?", root, world) == ["color"]
    assert slots_asked("Which size, and what's your budget?", root, world) == [
        "price_upper",
        "size",
    ] or (
        sorted(slots_asked("Which size, and what's your budget?", root, world))
        == ["price_upper", "size"]
    )
    assert slots_asked("Hello there", root, world) == []


def _context_play(question: str):  # type: ignore[no-untyped-def]
    from protohelp import ListAgent

    from core.engine.eventlog import InMemoryEventLog
    from core.model.intent import IntentGraph

    g = mock_graph()
    ctx = {"first_name": "Ines", "last_name": "Haddad", "user_id": "ines_haddad_6145"}
    root = g.root.model_copy(update={"context": ctx})
    g2 = IntentGraph(
        graph_id=g.graph_id,
        benchmark=g.benchmark,
        env_id=g.env_id,
        root=root,
        children=g.children,
        edges=g.edges,
    )
    lg = InMemoryEventLog()
    eid = episode.start(
        lg, mock_sample(FaultType.INSUFFICIENT_INFORMATION), "rational", 0, "L", NEVER, graph=g2
    )
    episode.run(lg, eid, ListAgent([ask(None, question)]))
    return replies(lg, eid)[0]


def test_off_topic_words_shared_with_a_fact_name_reveal_no_fact():
    # "last night" / "first game" share one word with last_name / first_name: off-topic chatter,
    # not a request for the customer's name (it was answered "My last name is Haddad.")
    for question in (
        "By the way, did you watch the football game last night?",
        "Did you see the first game of the season?",
        "Which user interface do you like best?",
    ):
        r = _context_play(question)
        assert r.reply_kind == "confusion", (question, r.text)
        assert r.disclosures == ()
    # asking for the fact by its name still gets it
    r = _context_play("Could you give me your last name, please?")
    assert r.reply_kind == "context" and "Haddad" in r.text
    assert [d.slot for d in r.disclosures] == ["last_name"]
