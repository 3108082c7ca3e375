"""core.studio.roleplay: blind set-up, agent rebuild by replay, the user page's read model, shop
and forms."""

from __future__ import annotations

import pytest

from core.engine import episode
from core.errors import ConfigError
from core.model.actions import Ask, EnvOp, Propose
from core.model.episode import Outcome
from core.model.events import AgentActed, ShiftFired
from core.model.world import EnvAction, ToolSpec
from core.protocol.shifts import draw_fates
from core.runner.plan import SampleSource, load_world
from core.studio import roleplay as play
from core.studio.reply_check import send_reply


def _fires_at_start(store, benchmark: str, sample_id: str, seed: int) -> bool:
    """Whether the first placement's fate (rational: one placement 1.0) fires."""
    sample = SampleSource(store).sample(benchmark, sample_id)
    key = f"{sample.graph_id}:{sample.sample_id}:{seed}"
    return draw_fates(key, 1, 0.6, True)[0]


def _seed(store, benchmark: str, sample_id: str, fires: bool) -> int:
    return next(s for s in range(50) if _fires_at_start(store, benchmark, sample_id, s) == fires)


def test_sample_choices_are_blind_and_choose_is_seeded(store) -> None:
    choices = play.sample_choices(store, "mock")
    assert len(choices) >= 11
    assert set(choices[0].model_dump()) == {"sample_id", "benchmark"}
    ids = [c.sample_id for c in choices]
    a = play.choose_sample(store, "mock", None, 7)
    assert a in ids and a == play.choose_sample(store, "mock", None, 7)
    assert play.choose_sample(store, "mock", ids[3], 7) == ids[3]
    with pytest.raises(ConfigError) as e:
        play.choose_sample(store, "mock", "nope", 0)
    assert e.value.field == "sample_id"
    with pytest.raises(ConfigError):
        play.sample_choices(store, "chess")


def test_start_agent_play_is_human_and_meter_follows_condition(store) -> None:
    sid = play.sample_choices(store, "mock")[0].sample_id
    hidden = play.start_agent_play(
        store, benchmark="mock", sample_id=sid, persona="rational", seed=0
    )
    shown = play.start_agent_play(
        store, benchmark="mock", sample_id=sid, persona="rational", seed=0, show_patience=True
    )
    assert episode.agent_view(store, hidden).patience is None
    assert episode.agent_view(store, shown).patience == 10.0
    h = store.header(hidden)
    assert (h.agent, h.method, h.user_voice) == ("human", "human", "template")
    assert play.playable(store, hidden, "agent") and not play.playable(store, hidden, "user")
    assert not play.playable(store, "missing", "agent")


def test_start_user_play_refuses_methods_that_cannot_face_a_human(store) -> None:
    with pytest.raises(ConfigError) as e:
        play.start_user_play(
            store, benchmark="mock", sample_id=None, persona="rational", seed=0, method="ORACLE"
        )
    assert e.value.field == "method"


@pytest.mark.parametrize("method", play.USER_PLAY_METHODS)
def test_human_user_episode_replays_the_agent_exactly(store, method: str) -> None:
    eid = play.start_user_play(
        store, benchmark="mock", sample_id=None, persona="dependent", seed=1, method=method
    )
    view = play.advance(store, eid)
    for _ in range(12):
        if view.ended:
            break
        # a question, or (after a rejected proposal) the person's own reaction
        assert view.pending_question is not None or view.pending_reaction
        # tick every requirement: the reply discloses the whole current goal
        view = send_reply(
            store,
            eid,
            "Here is what I need.",
            added=[line.slot for line in view.intent],
            deliberate=True,
        )
    assert view.ended
    rebuilt = play.rebuild_agent(store, eid)
    acted = [e for e in store.events(eid) if isinstance(e, AgentActed)]
    assert rebuilt.replayed == len(acted) > 0
    assert rebuilt.mismatches == []


def test_rebuilt_agent_keeps_memory_across_reruns(store) -> None:
    """A1 asks its wide question once; a fresh agent without the replay would ask it again."""
    from core.agents.factory import build_agent
    from core.runner.plan import literal_intent

    eid = play.start_user_play(
        store, benchmark="mock", sample_id=None, persona="rational", seed=2, method="A1"
    )
    assert play.advance(store, eid).pending_question is not None
    episode.respond(store, eid, "whatever", [])
    view = episode.agent_view(store, eid)
    start = store.events(eid)[0]
    naive = build_agent(
        "A1", world=load_world("mock"), literal=literal_intent(start.sample, start.graph)
    )
    naive.attach(store, eid)
    assert isinstance(naive.act(view), Ask)
    rebuilt = play.rebuild_agent(store, eid)
    assert rebuilt.replayed == 1 and not rebuilt.mismatches
    assert not isinstance(rebuilt.agent.act(view), Ask)


def test_user_play_view_reports_shift_and_verdicts(store) -> None:
    sid = play.sample_choices(store, "mock")[0].sample_id
    seed = _seed(store, "mock", sid, fires=True)
    eid = play.start_user_play(
        store, benchmark="mock", sample_id=sid, persona="rational", seed=seed, method="A2"
    )
    view = play.advance(store, eid)
    before = {line.slot: line.value for line in view.intent}
    view = send_reply(store, eid, "teal", added=[view.intent[0].slot], deliberate=True)
    pv = play.user_play_view(store, eid)
    assert len(pv.shifts) == 1 and pv.shifts[0].text
    fired = [e for e in store.events(eid) if isinstance(e, ShiftFired)]
    assert fired and fired[0].after_reply
    after = {line.slot: line.value for line in pv.user.intent}
    assert after != before
    while not pv.user.ended:
        pv = play.user_play_view(store, eid)
        if pv.user.ended:
            break
        send_reply(store, eid, "ok", added=[line.slot for line in pv.user.intent], deliberate=True)
    assert pv.verdicts and pv.verdicts[-1].accepted == (pv.user.outcome == Outcome.SUCCESS)
    assert pv.reason is not None


def test_describe_shift_phrases_the_change() -> None:
    world = load_world("mock")
    from core.envs.mock import mock_graph

    g = mock_graph()
    root = g.root
    by_op = {e.operator: g.node(e.dst) for e in g.edges}
    refine = play.describe_shift(world, root, by_op["refine"], "refine")
    assert refine.startswith("new: ")
    relax = play.describe_shift(world, root, by_op["relax"], "relax")
    assert relax.startswith("dropped: ")
    pivot = play.describe_shift(world, root, by_op["pivot"], "pivot")
    assert pivot.startswith("something else now (")
    subst = [g.node(e.dst) for e in g.edges if e.operator == "substitute"]
    assert all(
        play.describe_shift(world, root, d, "substitute").startswith("changed: ") for d in subst
    )
    crimson = play.describe_shift(world, root, subst[0], "substitute")
    assert "crimson" in crimson and "(was: " in crimson and "teal" in crimson


def test_shop_page_follows_the_agents_own_calls(store) -> None:
    sid = play.sample_choices(store, "webshop")[0].sample_id
    eid = play.start_agent_play(
        store, benchmark="webshop", sample_id=sid, persona="rational", seed=0
    )
    view = episode.agent_view(store, eid)
    assert play.shop_page(view).kind == "search"
    view = episode.step(store, eid, EnvOp(action=EnvAction(tool="search", args={"query": "shirt"})))
    page = play.shop_page(view)
    assert page.kind == "results" and page.results.items
    asin = page.results.items[0].asin
    view = episode.step(store, eid, EnvOp(action=EnvAction(tool="click", args={"target": asin})))
    page = play.shop_page(view)
    assert page.kind == "item" and page.item.asin == asin
    view = episode.step(store, eid, Ask(text="Which colour?"))
    assert play.shop_page(view).item.asin == asin  # messages do not move the page
    view = episode.step(store, eid, Propose(text="this one"))
    assert play.shop_page(episode.agent_view(store, eid)).kind == "item"
    mock_view = episode.agent_view(
        store,
        play.start_agent_play(store, benchmark="mock", sample_id=None, persona="rational", seed=0),
    )
    assert play.shop_page(mock_view) is None


def _tool(props: dict, required: list[str]) -> ToolSpec:
    return ToolSpec(
        name="t",
        description="d",
        kind="write",
        parameters={"type": "object", "properties": props, "required": required},
    )


def test_arg_fields_follow_the_schema() -> None:
    world = load_world("tau2_airline")
    book = next(t for t in world.tools() if t.name == "book_reservation")
    kinds = {f.name: f.kind for f in play.arg_fields(book)}
    assert kinds["flights"] == "json" and kinds["total_baggages"] == "integer"
    flights = next(f for f in play.arg_fields(book) if f.name == "flights")
    assert '"flight_number"' in flights.example
    retail = load_world("tau2_retail")
    ret = next(t for t in retail.tools() if t.name == "return_delivered_order_items")
    assert {f.name: f.kind for f in play.arg_fields(ret)}["item_ids"] == "list"


def test_build_args_types_and_errors() -> None:
    tool = _tool(
        {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "n": {"type": "number"},
            "b": {"type": "boolean"},
            "l": {"type": "array", "items": {"type": "string"}},
            "li": {"type": "array", "items": {"type": "integer"}},
            "o": {"type": "array", "items": {"type": "object"}},
            "opt": {"type": "string"},
        },
        ["s", "i"],
    )
    args = play.build_args(
        tool,
        {
            "s": "#W1",
            "i": 3.0,
            "n": "2.5",
            "b": "true",
            "l": "a\nb\n",
            "li": "1, 2",
            "o": '[{"x": 1}]',
            "opt": "",
        },
    )
    assert args == {
        "s": "#W1",
        "i": 3,
        "n": 2.5,
        "b": True,
        "l": ["a", "b"],
        "li": [1, 2],
        "o": [{"x": 1}],
    }
    assert play.build_args(tool, {"s": "x", "i": "4", "l": "a, b"})["l"] == ["a", "b"]
    for values, field in (
        ({"i": 1}, "s"),
        ({"s": "x"}, "i"),
        ({"s": "x", "i": 1.5}, "i"),
        ({"s": "x", "i": "many"}, "i"),
        ({"s": "x", "i": 1, "b": "maybe"}, "b"),
        ({"s": "x", "i": 1, "o": "{not json"}, "o"),
    ):
        with pytest.raises(ConfigError) as e:
            play.build_args(tool, values)
        assert e.value.field == field
