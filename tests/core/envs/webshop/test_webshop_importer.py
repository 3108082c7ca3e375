"""Importer for WebShop's own files, on small fixture files written in WebShop's schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.envs.webshop import (
    golden_report,
    import_webshop,
    load_webshop_world,
    load_webshop_world_from_payload,
    read_webshop_dir,
)
from core.envs.webshop.importer import parse_pricing
from core.errors import ConfigError


def raw_item(asin: str, **kw: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "asin": asin,
        "name": f"Brightfield Cotton Crew Socks {asin}",
        "full_description": "Soft cotton socks for every day.",
        "small_description": ["Cushioned sole", "Reinforced heel"],
        "pricing": "$12.99",
        "images": ["https://example.invalid/a.jpg"],
        "product_category": "Clothing, Shoes & Jewelry › Men › Clothing › Socks",
        "category": "fashion",
        "query": "Men's Socks ",
        "customization_options": {
            "Color": [{"value": "Black/Grey", "image": None}, {"value": " White ", "image": None}],
            "Size": [{"value": "Large", "image": None}],
        },
        "average_rating": 4.5,
        "brand": "Brightfield",
        "seller_id": "X",
    }
    item.update(kw)
    return item


def write_fixture(folder: Path, *, human: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    items = [
        raw_item("B0SOCK0001"),
        raw_item("nan"),  # skipped like WebShop
        raw_item("B0SOCK0001", name="duplicate, skipped"),
        raw_item("B0SOCKTOOLONG"),  # > 10 chars, skipped
        raw_item("B0SOCK0002", pricing="$10.00 - $20.00", customization_options=""),
        raw_item("B0SOCK0003", pricing=None, small_description="one bullet"),
    ]
    (folder / "items_shuffle_1000.json").write_text(json.dumps(items))
    attrs = {
        "B0SOCK0001": {
            "attributes": ["moisture wicking", "cotton"],
            "instruction": "i need cotton crew socks",
            "instruction_attributes": ["cotton"],
        },
        "B0SOCK0002": {"attributes": ["arch support"]},
    }
    (folder / "items_ins_v2_1000.json").write_text(json.dumps(attrs))
    if human:
        ins = {
            "B0SOCK0001": [
                {
                    "asin": "B0SOCK0001",
                    "instruction": "i want black cotton socks in large.",
                    "attributes": ["cotton"],
                    "options": {"color": "black | grey", "size": "large"},
                    "instruction_attributes": ["cotton", "moisture wicking"],
                    "instruction_options": ["black | grey", "large"],
                    "assignment_id": "SECRET-ASSIGNMENT",
                    "worker_id": "SECRET-WORKER",
                },
                {"instruction": "no attributes: skipped", "instruction_attributes": []},
            ],
            "B0SOCK0003": [{"instruction": "cheap socks", "instruction_attributes": ["cheap"]}],
        }
        (folder / "items_human_ins.json").write_text(json.dumps(ins))
    return folder


def test_parse_pricing() -> None:
    assert parse_pricing("$12.99") == (12.99, "$12.99")
    assert parse_pricing("$10.00 - $20.00") == (15.0, "$10.0 to $20.0")
    assert parse_pricing("") == (100.0, "$100.0")
    assert parse_pricing("$1,299.00") == (1299.0, "$1299.0")
    assert parse_pricing([5.0, 7.0]) == (6.0, "$5.0 to $7.0")


def test_read_webshop_dir_follows_loader_semantics(tmp_path: Path) -> None:
    payload = read_webshop_dir(write_fixture(tmp_path / "ws"))
    products = {p["asin"]: p for p in payload["products"]}
    assert list(products) == ["B0SOCK0001", "B0SOCK0002", "B0SOCK0003"]
    p1 = products["B0SOCK0001"]
    assert p1["title"] == p1["name"] == "Brightfield Cotton Crew Socks B0SOCK0001"
    assert p1["options"] == {"color": ["black | grey", "white"], "size": ["large"]}
    assert p1["query"] == "men's socks"
    assert p1["attributes"] == ["moisture wicking", "cotton"]
    assert p1["bullet_points"] == ["Cushioned sole", "Reinforced heel"]
    assert "socks" in p1["name_nouns"]
    assert products["B0SOCK0002"]["price"] == 15.0
    assert products["B0SOCK0002"]["price_text"] == "$10.0 to $20.0"
    assert products["B0SOCK0002"]["options"] == {}
    assert products["B0SOCK0003"]["attributes"] == ["DUMMY_ATTR"]
    assert products["B0SOCK0003"]["price"] == 100.0
    assert products["B0SOCK0003"]["bullet_points"] == ["one bullet"]

    goals = payload["goals"]
    assert len(goals) == 2  # the instruction without attributes is skipped
    g = next(g for g in goals if g["asin"] == "B0SOCK0001")
    assert g["instruction_text"] == (
        "i want black cotton socks in large, and price lower than 30.00 dollars"
    )
    assert g["goal_options"] == ["black | grey", "large"] and g["price_upper"] == 30.0
    assert g["attributes"] == ["cotton", "moisture wicking"]
    assert {g["goal_id"] for g in goals} == {"g0000", "g0001"}
    assert "SECRET" not in json.dumps(payload)  # no MTurk ids kept
    assert read_webshop_dir(tmp_path / "ws") == payload  # deterministic (goal shuffle seeded)


def test_synthetic_goals_without_human_file(tmp_path: Path) -> None:
    payload = read_webshop_dir(write_fixture(tmp_path / "syn", human=False))
    texts = sorted(g["instruction_text"] for g in payload["goals"])
    assert texts == [
        "i need cotton crew socks with color: black | grey, and size: large, "
        "and price lower than 30.00 dollars",
        "i need cotton crew socks with color: white, and size: large, "
        "and price lower than 30.00 dollars",
    ]


def test_imported_world_plays_and_scores(tmp_path: Path) -> None:
    payload = read_webshop_dir(write_fixture(tmp_path / "ws"))
    world = load_webshop_world_from_payload(payload)
    report = golden_report(world)
    rewards = {world.goal(t["task_id"]).asin: t["reward"] for t in report["tasks"]}
    # the socks goal is fully satisfiable; "cheap" is on no product (DUMMY_ATTR), so 1/2
    assert rewards == {"B0SOCK0001": 1.0, "B0SOCK0003": 0.5}
    assert report["all_one"] is False
    assert len(world.seeds()) == 2
    # a folder of raw WebShop files also loads directly
    assert load_webshop_world(tmp_path / "ws").world_id == world.world_id


class FakeStore:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def put_world(self, **kw: Any) -> None:
        self.calls.append(kw)

    def get_world(self, world_id: str) -> object | None:
        return next((c for c in self.calls if c["world_id"] == world_id), None)


def test_import_webshop_stores_one_world(tmp_path: Path) -> None:
    store = FakeStore()
    out = import_webshop(write_fixture(tmp_path / "ws"), store)
    assert out["products"] == 3 and out["goals"] == 2
    (call,) = store.calls
    assert call["benchmark"] == "webshop" and call["name"] == "ws"
    assert call["source"] == str(tmp_path / "ws") and call["world_id"] == out["world_id"]
    assert call["summary"] == {"products": 3, "goals": 2, "clusters": 1}
    assert load_webshop_world_from_payload(call["payload"]).world_id == out["world_id"]


@pytest.mark.parametrize(
    ("file", "content", "field", "detail"),
    [
        ("items_shuffle_1000.json", [raw_item("B1", name=None)], "0.name", "string"),
        ("items_shuffle_1000.json", [raw_item("B1"), {"asin": "B2"}], "1.name", "required"),
        ("items_shuffle_1000.json", {"not": "a list"}, None, "list"),
        ("items_shuffle_1000.json", [raw_item("B1", query="  ")], "0.query", "empty"),
        ("items_ins_v2_1000.json", {"B1": {"attributes": "cotton"}}, "B1.attributes", "list"),
        ("items_human_ins.json", {"B1": [{"instruction_attributes": []}]}, "B1.0.instruction", ""),
    ],
)
def test_malformed_files_fail_without_writing(
    tmp_path: Path, file: str, content: Any, field: str | None, detail: str
) -> None:
    folder = write_fixture(tmp_path / "bad")
    (folder / file).write_text(json.dumps(content))
    store = FakeStore()
    with pytest.raises(ConfigError) as err:
        import_webshop(folder, store)
    assert err.value.file == str(folder / file)
    assert err.value.field == field
    assert detail in str(err.value).lower()
    assert store.calls == []


def test_missing_product_file_and_broken_json(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="items_shuffle"):
        read_webshop_dir(tmp_path / "empty")
    with pytest.raises(ConfigError, match="not a folder"):
        read_webshop_dir(tmp_path / "nope")
    folder = write_fixture(tmp_path / "broken")
    (folder / "items_human_ins.json").write_text("{oops")
    with pytest.raises(ConfigError, match="invalid JSON") as err:
        read_webshop_dir(folder)
    assert err.value.file == str(folder / "items_human_ins.json")
