"""Typed GRIP rows: the fields they read exist in the event models; SQL rows equal typed rows."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from pydantic import create_model

from core.grip import rows as rows_mod
from core.grip.dimensions import REDUCERS
from core.grip.metrics import EPISODE_METRICS, METRICS
from core.grip.record import RECORD_COLUMNS
from core.grip.rows import (
    BUILDERS,
    HEADER_SQL,
    ROW_SQL,
    SOURCES,
    WIDTH,
    event_models,
    obj,
    row_of,
    schema_problems,
    seq,
)
from core.model.events import EVENT_KINDS, UserReplied

EVENT_GOLDEN = Path(__file__).parents[1] / "model" / "golden" / "v1"


def test_every_row_field_exists_in_the_event_models() -> None:
    assert schema_problems() == []
    assert set(SOURCES) <= set(EVENT_KINDS)
    for kind, src in SOURCES.items():
        assert src.row._fields == ("turn", *src.row._fields[1:]), kind
        assert len(src.row._fields) == len(src.paths) + 1 <= WIDTH + 1, kind
        for path in src.paths:
            assert f"json_extract(e.body, '$.{path}')" in ROW_SQL, (kind, path)
    assert "json_extract(p.header, '$.config.shifts_enabled')" in HEADER_SQL


def test_a_renamed_event_field_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    fields: dict[str, Any] = {
        name: (f.annotation, f) for name, f in UserReplied.model_fields.items() if name != "asked"
    }
    fields["asked_slots"] = (tuple[str, ...], ())
    renamed = create_model("UserReplied", **fields)
    models = {**event_models(), "user_reply": renamed}
    monkeypatch.setattr(rows_mod, "event_models", lambda: models)
    problems = schema_problems()
    assert len(problems) == 1 and "'asked'" in problems[0] and "UserReplied" in problems[0]


def _sql_row(conn: sqlite3.Connection, ev: dict[str, Any]) -> Any:
    conn.execute("DELETE FROM events")
    conn.execute(
        "INSERT INTO events VALUES (?, ?, ?, ?)", ("e", ev["kind"], ev["turn"], json.dumps(ev))
    )
    _, kind, turn, *cols = conn.execute(
        f"SELECT e.episode_id, e.kind, e.turn, {ROW_SQL} FROM events e"
    ).fetchone()
    assert len(cols) == WIDTH
    return BUILDERS[kind](turn, *cols)


def _decoded(v: Any) -> Any:
    if isinstance(v, str) and v[:1] in "[{":
        return json.loads(v)
    if isinstance(v, (list, tuple)):
        return list(v)
    return v


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_sql_rows_equal_typed_rows(kind: str) -> None:
    ev = json.loads((EVENT_GOLDEN / f"{kind}.json").read_text(encoding="utf-8"))
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE events (episode_id TEXT, kind TEXT, turn INTEGER, body TEXT)")
    typed, sql = row_of(ev), _sql_row(conn, ev)
    assert typed is not None and type(typed) is type(sql)
    for name, a, b in zip(typed._fields, typed, sql, strict=True):
        if isinstance(a, bool):
            assert bool(b) is a, (kind, name)
        else:
            assert _decoded(a) == _decoded(b), (kind, name)
    assert any(v is not None for v in typed[1:]), kind  # the golden example carries data


def test_decoders() -> None:
    assert seq(None) == () and seq("[]") == () and seq('["a"]') == ["a"] and seq(("a",)) == ("a",)
    assert obj(None) == {} and obj("null") == {} and obj('{"k": 1}') == {"k": 1}


def test_every_metric_is_defined_by_the_reducer_of_its_dimension() -> None:
    defined = {c for r in REDUCERS.values() for c in r.METRICS}
    for m in EPISODE_METRICS:
        if m.dimension != "Role-realism":  # Identification is judged (core.grip.realism)
            assert m.column in RECORD_COLUMNS, m.name
            assert m.column in REDUCERS[m.dimension].METRICS, (m.name, m.dimension)
    assert defined == {m.column for m in EPISODE_METRICS if m.dimension != "Role-realism"}
    assert {m.dimension for m in METRICS} == set(REDUCERS)
