"""The world's protocol surface and adapter hooks: seeds, execute, adjudicate, phrase, oracle."""

from __future__ import annotations

import json

import pytest

from core.envs.base import EnvSession, HostWorld
from core.envs.webshop import load_webshop_world, load_webshop_world_from_payload
from core.envs.webshop.reward import best_options
from core.envs.webshop.world import WebShopWorld
from core.errors import ConfigError
from core.model.config import ProtocolConfig
from core.model.intent import Condition, Intent
from core.model.world import EnvAction


def buy(world: WebShopWorld, asin: str, options: list[str]) -> EnvSession:
    s = world.open_session()
    s.act(EnvAction(tool="search", args={"query": world.catalogue.by_asin[asin].title}))
    hits = world.catalogue.search(world.catalogue.by_asin[asin].title)
    for _ in range(hits.index(asin) // 10):
        assert s.act(EnvAction(tool="click", args={"target": "next >"})).ok
    assert s.act(EnvAction(tool="click", args={"target": asin})).ok
    for v in options:
        assert s.act(EnvAction(tool="click", args={"target": v})).ok
    assert s.act(EnvAction(tool="click", args={"target": "buy now"})).ok
    return s


def test_protocol_conformance(tiny_world: WebShopWorld) -> None:
    assert isinstance(tiny_world, HostWorld)
    assert isinstance(tiny_world.open_session(), EnvSession)
    assert tiny_world.benchmark == "webshop"
    assert [t.name for t in tiny_world.tools()] == ["search", "click"]
    assert tiny_world.tools()[0].parameters["required"] == ["query"]
    assert tiny_world.tools()[1].parameters["required"] == ["target"]
    assert len(tiny_world.world_id) == 16


def test_seeds(tiny_world: WebShopWorld) -> None:
    root = tiny_world.seeds()[0]
    assert (root.benchmark, root.env_id, root.base, root.is_seed) == (
        "webshop",
        "running shoes",
        "g0",
        True,
    )
    assert [(c.slot, c.op, c.value) for c in root.conditions] == [
        ("attr:arch support", "=", "arch support"),
        ("option:0", "=", "black"),
        ("option:1", "=", "10"),
        ("price_upper", "<=", 50),
    ]
    assert root.context == {"product": "running shoes"}
    assert root.source_record == "g0"


def test_execute_ground_truth(tiny_world: WebShopWorld) -> None:
    root = tiny_world.seeds()[0]
    gt = tiny_world.execute(root)
    assert gt.kind == "purchaseset"
    # B1 has the attribute; B2 lacks it; B3 lacks black; B4 over the cap; fillers lack it.
    assert gt.value == ['["B000000001",[["color","black"],["size","10"]]]']
    assert tiny_world.execute(root) is gt  # cached
    relaxed = Intent.build(
        benchmark="webshop",
        env_id="running shoes",
        base="g0",
        conditions=[Condition(slot="option:0", value="black")],
    )
    rows = [json.loads(r)[0] for r in tiny_world.execute(relaxed).value]
    assert "B000000003" not in rows and "B000000004" in rows and len(rows) == 26
    by_name = Intent.build(
        benchmark="webshop",
        env_id="running shoes",
        base="g0",
        conditions=[Condition(slot="option:color", value="red")],
    )
    assert tiny_world.execute(by_name).value == ['["B000000003",[["color","red"]]]']


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"base": "nope"}, "base"),
        ({"env_id": "nope"}, "env_id"),
        ({"conditions": [Condition(slot="colour", value="red")]}, "slot"),
    ],
)
def test_execute_rejects_bad_intents(tiny_world: WebShopWorld, kw: dict, field: str) -> None:
    args: dict = {"benchmark": "webshop", "env_id": "running shoes", "base": "g0", "conditions": []}
    args.update(kw)
    with pytest.raises(ConfigError) as err:
        tiny_world.execute(Intent.build(**args))
    assert err.value.field == field


def test_adjudicate(tiny_world: WebShopWorld) -> None:
    root = tiny_world.seeds()[0]
    v = tiny_world.judge(root, tiny_world.open_session(), ProtocolConfig())
    assert (v.accepted, v.reason, v.score) == (False, "nothing_selected_to_buy", 0.0)
    v = tiny_world.judge(root, buy(tiny_world, "B000000001", ["black", "10"]), ProtocolConfig())
    assert (v.accepted, v.reason, v.score) == (True, "reward=1.000", 1.0)
    v = tiny_world.judge(root, buy(tiny_world, "B000000001", ["black"]), ProtocolConfig())
    assert (v.accepted, v.reason) == (False, "reward=0.750")
    v = tiny_world.judge(root, buy(tiny_world, "B000000004", ["black", "10"]), ProtocolConfig())
    assert (v.accepted, v.reason) == (False, "over_price_limit")
    assert v.score == pytest.approx(0.75)

    class Fake:
        def act(self, action: EnvAction) -> object:
            raise AssertionError

        def proposal(self) -> dict:
            return {"asin": "ZZZ", "options": {}}

    assert tiny_world.judge(root, Fake(), ProtocolConfig()).reason == "unknown_asin"  # type: ignore[arg-type]


def test_phrase_and_labels(tiny_world: WebShopWorld) -> None:
    root = tiny_world.seeds()[0]
    assert [tiny_world.phrase(c) for c in root.conditions] == [
        "arch support",
        "in black",
        "in size 10",
        "under $50",
    ]
    assert [tiny_world.slot_label(c) for c in root.conditions] == [
        "feature",
        "color",
        "size",
        "price",
    ]
    assert tiny_world.phrase(Condition(slot="price_upper", op="<=", value=19.5)) == "under $19.50"
    assert tiny_world.phrase(Condition(slot="option:scent", value="lemon")) == "with a lemon scent"
    assert tiny_world.phrase(Condition(slot="option:3", value="zzz")) == "zzz"


def test_reward_api_and_errors(tiny_world: WebShopWorld) -> None:
    goal = tiny_world.goal("g0")
    r = tiny_world.reward(goal, "b000000001", {"color": "black", "size": "10"})
    assert r.reward == 1.0 and r.query_match and r.r_price
    assert tiny_world.reward(tiny_world.seeds()[0], "B000000002", {}).num_attr_matches == 0
    with pytest.raises(ConfigError):
        tiny_world.reward(goal, "nope", {})
    with pytest.raises(ConfigError):
        tiny_world.goal("g999")


def test_compile_intent_buys_a_ground_truth_item(bundled_world: WebShopWorld) -> None:
    w = bundled_world
    for intent in w.seeds()[::37]:
        s = w.open_session()
        for action in w.compile_intent(intent):
            assert s.act(action).ok
        assert w.judge(intent, s, ProtocolConfig()).accepted
        prop = s.proposal()
        assert prop is not None
        assert w.execute(intent).contains(
            json.dumps(
                [prop["asin"], sorted([k, v] for k, v in prop["options"].items())],
                separators=(",", ":"),
            )
        )


def test_compile_intent_without_answers_raises(tiny_world: WebShopWorld) -> None:
    impossible = Intent.build(
        benchmark="webshop",
        env_id="running shoes",
        base="g0",
        conditions=[Condition(slot="option:0", value="purple")],
    )
    with pytest.raises(ConfigError):
        tiny_world.compile_intent(impossible)


def test_bundled_world_size_and_ground_truth(bundled_world: WebShopWorld) -> None:
    w = bundled_world
    assert len(w.products) >= 2000 and len(w.goals) >= 500
    assert len(w.catalogue.clusters) >= 12
    assert all(len(ps) >= 100 for ps in w.catalogue.clusters.values())
    seeds = w.seeds()
    assert len({s.intent_id for s in seeds}) == len(seeds)
    for goal, seed in zip(w.goals, seeds, strict=True):
        rows = w.execute(seed).value
        assert any(json.loads(r)[0] == goal.asin for r in rows), goal.goal_id


def test_bundled_goals_have_near_miss_distractors(bundled_world: WebShopWorld) -> None:
    """Each goal's cluster holds same-type items that lose exactly one requirement."""
    w = bundled_world
    kinds = {"attribute": 0, "option": 0, "price": 0}
    for goal in w.goals[::5]:
        spec = w.goal_spec(goal)
        found = set()
        for p in w.catalogue.clusters[goal.query]:
            if p.asin == goal.asin:
                continue
            r = w.reward(spec, p.asin, best_options(p, spec.goal_options))
            if r.r_type < 1.0:
                continue
            misses = [
                ("attribute", r.num_attr_matches < len(spec.attributes)),
                ("option", r.num_option_matches < len(spec.goal_options)),
                ("price", not r.r_price),
            ]
            failing = [k for k, bad in misses if bad]
            if len(failing) == 1:
                found.add(failing[0])
        assert "price" in found and ("attribute" in found or "option" in found), goal.goal_id
        for k in found:
            kinds[k] += 1
    assert min(kinds.values()) > 0


def test_payload_round_trip_gives_same_world_id(bundled_world: WebShopWorld) -> None:
    again = load_webshop_world_from_payload(bundled_world.payload.model_dump(mode="json"))
    assert again.world_id == bundled_world.world_id
    assert load_webshop_world_from_payload(bundled_world.payload.model_dump(mode="json")) is again
    assert load_webshop_world() is bundled_world  # cached per process
