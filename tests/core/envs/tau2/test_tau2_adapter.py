"""Adapter hooks (seeds, compile, execute, adjudicate, phrase) and grading."""

from __future__ import annotations

import json

import pytest

from core.envs.tau2 import Tau2World
from core.envs.tau2.adapter import write_key
from core.envs.tau2.grading import communicate_ok, golden_actions, grade
from core.errors import ConfigError
from core.model.config import ProtocolConfig
from core.model.intent import Condition, Intent
from core.model.world import EnvAction


def test_seeds(retail: Tau2World, airline: Tau2World) -> None:
    [seed] = retail.seeds()  # task "b" has no write
    assert seed.base == "a" and seed.is_seed and seed.source_record == "a"
    assert seed.benchmark == "tau2_retail" and seed.env_id == "retail"
    slots = {c.slot: c.value for c in seed.conditions}
    assert slots["arg:0:cancel_pending_order:reason"] == '"no longer needed"'
    assert slots["arg:1:exchange_delivered_order_items:item_ids"] == '["2000000011","2000000001"]'
    assert seed.context["user_id"] == "ana_lee_1" and seed.context["zip"] == "10001"
    assert seed.context["email"] == "Ana.Lee@example.com"
    assert seed.ground_truth is not None and seed.ground_truth.kind == "statehash"
    [aseed] = airline.seeds()
    assert [a.tool for a in airline.compile_intent(aseed)] == [
        "send_certificate",
        "cancel_reservation",
    ]
    assert json.loads(aseed.slot_map()["arg:0:send_certificate:amount"].value) == 50


def test_execute_and_compile(retail: Tau2World) -> None:
    [seed] = retail.seeds()
    actions = retail.compile_intent(seed)
    assert [a.tool for a in actions] == ["cancel_pending_order", "exchange_delivered_order_items"]
    assert retail.execute(seed) == seed.ground_truth
    bad = Intent.build(
        benchmark="tau2_retail",
        env_id="retail",
        base="a",
        conditions=[
            Condition(slot="arg:0:cancel_pending_order:order_id", value='"#W0000002"'),
            Condition(slot="arg:0:cancel_pending_order:reason", value='"no longer needed"'),
        ],
    )
    with pytest.raises(ConfigError, match="Non-pending order cannot be cancelled"):
        retail.execute(bad)
    with pytest.raises(ConfigError):
        retail.compile_intent(
            Intent.build(
                benchmark="tau2_retail",
                env_id="retail",
                base="a",
                conditions=[Condition(slot="color", value="x")],
            )
        )


def test_adjudicate_actions_mode(retail: Tau2World) -> None:
    [seed] = retail.seeds()
    s = retail.open_session()
    v = retail.judge(seed, s, ProtocolConfig())
    assert (
        not v.accepted
        and v.reason == "golden_actions_missing:cancel_pending_order,exchange_delivered_order_items"
    )
    s.act(
        EnvAction(
            tool="cancel_pending_order",
            args={"order_id": "#W0000001", "reason": "no longer needed"},
        )
    )
    assert retail.executed_golden(seed, s) == [True, False]
    # a failed write does not count
    s.act(
        EnvAction(
            tool="exchange_delivered_order_items",
            args={
                "order_id": "#W0000002",
                "item_ids": ["2000000001"],
                "new_item_ids": ["2000000003"],
                "payment_method_id": "paypal_1",
            },
        )
    )
    assert (
        retail.judge(seed, s, ProtocolConfig()).reason
        == "golden_actions_missing:exchange_delivered_order_items"
    )
    # paired item lists compare as sets of pairs: order of pairs does not matter
    s.act(
        EnvAction(
            tool="exchange_delivered_order_items",
            args={
                "order_id": "#W0000002",
                "item_ids": ["2000000001", "2000000011"],
                "new_item_ids": ["2000000002", "2000000012"],
                "payment_method_id": "paypal_1",
            },
        )
    )
    v = retail.judge(seed, s, ProtocolConfig())
    assert v.accepted and v.reason == "golden_actions_complete"
    assert retail.judge(seed, s, ProtocolConfig(tau2_acceptance="exact_state")).accepted
    # mispaired lists are a different write
    assert write_key(
        "exchange_delivered_order_items", {"item_ids": ["1", "2"], "new_item_ids": ["a", "b"]}
    ) != write_key(
        "exchange_delivered_order_items", {"item_ids": ["1", "2"], "new_item_ids": ["b", "a"]}
    )
    assert write_key("return_delivered_order_items", {"item_ids": ["2", "1"]}) == write_key(
        "return_delivered_order_items", {"item_ids": ["1", "2"]}
    )


def test_adjudicate_exact_state_detects_extra_writes(retail: Tau2World) -> None:
    [seed] = retail.seeds()
    s = retail.open_session()
    for a in retail.compile_intent(seed):
        assert s.act(a).ok
    s.act(
        EnvAction(
            tool="modify_user_address",
            args={
                "user_id": "bo_chen_2",
                "address1": "x",
                "address2": "",
                "city": "c",
                "state": "s",
                "country": "USA",
                "zip": "1",
            },
        )
    )
    assert retail.judge(seed, s, ProtocolConfig()).accepted
    v = retail.judge(seed, s, ProtocolConfig(tau2_acceptance="exact_state"))
    assert not v.accepted and v.reason == "state_hash_mismatch"


def test_phrase(retail: Tau2World, airline: Tau2World) -> None:
    [seed] = retail.seeds()
    m = seed.slot_map()
    assert retail.phrase(m["arg:0:cancel_pending_order:reason"]) == "I no longer need it"
    assert retail.phrase(m["arg:1:exchange_delivered_order_items:item_ids"]) == (
        "I want to exchange the mug (size small) and the lamp (color black)"
    )
    assert (
        retail.phrase(m["arg:1:exchange_delivered_order_items:payment_method_id"])
        == "please use my PayPal account"
    )
    assert (
        airline.phrase(Condition(slot="arg:0:book_reservation:insurance", value='"no"'))
        == "I don't want travel insurance"
    )
    assert (
        airline.phrase(Condition(slot="arg:0:book_reservation:origin", value='"JFK"'))
        == "I'm flying from New York (JFK)"
    )
    assert "credit card ending in 4242" in airline.phrase(
        Condition(slot="arg:0:update_reservation_baggages:payment_id", value='"credit_card_7"')
    )


def test_grade_and_communicate(retail: Tau2World) -> None:
    task = retail.task("a")
    g = grade(retail, task, golden_actions(task), ["The difference is $75.75, okay?"])
    assert g.db_match and g.communicate_ok and g.reward == 1.0 and g.unscored == []
    g = grade(retail, task, golden_actions(task)[:2], ["75,75"])
    assert not g.db_match and not g.communicate_ok and g.reward == 0.0
    # commas are stripped from the message only
    assert communicate_ok(task, ["It comes to 7,5.75 total"])
    # a failed write changes nothing, reads are ignored: grading is by end state
    b = retail.task("b")
    assert (
        grade(
            retail,
            b,
            [
                EnvAction(
                    tool="cancel_pending_order",
                    args={"order_id": "#W0000002", "reason": "no longer needed"},
                )
            ],
        ).reward
        == 1.0
    )


def test_session_contract(retail: Tau2World) -> None:
    s = retail.open_session("a")
    obs = s.act(EnvAction(tool="get_user_details", args={"user_id": "ana_lee_1"}))
    obs.data["email"] = "mutated"  # observation data is a copy
    assert retail.base.records["users"]["ana_lee_1"]["email"] == "Ana.Lee@example.com"
    assert [c.kind for c in s.history] == ["read"]
    with pytest.raises(ConfigError):
        retail.task("zzz")
