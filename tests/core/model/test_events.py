"""The versioned event schema: goldens, round trips, upgrades."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.model import events as ev
from core.model.events import EVENT_ADAPTER, EVENT_KINDS, EVENT_VERSION, dump_event, parse_event

GOLDEN = Path(__file__).parent / "golden"


def _golden(version: str) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((GOLDEN / version).glob("*.json"))}


def test_every_kind_has_a_v1_golden():
    assert set(_golden("v1")) == set(EVENT_KINDS)


@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_golden_parses_and_reserialises_identically(kind):
    data = _golden("v1")[kind]
    got = parse_event(data)
    assert got.kind == kind and got.v == EVENT_VERSION
    assert dump_event(got) == data
    assert EVENT_ADAPTER.validate_json(json.dumps(data)) == got


def test_missing_version_means_v1():
    data = dict(_golden("v1")["turn_started"])
    data.pop("v")
    assert parse_event(data).v == 1


def test_unknown_kind_and_future_version_rejected():
    with pytest.raises(ValueError):
        parse_event({"kind": "teleported", "seq": 0, "turn": 0})
    data = dict(_golden("v1")["turn_started"], v=EVENT_VERSION + 1)
    with pytest.raises(ValueError):
        parse_event(data)


def test_extra_fields_rejected():
    data = dict(_golden("v1")["turn_started"], surprise=1)
    with pytest.raises(ValueError):
        parse_event(data)


def test_older_versions_are_upgraded(monkeypatch):
    """A reader at version N+1 keeps reading version-N logs through the upgrader table."""
    v1 = _golden("v1")["patience_charged"]
    old = dict(v1)
    old["amount"] = old.pop("cost")  # pretend v1 called the field 'amount' and we are at v2

    def up(d):
        d = dict(d)
        d["cost"] = d.pop("amount")
        return d

    monkeypatch.setattr(ev, "EVENT_VERSION", 2)
    monkeypatch.setitem(ev.UPGRADERS, ("patience_charged", 1), up)
    got = ev.parse_event(old)
    assert got.v == 2 and got.cost == v1["cost"] and got.after == v1["after"]
    with pytest.raises(ValueError, match="no upgrade"):
        ev.parse_event(dict(_golden("v1")["turn_started"]))  # no upgrader for this kind


def test_no_upgrade_path_is_an_error(monkeypatch):
    monkeypatch.setattr(ev, "EVENT_VERSION", 3)
    with pytest.raises(ValueError, match="no upgrade"):
        ev.parse_event(dict(_golden("v1")["shift_due"]))
