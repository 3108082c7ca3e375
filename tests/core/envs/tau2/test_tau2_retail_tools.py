# ruff: noqa: E501  (literal fixture data and exact expected messages)
"""Every retail tool: success effects and error paths, on the tiny fixture world."""

from __future__ import annotations

from typing import Any

import pytest

from core.envs.tau2 import Tau2World
from core.envs.tau2.db import naive_hash
from core.model.world import EnvAction


def call(session: Any, tool: str, **args: Any) -> Any:
    return session.act(EnvAction(tool=tool, args=args))


def err(session: Any, tool: str, **args: Any) -> str:
    obs = call(session, tool, **args)
    assert not obs.ok
    return str(obs.text)


def test_typing_matches_tau2(retail: Tau2World) -> None:
    order = retail.base.records["orders"]["#W0000001"]
    # optional fields present as null, int prices typed as float
    assert order["cancel_reason"] is None and order["return_items"] is None
    assert order["items"][1]["price"] == 10.0 and isinstance(order["items"][1]["price"], float)
    gift = retail.base.records["users"]["ana_lee_1"]["payment_methods"]["gift_card_1"]
    assert isinstance(gift["balance"], float)


def test_lookups(retail: Tau2World) -> None:
    s = retail.open_session()
    assert call(s, "find_user_id_by_email", email="ANA.lee@EXAMPLE.com").text == "ana_lee_1"
    assert err(s, "find_user_id_by_email", email="nobody@x.com") == "Error: User not found"
    assert (
        call(s, "find_user_id_by_name_zip", first_name="bo", last_name="CHEN", zip="94105").text
        == "bo_chen_2"
    )
    assert (
        err(s, "find_user_id_by_name_zip", first_name="Bo", last_name="Chen", zip="10001")
        == "Error: User not found"
    )
    obs = call(s, "get_user_details", user_id="bo_chen_2")
    assert obs.ok and obs.data["email"] == "bo@example.com"
    assert err(s, "get_user_details", user_id="x") == "Error: User not found"
    assert call(s, "get_order_details", order_id="#W0000002").data["status"] == "delivered"
    assert err(s, "get_order_details", order_id="W0000002") == "Error: Order not found"
    assert call(s, "get_product_details", product_id="1000000002").data["name"] == "Mug"
    assert err(s, "get_product_details", product_id="2000000011") == "Error: Product not found"
    assert call(s, "get_item_details", item_id="2000000012").data["price"] == 15.25
    assert err(s, "get_item_details", item_id="1000000001") == "Error: Item not found"
    assert call(s, "list_all_product_types").text == '{"Lamp": "1000000001", "Mug": "1000000002"}'
    # tool output text is tau2's json.dumps of the model dump (field order kept)
    text = call(s, "get_item_details", item_id="2000000012").text
    assert (
        text
        == '{"item_id": "2000000012", "options": {"size": "large"}, "available": true, "price": 15.25}'
    )
    assert s.state_hash() == retail.state_hash()


def test_generic_tools(retail: Tau2World) -> None:
    s = retail.open_session()
    assert call(s, "calculate", expression="(2 + 3) * 1.5 / 4").text == "1.88"
    assert (
        err(s, "calculate", expression="__import__('os')")
        == "Error: Invalid characters in expression"
    )
    assert err(s, "calculate", expression="1 / 0") == "Error: division by zero"
    assert err(s, "calculate", expression="9 ** 9 ** 9 ** 9").startswith("Error:")
    assert call(s, "transfer_to_human_agents", summary="help").text == "Transfer successful"
    assert call(s, "think", thought="hmm").text == ""
    assert err(s, "no_such_tool") == "Error: Tool 'no_such_tool' not found."
    assert err(s, "cancel_pending_order", order_id="#W0000001") == (
        "Error: RetailTools.cancel_pending_order() missing 1 required positional argument: 'reason'"
    )
    assert "unexpected keyword argument 'bogus'" in err(s, "get_user_details", user_id="x", bogus=1)
    assert s.proposal() == {"executed_writes": []}


def test_cancel_pending_order(retail: Tau2World) -> None:
    s = retail.open_session()
    assert err(s, "cancel_pending_order", order_id="#W0000002", reason="no longer needed") == (
        "Error: Non-pending order cannot be cancelled"
    )
    assert err(s, "cancel_pending_order", order_id="#W0000005", reason="no longer needed") == (
        "Error: Non-pending order cannot be cancelled"
    )
    assert (
        err(s, "cancel_pending_order", order_id="#W0000001", reason="changed mind")
        == "Error: Invalid reason"
    )
    assert (
        err(s, "cancel_pending_order", order_id="#W1", reason="no longer needed")
        == "Error: Order not found"
    )
    obs = call(s, "cancel_pending_order", order_id="#W0000004", reason="ordered by mistake")
    assert (
        obs.ok
        and obs.data["status"] == "cancelled"
        and obs.data["cancel_reason"] == "ordered by mistake"
    )
    assert obs.data["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 50.0,
        "payment_method_id": "gift_card_2",
    }
    # gift card credited immediately; base untouched
    assert s.state.get("users", "bo_chen_2")["payment_methods"]["gift_card_2"]["balance"] == 550.0
    assert (
        retail.base.records["users"]["bo_chen_2"]["payment_methods"]["gift_card_2"]["balance"]
        == 500.0
    )
    assert s.proposal()["executed_writes"] == [
        {
            "tool": "cancel_pending_order",
            "args": {"order_id": "#W0000004", "reason": "ordered by mistake"},
        }
    ]
    assert s.state_hash() == naive_hash(s.state.materialize()) != retail.state_hash()


def test_modify_pending_order_address(retail: Tau2World) -> None:
    s = retail.open_session()
    new = {
        "address1": "5 Oak",
        "address2": "",
        "city": "Austin",
        "state": "TX",
        "country": "USA",
        "zip": "78701",
    }
    assert (
        err(s, "modify_pending_order_address", order_id="#W0000002", **new)
        == "Error: Non-pending order cannot be modified"
    )
    # "pending (item modified)" is accepted (substring check)
    obs = call(s, "modify_pending_order_address", order_id="#W0000005", **new)
    assert obs.ok and obs.data["address"] == {**new}
    assert "validation error for UserAddress" in err(
        s, "modify_pending_order_address", order_id="#W0000001", **{**new, "zip": 78701}
    )


def test_modify_pending_order_payment(retail: Tau2World) -> None:
    s = retail.open_session()
    assert err(
        s, "modify_pending_order_payment", order_id="#W0000002", payment_method_id="credit_card_1"
    ) == ("Error: Non-pending order cannot be modified")
    assert (
        err(s, "modify_pending_order_payment", order_id="#W0000001", payment_method_id="x")
        == "Error: Payment method not found"
    )
    assert err(
        s, "modify_pending_order_payment", order_id="#W0000005", payment_method_id="gift_card_2"
    ) == ("Error: There should be exactly one payment for a pending order")
    assert err(
        s, "modify_pending_order_payment", order_id="#W0000001", payment_method_id="credit_card_1"
    ) == ("Error: The new payment method should be different from the current one")
    assert err(
        s, "modify_pending_order_payment", order_id="#W0000001", payment_method_id="gift_card_1"
    ) == ("Error: Insufficient gift card balance to pay for the order")
    obs = call(
        s, "modify_pending_order_payment", order_id="#W0000004", payment_method_id="credit_card_2"
    )
    assert obs.ok
    assert obs.data["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": 50.0, "payment_method_id": "credit_card_2"},
        {"transaction_type": "refund", "amount": 50.0, "payment_method_id": "gift_card_2"},
    ]
    assert s.state.get("users", "bo_chen_2")["payment_methods"]["gift_card_2"]["balance"] == 550.0


def test_modify_pending_order_items(retail: Tau2World) -> None:
    s = retail.open_session()
    args = {"order_id": "#W0000001", "payment_method_id": "credit_card_1"}
    assert err(
        s,
        "modify_pending_order_items",
        **{**args, "order_id": "#W0000005"},
        item_ids=[],
        new_item_ids=[],
    ) == ("Error: Non-pending order cannot be modified")
    assert err(
        s,
        "modify_pending_order_items",
        **args,
        item_ids=["2000000011", "2000000011"],
        new_item_ids=["2000000012", "2000000012"],
    ) == ("Error: 2000000011 not found")
    assert err(
        s, "modify_pending_order_items", **args, item_ids=["2000000011"], new_item_ids=[]
    ) == ("Error: The number of items to be exchanged should match")
    assert err(
        s,
        "modify_pending_order_items",
        **args,
        item_ids=["2000000011"],
        new_item_ids=["2000000011"],
    ) == ("Error: The new item id should be different from the old item id")
    assert err(
        s,
        "modify_pending_order_items",
        **args,
        item_ids=["2000000001"],
        new_item_ids=["2000000003"],
    ) == ("Error: New item 2000000003 not found or available")
    assert err(
        s,
        "modify_pending_order_items",
        **args,
        item_ids=["2000000001"],
        new_item_ids=["2000000012"],
    ) == ("Error: Variant not found")
    assert err(
        s,
        "modify_pending_order_items",
        **{**args, "payment_method_id": "gift_card_1"},
        item_ids=["2000000001", "2000000011"],
        new_item_ids=["2000000002", "2000000012"],
    ) == ("Error: Insufficient gift card balance to pay for the new item")
    obs = call(
        s,
        "modify_pending_order_items",
        **args,
        item_ids=["2000000001", "2000000011"],
        new_item_ids=["2000000002", "2000000012"],
    )
    assert obs.ok and obs.data["status"] == "pending (item modified)"
    # upstream quirk: every modified item takes the LAST new variant's price and options
    assert [(i["item_id"], i["price"], i["options"]) for i in obs.data["items"]] == [
        ("2000000002", 15.25, {"size": "large"}),
        ("2000000012", 15.25, {"size": "large"}),
    ]
    # unrounded abs(diff) as payment
    assert obs.data["payment_history"][-1] == {
        "transaction_type": "payment",
        "amount": abs(60.5 - 50.0 + 15.25 - 10.0),
        "payment_method_id": "credit_card_1",
    }
    # only once: status is no longer exactly "pending"
    assert err(
        s,
        "modify_pending_order_items",
        **args,
        item_ids=["2000000002"],
        new_item_ids=["2000000001"],
    ) == ("Error: Non-pending order cannot be modified")


def test_modify_items_refund_to_gift_card(retail: Tau2World) -> None:
    s = retail.open_session()
    obs = call(
        s,
        "modify_pending_order_items",
        order_id="#W0000004",
        item_ids=["2000000001"],
        new_item_ids=["2000000002"],
        payment_method_id="gift_card_2",
    )
    assert obs.ok
    assert s.state.get("users", "bo_chen_2")["payment_methods"]["gift_card_2"]["balance"] == 489.5


def test_exchange_delivered_order_items(retail: Tau2World) -> None:
    s = retail.open_session()
    base = {"order_id": "#W0000002", "payment_method_id": "paypal_1"}
    assert err(
        s,
        "exchange_delivered_order_items",
        **{**base, "order_id": "#W0000001"},
        item_ids=[],
        new_item_ids=[],
    ) == ("Error: Non-delivered order cannot be exchanged")
    assert err(
        s,
        "exchange_delivered_order_items",
        **base,
        item_ids=["2000000001", "2000000001"],
        new_item_ids=["2000000002", "2000000002"],
    ) == ("Error: Number of 2000000001 not found.")
    assert err(
        s, "exchange_delivered_order_items", **base, item_ids=["2000000001"], new_item_ids=[]
    ) == ("Error: The number of items to be exchanged should match.")
    assert err(
        s,
        "exchange_delivered_order_items",
        **base,
        item_ids=["2000000001"],
        new_item_ids=["2000000003"],
    ) == ("Error: New item 2000000003 not found or available")
    assert err(
        s,
        "exchange_delivered_order_items",
        **{**base, "payment_method_id": "gift_card_1"},
        item_ids=["2000000001", "2000000011"],
        new_item_ids=["2000000002", "2000000012"],
    ) == ("Error: Insufficient gift card balance to pay for the price difference")
    obs = call(
        s,
        "exchange_delivered_order_items",
        **base,
        item_ids=["2000000011", "2000000001"],
        new_item_ids=["2000000012", "2000000002"],
    )
    assert obs.ok
    d = obs.data
    assert d["status"] == "exchange requested"
    assert d["exchange_items"] == ["2000000001", "2000000011"]  # sorted
    assert d["exchange_new_items"] == ["2000000002", "2000000012"]
    assert d["exchange_price_difference"] == 15.75 and d["exchange_payment_method_id"] == "paypal_1"
    assert len(d["payment_history"]) == 1  # no payment entry
    assert err(
        s,
        "exchange_delivered_order_items",
        **base,
        item_ids=["2000000001"],
        new_item_ids=["2000000002"],
    ) == ("Error: Non-delivered order cannot be exchanged")


def test_return_delivered_order_items(retail: Tau2World) -> None:
    s = retail.open_session()
    assert err(
        s,
        "return_delivered_order_items",
        order_id="#W0000001",
        item_ids=["2000000001"],
        payment_method_id="credit_card_1",
    ) == ("Error: Non-delivered order cannot be returned")
    assert err(
        s,
        "return_delivered_order_items",
        order_id="#W0000002",
        item_ids=["2000000001"],
        payment_method_id="credit_card_1",
    ) == ("Error: Payment method should be the original payment method")
    assert err(
        s,
        "return_delivered_order_items",
        order_id="#W0000002",
        item_ids=["2000000001", "2000000001"],
        payment_method_id="paypal_1",
    ) == ("Error: Some item not found")
    assert err(
        s,
        "return_delivered_order_items",
        order_id="#W0000002",
        item_ids=["2000000001"],
        payment_method_id="paypal_9",
    ) == ("Error: Payment method not found")
    obs = call(
        s,
        "return_delivered_order_items",
        order_id="#W0000002",
        item_ids=["2000000011", "2000000001", "2000000011"],
        payment_method_id="gift_card_1",
    )
    assert obs.ok and obs.data["status"] == "return requested"
    assert obs.data["return_items"] == ["2000000001", "2000000011", "2000000011"]
    assert obs.data["return_payment_method_id"] == "gift_card_1"


def test_modify_user_address(retail: Tau2World) -> None:
    s = retail.open_session()
    new = {
        "address1": "5 Oak",
        "address2": "Unit 1",
        "city": "Austin",
        "state": "TX",
        "country": "USA",
        "zip": "78701",
    }
    assert err(s, "modify_user_address", user_id="zed", **new) == "Error: User not found"
    obs = call(s, "modify_user_address", user_id="ana_lee_1", **new)
    assert obs.ok and obs.data["address"] == new
    assert (
        call(s, "find_user_id_by_name_zip", first_name="Ana", last_name="Lee", zip="78701").text
        == "ana_lee_1"
    )


@pytest.mark.parametrize("bad", [["2000000011"], 5])
def test_type_errors_become_error_text(retail: Tau2World, bad: Any) -> None:
    s = retail.open_session()
    obs = call(s, "get_order_details", order_id=bad)
    assert not obs.ok and obs.text.startswith("Error: ")
