"""``core.store`` is a package now; its public API, signatures and behaviour are those of the
single module it replaced, and derived memos belong to a store object."""

from __future__ import annotations

import inspect
import threading
from pathlib import Path

import pytest

import core.store as store_pkg
from core.model.cache import LockedLRU
from core.store import Store

PUBLIC_METHODS = {
    "add_annotation": "(self, *, annotator: 'str', target_kind: 'str', target_id: 'str', "
    "label_kind: 'str', value: 'Any', study_id: 'str | None' = None, turn: 'int | None' = None, "
    "self_played: 'bool' = False, seconds: 'float | None' = None) -> 'int'",
    "append": "(self, episode_id: 'str', events: 'Sequence[Any]') -> 'None'",
    "close": "(self) -> 'None'",
    "count_events": "(self, episode_id: 'str') -> 'int'",
    "counts": "(self) -> 'dict[str, int]'",
    "create_episode": "(self, header: 'Any') -> 'None'",
    "episode_exists": "(self, episode_id: 'str') -> 'bool'",
    "episode_rows": "(self, *, run_id: 'str | None' = None, status: 'str | None' = None, "
    "limit: 'int | None' = None) -> 'list[dict[str, Any]]'",
    "episode_status": "(self, episode_id: 'str') -> 'tuple[str, str | None] | None'",
    "event_jsons": "(self, episode_id: 'str', *, after_seq: 'int' = -1) -> 'list[str]'",
    "events": "(self, episode_id: 'str') -> 'list[Any]'",
    "finish": "(self, episode_id: 'str', outcome: 'Any', summary: 'dict[str, Any]') -> 'None'",
    "get_run": "(self, run_or_name: 'str') -> 'dict[str, Any]'",
    "get_world": "(self, world_id: 'str') -> 'WorldRecord | None'",
    "graph_json": "(self, graph_id: 'str') -> 'str'",
    "header": "(self, episode_id: 'str') -> 'Any'",
    "header_json": "(self, episode_id: 'str') -> 'str'",
    "list_runs": "(self) -> 'list[dict[str, Any]]'",
    "list_worlds": "(self, benchmark: 'str | None' = None) -> 'list[dict[str, Any]]'",
    "put_graphs_and_samples": "(self, graphs: 'Sequence[Any]', samples: 'Sequence[Any]', *, "
    "source: 'str') -> 'tuple[int, int]'",
    "put_run": "(self, run_id: 'str', name: 'str', spec_json: 'str', total: 'int') -> 'None'",
    "put_world": "(self, *, benchmark: 'str', world_id: 'str', name: 'str', source: 'str', "
    "payload: 'dict[str, Any]', summary: 'dict[str, Any]') -> 'None'",
    "sample_json": "(self, sample_id: 'str') -> 'str'",
    "sample_rows": "(self, benchmark: 'str | None' = None) -> 'list[dict[str, Any]]'",
    "schema_version": "(self) -> 'int'",
    "set_run_status": "(self, run_id: 'str', status: 'str', *, completed: 'int | None' = None, "
    "errors: 'int | None' = None, cost_usd: 'float | None' = None) -> 'None'",
    "transaction": "(self) -> 'Iterator[sqlite3.Connection]'",
}
"""Every public method of the old ``core/store.py`` Store, with its signature as it was."""


def test_every_old_method_keeps_its_signature() -> None:
    for name, sig in PUBLIC_METHODS.items():
        assert str(inspect.signature(getattr(Store, name))) == sig, name
    assert str(inspect.signature(Store.__init__)) == "(self, path: 'Path') -> 'None'"
    assert isinstance(inspect.getattr_static(Store, "conn"), property)
    assert isinstance(inspect.getattr_static(Store, "db"), property)
    assert isinstance(inspect.getattr_static(Store, "open"), classmethod)


def test_every_old_module_name_is_still_importable() -> None:
    for name in (
        "STORE_SCHEMA_VERSION",
        "_SCHEMA_V1",
        "STUDY_DDL",
        "_MIGRATIONS",
        "_statements",
        "utcnow",
        "StoreError",
        "WorldRecord",
        "Store",
    ):
        assert hasattr(store_pkg, name), name


def test_open_returns_a_store_and_db_is_lazy(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s.db")
    assert type(store) is Store
    assert store.db["meta"].count == 1  # sqlite-utils is imported only here


def test_memos_belong_to_one_store_object(tmp_path: Path) -> None:
    a = Store.open(tmp_path / "s.db")
    b = Store(tmp_path / "s.db")
    assert a.memo("x") is a.memo("x")
    assert a.memo("x") is not b.memo("x") and a.memo("x") is not a.memo("y")
    a.memo("x").put("k", 1)
    assert a.memo("x").get("k") == 1 and b.memo("x").get("k") is None


def test_memo_is_a_bounded_lru() -> None:
    m: LockedLRU[str, int] = LockedLRU(maxsize=2)
    m.put("a", 1)
    m.put("b", 2)
    assert m.get("a") == 1  # a is now the most recent
    m.put("c", 3)
    assert m.get("b") is None and m.get("a") == 1 and m.get("c") == 3 and len(m) == 2
    m.clear()
    assert len(m) == 0
    with pytest.raises(ValueError):
        LockedLRU(maxsize=0)


def test_memo_creation_is_thread_safe(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    got: list[LockedLRU[object, object]] = []
    barrier = threading.Barrier(8)

    def grab() -> None:
        barrier.wait()
        got.append(store.memo("shared"))

    threads = [threading.Thread(target=grab) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(m) for m in got}) == 1
