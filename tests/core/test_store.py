import json
import sqlite3
import threading
from types import SimpleNamespace

import pytest

from core.errors import NotFoundError
from core.store import STORE_SCHEMA_VERSION, Store, StoreError


class _Ev(SimpleNamespace):
    def model_dump_json(self) -> str:
        return json.dumps({"seq": self.seq, "kind": self.kind, "turn": self.turn})


class _Header(SimpleNamespace):
    def model_dump_json(self) -> str:
        return json.dumps(self.__dict__)


def _header(eid: str = "e1") -> _Header:
    return _Header(
        episode_id=eid,
        run_id=None,
        sample_id="s1",
        benchmark="mock",
        method="A0",
        persona_id="rational",
        seed=0,
        parent_episode_id=None,
    )


def test_schema_created_up_front_with_wal_and_fks(store: Store) -> None:
    conn = store.conn
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "meta",
        "worlds",
        "graphs",
        "samples",
        "runs",
        "episodes",
        "events",
        "llm_cache",
        "annotations",
        "judgments",
    } <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.schema_version() == STORE_SCHEMA_VERSION


def test_open_without_create_names_missing_store(tmp_path) -> None:
    with pytest.raises(NotFoundError, match="driftbench init"):
        Store.open(tmp_path / "nope.db", create=False)


def test_newer_schema_is_refused(store_path) -> None:
    s = Store.open(store_path)
    with s.transaction() as conn:
        conn.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    s.close()
    with pytest.raises(StoreError, match="newer"):
        Store.open(store_path)


def test_reopen_is_idempotent(store_path) -> None:
    Store.open(store_path).put_world(
        benchmark="mock", world_id="w", name="n", source="s", payload={"a": 1}, summary={}
    )
    s = Store.open(store_path)
    assert s.get_world("w").payload == {"a": 1}
    assert s.list_worlds("mock")[0]["world_id"] == "w"
    assert s.get_world("missing") is None


def test_events_are_append_only(store: Store) -> None:
    store.create_episode(_header())
    store.append("e1", [_Ev(seq=0, kind="turn_started", turn=0), _Ev(seq=1, kind="x", turn=0)])
    assert len(store.event_jsons("e1")) == 2
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("UPDATE events SET kind='y'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("DELETE FROM events")
    assert len(store.event_jsons("e1")) == 2


def test_append_requires_contiguous_seq(store: Store) -> None:
    store.create_episode(_header())
    store.append("e1", [_Ev(seq=0, kind="a", turn=0)])
    with pytest.raises(StoreError, match="does not continue"):
        store.append("e1", [_Ev(seq=5, kind="a", turn=0)])
    with pytest.raises(NotFoundError):
        store.append("nope", [_Ev(seq=0, kind="a", turn=0)])
    assert [json.loads(b)["seq"] for b in store.event_jsons("e1")] == [0]


def test_events_need_an_episode(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute("INSERT INTO events VALUES ('ghost', 0, 'a', 0, '{}')")


def test_finish_and_rows(store: Store) -> None:
    store.put_run("r1", "demo", "{}", total=1)
    h = _header()
    h.run_id = "r1"
    store.create_episode(h)
    store.finish("e1", "SUCCESS", {"turns": 3})
    rows = store.episode_rows(run_id="r1")
    assert rows[0]["outcome"] == "SUCCESS" and rows[0]["summary"] == {"turns": 3}
    assert store.get_run("demo")["run_id"] == "r1"
    store.set_run_status("r1", "done", completed=1)
    assert store.list_runs()[0]["completed"] == 1
    with pytest.raises(NotFoundError):
        store.get_run("other")


def test_concurrent_writers_under_wal(store_path) -> None:
    store = Store.open(store_path)
    n_threads, per_thread = 8, 25
    for t in range(n_threads):
        store.create_episode(_header(f"e{t}"))
    errors: list[BaseException] = []

    def writer(t: int) -> None:
        s = Store(store_path)  # a second instance: separate connections, same file
        try:
            for i in range(per_thread):
                s.append(f"e{t}", [_Ev(seq=i, kind="k", turn=i)])
                s.add_annotation(
                    annotator=f"a{t}",
                    target_kind="episode",
                    target_id=f"e{t}",
                    label_kind="realism",
                    value=i,
                )
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    counts = store.counts()
    assert counts["events"] == n_threads * per_thread
    assert counts["annotations"] == n_threads * per_thread


def test_transaction_rolls_back(store: Store) -> None:
    with pytest.raises(RuntimeError):
        with store.transaction() as conn:
            conn.execute("INSERT INTO worlds VALUES ('w','b','n','s','{}','{}','t')")
            raise RuntimeError("boom")
    assert store.counts()["worlds"] == 0


def test_v1_store_migrates_to_v2_with_study_tables(store_path) -> None:
    import sqlite3 as _sqlite3

    from core.store import _SCHEMA_V1, _statements

    conn = _sqlite3.connect(store_path)
    for statement in _statements(_SCHEMA_V1):
        conn.execute(statement)
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO worlds VALUES ('w','b','n','s','{}','{}','t')")
    conn.commit()
    conn.close()
    store = Store.open(store_path)
    assert store.schema_version() == STORE_SCHEMA_VERSION >= 2
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"studies", "assignments", "study_plays", "sessions", "session_judgments"} <= tables
    assert store.get_world("w") is not None  # data kept


def test_new_store_has_study_tables_up_front(store: Store) -> None:
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"studies", "annotators", "study_annotators", "assignments"} <= tables
