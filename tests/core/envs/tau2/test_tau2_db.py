"""The copy-on-write engine: overlay hash == naive full-dump hash, base never mutated."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.envs.tau2 import Tau2World
from core.envs.tau2.db import BaseDB, OverlayState, naive_hash
from core.model.world import EnvAction

KEYS = st.text(alphabet="abcxyz#0129", min_size=1, max_size=4)
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(-1e3, 1e3, allow_nan=False)
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
DBS = st.dictionaries(
    st.sampled_from(["orders", "users", "products"]),
    st.dictionaries(KEYS, st.dictionaries(st.text(max_size=3), VALUES, max_size=3), max_size=6),
    min_size=1,
)
OPS = st.lists(st.tuples(st.integers(0, 2), KEYS, st.text(max_size=3), VALUES), max_size=12)


@settings(max_examples=80, deadline=None)
@given(db=DBS, ops=OPS)
def test_overlay_hash_equals_naive_after_random_writes(db: dict[str, Any], ops: list[Any]) -> None:
    snapshot = json.dumps(db, sort_keys=True)
    base = BaseDB(db)
    assert base.hash == naive_hash(db)
    state = OverlayState(base)
    colls = sorted(db)
    for i, (ci, key, field, value) in enumerate(ops):
        coll = colls[ci % len(colls)]
        if state.has(coll, key) and i % 2:
            state.write(coll, key)[field] = value  # in-place mutation of an existing record
        else:
            state.put(coll, key, {field: value})  # insert (anywhere in key order) or replace
        if i % 3 == 0:
            assert state.state_hash() == naive_hash(state.materialize())
    assert state.state_hash() == naive_hash(state.materialize())
    assert json.dumps(db, sort_keys=True) == snapshot  # the base records never change
    assert base.hash == naive_hash(db)


def test_inserts_into_empty_and_at_edges() -> None:
    db: dict[str, Any] = {"a": {}, "b": {"m": {"x": 1}}}
    base = BaseDB(db)
    state = OverlayState(base)
    for coll, key in [("a", "k"), ("a", "j"), ("b", "a"), ("b", "z"), ("b", "n")]:
        state.put(coll, key, {"v": key})
        assert state.state_hash() == naive_hash(state.materialize())


def test_large_base_uses_checkpoints() -> None:
    db = {"r": {f"{i:05d}": {"payload": "x" * 50, "i": i} for i in range(3000)}}
    base = BaseDB(db)
    assert len(base.blob) > 3 * 65536
    state = OverlayState(base)
    state.write("r", "02999")["i"] = -1  # near the end: resumes from a late checkpoint
    assert state.state_hash() == naive_hash(state.materialize())
    state.write("r", "00000")["i"] = -2
    assert state.state_hash() == naive_hash(state.materialize())


def test_sessions_are_isolated(retail: Tau2World) -> None:
    a, b = retail.open_session(), retail.open_session()
    a.act(
        EnvAction(
            tool="cancel_pending_order",
            args={"order_id": "#W0000001", "reason": "no longer needed"},
        )
    )
    assert b.state.get("orders", "#W0000001")["status"] == "pending"
    assert b.state_hash() == retail.state_hash() != a.state_hash()
    assert naive_hash(retail.base.records) == retail.state_hash()
    assert a.state.changed() == {"orders": ["#W0000001"]}
