# ruff: noqa: E501  (literal fixture data and exact expected messages)
"""Tiny hand-written τ² worlds for tool tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ADDR = {
    "address1": "1 Main St",
    "address2": "Apt 2",
    "city": "New York",
    "country": "USA",
    "state": "NY",
    "zip": "10001",
}


def _item(pid: str, name: str, iid: str, price: float, opts: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "product_id": pid, "item_id": iid, "price": price, "options": opts}


LAMP_B = _item("1000000001", "Lamp", "2000000001", 50.0, {"color": "black"})
MUG_S = _item("1000000002", "Mug", "2000000011", 10, {"size": "small"})  # int price on purpose


def retail_db() -> dict[str, Any]:
    return _fresh({
        "products": {
            "1000000001": {
                "name": "Lamp",
                "product_id": "1000000001",
                "variants": {
                    "2000000001": {"item_id": "2000000001", "options": {"color": "black"}, "available": True, "price": 50.0},
                    "2000000002": {"item_id": "2000000002", "options": {"color": "white"}, "available": True, "price": 60.5},
                    "2000000003": {"item_id": "2000000003", "options": {"color": "red"}, "available": False, "price": 55.0},
                },
            },
            "1000000002": {
                "name": "Mug",
                "product_id": "1000000002",
                "variants": {
                    "2000000011": {"item_id": "2000000011", "options": {"size": "small"}, "available": True, "price": 10},
                    "2000000012": {"item_id": "2000000012", "options": {"size": "large"}, "available": True, "price": 15.25},
                },
            },
        },
        "users": {
            "ana_lee_1": {
                "user_id": "ana_lee_1",
                "name": {"first_name": "Ana", "last_name": "Lee"},
                "address": dict(ADDR),
                "email": "Ana.Lee@example.com",
                "payment_methods": {
                    "credit_card_1": {"source": "credit_card", "id": "credit_card_1", "brand": "visa", "last_four": "1111"},
                    "gift_card_1": {"source": "gift_card", "id": "gift_card_1", "balance": 5},
                    "paypal_1": {"source": "paypal", "id": "paypal_1"},
                },
                "orders": ["#W0000001", "#W0000002", "#W0000003"],
            },
            "bo_chen_2": {
                "user_id": "bo_chen_2",
                "name": {"first_name": "Bo", "last_name": "Chen"},
                "address": {**ADDR, "zip": "94105", "city": "San Francisco", "state": "CA"},
                "email": "bo@example.com",
                "payment_methods": {
                    "credit_card_2": {"source": "credit_card", "id": "credit_card_2", "brand": "mastercard", "last_four": "2222"},
                    "gift_card_2": {"source": "gift_card", "id": "gift_card_2", "balance": 500.0},
                },
                "orders": ["#W0000004", "#W0000005"],
            },
        },
        "orders": {
            "#W0000001": {
                "order_id": "#W0000001", "user_id": "ana_lee_1", "address": dict(ADDR),
                "items": [LAMP_B, MUG_S], "status": "pending", "fulfillments": [],
                "payment_history": [{"transaction_type": "payment", "amount": 60.0, "payment_method_id": "credit_card_1"}],
            },
            "#W0000002": {
                "order_id": "#W0000002", "user_id": "ana_lee_1", "address": dict(ADDR),
                "items": [LAMP_B, MUG_S, MUG_S], "status": "delivered",
                "fulfillments": [{"tracking_id": ["123"], "item_ids": ["2000000001", "2000000011", "2000000011"]}],
                "payment_history": [{"transaction_type": "payment", "amount": 70.0, "payment_method_id": "paypal_1"}],
            },
            "#W0000003": {
                "order_id": "#W0000003", "user_id": "ana_lee_1", "address": dict(ADDR),
                "items": [MUG_S], "status": "processed", "fulfillments": [],
                "payment_history": [{"transaction_type": "payment", "amount": 10.0, "payment_method_id": "gift_card_1"}],
            },
            "#W0000004": {
                "order_id": "#W0000004", "user_id": "bo_chen_2", "address": dict(ADDR),
                "items": [LAMP_B], "status": "pending", "fulfillments": [],
                "payment_history": [{"transaction_type": "payment", "amount": 50.0, "payment_method_id": "gift_card_2"}],
            },
            "#W0000005": {
                "order_id": "#W0000005", "user_id": "bo_chen_2", "address": dict(ADDR),
                "items": [MUG_S], "status": "pending (item modified)", "fulfillments": [],
                "payment_history": [
                    {"transaction_type": "payment", "amount": 10.0, "payment_method_id": "credit_card_2"},
                    {"transaction_type": "refund", "amount": 0.0, "payment_method_id": "credit_card_2"},
                ],
            },
        },
    })  # fmt: skip


def _fresh(obj: Any) -> Any:
    """Deep copy, so tests can mutate a fixture database freely."""
    return json.loads(json.dumps(obj))


def _avail(be: int, e: int, b: int, pbe: int, pe: int, pb: int) -> dict[str, Any]:
    return {
        "status": "available",
        "available_seats": {"basic_economy": be, "economy": e, "business": b},
        "prices": {"basic_economy": pbe, "economy": pe, "business": pb},
    }


def airline_db() -> dict[str, Any]:
    landed = {
        "status": "landed",
        "actual_departure_time_est": "2024-05-10T08:00:00",
        "actual_arrival_time_est": "2024-05-10T11:00:00",
    }
    return {
        "flights": {
            "HAT001": {"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "scheduled_departure_time_est": "08:00:00", "scheduled_arrival_time_est": "11:00:00",
                       "dates": {"2024-05-10": landed, "2024-05-20": _avail(5, 2, 1, 100, 200, 500), "2024-05-21": {"status": "cancelled"}}},
            "HAT002": {"flight_number": "HAT002", "origin": "LAX", "destination": "JFK", "scheduled_departure_time_est": "12:00:00", "scheduled_arrival_time_est": "20:00:00",
                       "dates": {"2024-05-20": _avail(5, 5, 5, 90, 190, 490), "2024-05-22": _avail(5, 5, 5, 95, 195, 495)}},
            "HAT003": {"flight_number": "HAT003", "origin": "JFK", "destination": "ORD", "scheduled_departure_time_est": "22:00:00", "scheduled_arrival_time_est": "01:00:00+1",
                       "dates": {"2024-05-05": _avail(5, 5, 5, 70, 140, 300), "2024-05-20": _avail(5, 5, 5, 70, 140, 300)}},
            "HAT004": {"flight_number": "HAT004", "origin": "ORD", "destination": "LAX", "scheduled_departure_time_est": "06:00:00", "scheduled_arrival_time_est": "08:00:00",
                       "dates": {"2024-05-06": _avail(5, 5, 5, 60, 120, 280), "2024-05-21": _avail(5, 5, 5, 60, 120, 280)}},
        },
        "users": {
            "amy_wu_1": {
                "user_id": "amy_wu_1", "name": {"first_name": "Amy", "last_name": "Wu"},
                "address": {"address1": "9 Elm St", "city": "Boston", "country": "USA", "state": "MA", "zip": "02101"},
                "email": "amy@example.com", "dob": "1990-01-01",
                "payment_methods": {
                    "credit_card_7": {"source": "credit_card", "id": "credit_card_7", "brand": "visa", "last_four": "4242"},
                    "gift_card_7": {"source": "gift_card", "id": "gift_card_7", "amount": 100},
                    "certificate_7": {"source": "certificate", "id": "certificate_7", "amount": 150},
                },
                "saved_passengers": [{"first_name": "Tom", "last_name": "Wu", "dob": "1988-02-02"}],
                "membership": "gold", "reservations": ["ABC123", "DEF456"],
            },
        },
        "reservations": {
            "ABC123": {
                "reservation_id": "ABC123", "user_id": "amy_wu_1", "origin": "JFK", "destination": "LAX",
                "flight_type": "one_way", "cabin": "economy",
                "flights": [{"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "date": "2024-05-20", "price": 180}],
                "passengers": [{"first_name": "Amy", "last_name": "Wu", "dob": "1990-01-01"}],
                "payment_history": [{"payment_id": "credit_card_7", "amount": 180}],
                "created_at": "2024-05-01T10:00:00", "total_baggages": 1, "nonfree_baggages": 0, "insurance": "no",
            },
            "DEF456": {
                "reservation_id": "DEF456", "user_id": "amy_wu_1", "origin": "JFK", "destination": "JFK",
                "flight_type": "round_trip", "cabin": "basic_economy",
                "flights": [
                    {"flight_number": "HAT001", "origin": "JFK", "destination": "LAX", "date": "2024-05-20", "price": 90},
                    {"flight_number": "HAT002", "origin": "LAX", "destination": "JFK", "date": "2024-05-22", "price": 95},
                ],
                "passengers": [{"first_name": "Amy", "last_name": "Wu", "dob": "1990-01-01"}, {"first_name": "Tom", "last_name": "Wu", "dob": "1988-02-02"}],
                "payment_history": [{"payment_id": "gift_card_7", "amount": 370}],
                "created_at": "2024-05-02T10:00:00", "total_baggages": 2, "nonfree_baggages": 1, "insurance": "no",
            },
        },
    }  # fmt: skip


def tasks_for(domain: str) -> list[dict[str, Any]]:
    """Two small tasks per domain."""

    def task(
        tid: str, actions: list[dict[str, Any]], communicate: list[str] | None = None
    ) -> dict[str, Any]:
        return {
            "id": tid,
            "description": {"purpose": "fixture", "relevant_policies": None, "notes": None},
            "user_scenario": {
                "persona": None,
                "instructions": {
                    "domain": domain,
                    "reason_for_call": "x",
                    "known_info": "y",
                    "unknown_info": None,
                    "task_instructions": "z",
                },
            },
            "initial_state": None,
            "evaluation_criteria": {
                "actions": actions,
                "communicate_info": communicate or [],
                "nl_assertions": [],
                "reward_basis": ["DB", "COMMUNICATE"],
            },
        }

    if domain == "retail":
        return [
            task(
                "a",
                [
                    {
                        "action_id": "a0",
                        "name": "find_user_id_by_email",
                        "arguments": {"email": "ana.lee@example.com"},
                        "info": None,
                    },
                    {
                        "action_id": "a1",
                        "name": "cancel_pending_order",
                        "arguments": {"order_id": "#W0000001", "reason": "no longer needed"},
                        "info": None,
                    },
                    {
                        "action_id": "a2",
                        "name": "exchange_delivered_order_items",
                        "arguments": {
                            "order_id": "#W0000002",
                            "item_ids": ["2000000011", "2000000001"],
                            "new_item_ids": ["2000000012", "2000000002"],
                            "payment_method_id": "paypal_1",
                        },
                        "info": None,
                    },
                ],
                ["75.75"],
            ),
            task(
                "b",
                [
                    {
                        "action_id": "b0",
                        "name": "get_order_details",
                        "arguments": {"order_id": "#W9"},
                        "info": None,
                    }
                ],
            ),
        ]
    return [
        task(
            "a",
            [
                {
                    "action_id": "a0",
                    "name": "get_user_details",
                    "arguments": {"user_id": "amy_wu_1"},
                    "info": None,
                },
                {
                    "action_id": "a1",
                    "name": "send_certificate",
                    "arguments": {"user_id": "amy_wu_1", "amount": 50},
                    "info": None,
                },
                {
                    "action_id": "a2",
                    "name": "cancel_reservation",
                    "arguments": {"reservation_id": "ABC123"},
                    "info": None,
                },
            ],
        ),
        task("b", []),
    ]


def write_domain(root: Path, domain: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    db = retail_db() if domain == "retail" else airline_db()
    (root / "db.json").write_text(json.dumps(db))
    (root / "tasks.json").write_text(json.dumps(tasks_for(domain)))
    (root / "split_tasks.json").write_text(json.dumps({"base": ["a", "b"]}))
    (root / "policy.md").write_text("policy")
    return root
