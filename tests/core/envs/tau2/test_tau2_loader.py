"""Loading, validation errors (file + field), payloads, import into a store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tau2_fixtures import airline_db, retail_db, tasks_for, write_domain

from core.envs.base import HostWorld
from core.envs.tau2 import (
    import_domain,
    load_tau2_world,
    load_tau2_world_from_payload,
    read_domain_dir,
)
from core.errors import ConfigError


class FakeStore:
    def __init__(self) -> None:
        self.worlds: list[dict[str, Any]] = []

    def put_world(self, **kw: Any) -> None:
        self.worlds.append(kw)


def broken(tmp_path: Path, domain: str, file: str, content: Any) -> Path:
    root = write_domain(tmp_path / domain, domain)
    (root / file).write_text(content if isinstance(content, str) else json.dumps(content))
    return root


def expect(root: Path, domain: str, file: str, field: str | None) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        read_domain_dir(domain, root)
    assert exc.value.file is not None and exc.value.file.endswith(file)
    assert exc.value.field == field
    with pytest.raises(ConfigError):
        load_tau2_world(domain, root)
    return exc.value


def test_world_protocol(retail: Any, airline: Any) -> None:
    assert isinstance(retail, HostWorld) and isinstance(airline, HostWorld)
    assert retail.benchmark == "tau2_retail" and airline.benchmark == "tau2_airline"
    assert len(retail.world_id) == 16 and retail.world_id != airline.world_id
    names = {t.name: t.kind for t in retail.tools()}
    assert names["cancel_pending_order"] == "write" and names["get_item_details"] == "read"
    assert names["think"] == names["calculate"] == "generic" and len(names) == 17
    assert sum(t.kind == "write" for t in airline.tools()) == 6 and len(airline.tools()) == 15
    spec = next(t for t in airline.tools() if t.name == "book_reservation")
    assert spec.parameters["required"][:2] == ["user_id", "origin"]


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        load_tau2_world("retail", tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError) as exc:
        load_tau2_world("retail", tmp_path / "empty")
    assert exc.value.file is not None and exc.value.file.endswith("db.json")
    with pytest.raises(ConfigError) as exc:
        load_tau2_world("telecom", tmp_path)
    assert exc.value.field == "domain"


def test_malformed_db(tmp_path: Path) -> None:
    expect(broken(tmp_path / "1", "retail", "db.json", "{not json"), "retail", "db.json", None)
    db = retail_db()
    db["orders"]["#W0000001"]["items"][0]["price"] = "cheap"
    expect(
        broken(tmp_path / "2", "retail", "db.json", db),
        "retail",
        "db.json",
        "orders.#W0000001.items.0.price",
    )
    db = retail_db()
    del db["users"]
    expect(broken(tmp_path / "3", "retail", "db.json", db), "retail", "db.json", "users")
    db = airline_db()
    db["extra"] = {}
    expect(broken(tmp_path / "4", "airline", "db.json", db), "airline", "db.json", "extra")
    db = airline_db()
    db["reservations"]["ABC123"]["insurance"] = "maybe"
    expect(
        broken(tmp_path / "5", "airline", "db.json", db),
        "airline",
        "db.json",
        "reservations.ABC123.insurance",
    )


def test_malformed_tasks(tmp_path: Path) -> None:
    tasks = tasks_for("retail")
    tasks[1]["evaluation_criteria"]["actions"][0]["name"] = "launch_rocket"
    expect(
        broken(tmp_path / "1", "retail", "tasks.json", tasks),
        "retail",
        "tasks.json",
        "[1].evaluation_criteria.actions.0.name",
    )
    tasks = tasks_for("retail")
    del tasks[0]["user_scenario"]
    expect(
        broken(tmp_path / "2", "retail", "tasks.json", tasks),
        "retail",
        "tasks.json",
        "[0].user_scenario",
    )
    tasks = tasks_for("airline")
    tasks[1]["id"] = "a"
    expect(
        broken(tmp_path / "3", "airline", "tasks.json", tasks), "airline", "tasks.json", "[1].id"
    )
    expect(broken(tmp_path / "4", "airline", "tasks.json", {"a": 1}), "airline", "tasks.json", None)
    expect(
        broken(tmp_path / "5", "airline", "split_tasks.json", {"test": ["zz"]}),
        "airline",
        "split_tasks.json",
        "test.0",
    )


def test_optional_files_and_payload(tmp_path: Path, retail_dir: Path) -> None:
    root = tmp_path / "r"
    shutil.copytree(retail_dir, root)
    (root / "split_tasks.json").unlink()
    (root / "policy.md").unlink()
    payload = read_domain_dir("retail", root)
    assert set(payload) == {"domain", "db", "tasks", "split_tasks", "policy"}
    assert payload["split_tasks"] == {} and payload["policy"] == ""
    json.dumps(payload)  # serialisable
    world = load_tau2_world_from_payload("retail", payload)
    assert world.state_hash() == load_tau2_world("retail", root).state_hash()
    with pytest.raises(ConfigError) as exc:
        load_tau2_world_from_payload("airline", payload)
    assert exc.value.field == "domain"
    with pytest.raises(ConfigError) as exc:
        load_tau2_world_from_payload("retail", {"domain": "retail", "tasks": []})
    assert exc.value.field == "db"


def test_import_domain(retail_dir: Path, tmp_path: Path) -> None:
    store = FakeStore()
    out = import_domain("retail", retail_dir, store)
    world = load_tau2_world("retail", retail_dir)
    assert out == {"domain": "retail", "tasks": 2, "initial_state_hash": world.state_hash()}
    [put] = store.worlds
    assert put["benchmark"] == "tau2_retail" and put["world_id"] == world.world_id
    assert put["name"] == "retail" and put["source"] == str(retail_dir)
    assert put["summary"]["golden_tool_errors"] == 1 and put["summary"]["records"]["orders"] == 5
    assert load_tau2_world_from_payload("retail", put["payload"]).world_id == world.world_id
    bad = broken(tmp_path, "retail", "tasks.json", "[")
    store2 = FakeStore()
    with pytest.raises(ConfigError):
        import_domain("retail", bad, store2)
    assert store2.worlds == []  # nothing written on failure
