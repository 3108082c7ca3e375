"""Store integrity: damaged files give one line and exit 2 everywhere, and are never written.

Damage kinds: garbage bytes, a text file, a flipped magic string, truncations (to half, by one
page, inside the header), a page of zeros, a directory where the file should be, and a flipped
page in the middle of the file (which only ``PRAGMA quick_check`` finds). A full disk is
simulated with ``PRAGMA max_page_count`` (SQLite then fails exactly as on a full disk:
``SQLITE_FULL``, "database or disk is full").
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from core.store import Store
from core.store.integrity import StoreCorruptError, StoreFullError, describe_sqlite_error
from core.studio.health import store_health, store_problem_text
from tests.reliability.test_malformed_inputs import (  # noqa: F401 - fixtures
    _cli,
    store_copy,
    template_store,
)


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"


def _flip_page(data: bytes, page: int, page_size: int = 4096) -> bytes:
    out = bytearray(data)
    off = (page - 1) * page_size
    for i in range(100):
        out[off + i] ^= 0xFF
    return bytes(out)


DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "garbage": lambda b: b"\x8a\x13 not sqlite " * 700,
    "text-file": lambda b: b"hello\n",
    "magic-flipped": lambda b: b"SQLite format 4\x00" + b[16:],
    "truncated-half": lambda b: b[: len(b) // 2],
    "truncated-one-page": lambda b: b[:-4096],
    "truncated-in-header": lambda b: b[:50],
    "zeros": lambda b: b"\x00" * 8192,
    "header-page-size": lambda b: b[:16] + b"\x00\x03" + b[18:],
}

COMMANDS: list[list[str]] = [
    ["runs"],
    ["runs", "--json"],
    ["export", "r"],
    ["run", "--benchmark", "mock", "--method", "B0", "--seeds", "1", "--limit", "1"],
    ["init", "--no-demo"],
    ["grip", "r"],
    ["import", "sessions", "--from", "/dev/null"],
]


@pytest.fixture
def damaged(store_copy: Path, request: pytest.FixtureRequest) -> Path:  # noqa: F811
    store_copy.write_bytes(DAMAGE[request.param](store_copy.read_bytes()))
    return store_copy


@pytest.mark.parametrize("damaged", list(DAMAGE), indirect=True)
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: "-".join(a[:2]))
def test_a_damaged_store_gives_one_line_exit_2_and_stays_byte_identical(
    damaged: Path, argv: list[str]
) -> None:
    before = _hash(damaged)
    rc, out, err = _cli(damaged, *argv)
    assert rc == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(damaged) in err and ("not a SQLite" in err or "corrupt" in err), err
    assert _hash(damaged) == before
    assert not Path(f"{damaged}-wal").exists()  # nothing was even started


def test_doctor_reports_an_unopenable_store_as_failed_integrity(store_copy: Path) -> None:  # noqa: F811
    store_copy.write_bytes(b"garbage" * 1000)
    rc, out, _ = _cli(store_copy, "doctor", "--json")
    assert rc == 2
    report = json.loads(out)["store"]
    assert report["integrity"]["ok"] is False
    assert "not a SQLite database" in report["integrity"]["quick_check"][0]


def _mid_file_flip(path: Path) -> None:
    """Flip the start of an index page: opening still works, quick_check fails."""
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='episodes_cell'").fetchone()
    conn.close()
    path.write_bytes(_flip_page(path.read_bytes(), int(root[0])))


def test_a_mid_file_flip_is_found_by_doctor_and_store_health(store_copy: Path) -> None:  # noqa: F811
    rc, out, _ = _cli(store_copy, "doctor", "--json")
    assert rc == 0 and json.loads(out)["store"]["integrity"] == {"ok": True, "quick_check": ["ok"]}
    _mid_file_flip(store_copy)
    rc, out, _ = _cli(store_copy, "doctor", "--json")
    assert rc == 2
    integrity = json.loads(out)["store"]["integrity"]
    assert integrity["ok"] is False and integrity["quick_check"] != ["ok"]
    rc, out, err = _cli(store_copy, "doctor")
    assert "integrity: FAILED" in out
    health = store_health(Store.open(store_copy))
    assert health["integrity"] == "FAILED" and health["problems"]


def test_run_refuses_to_write_into_a_store_that_fails_its_check(store_copy: Path) -> None:  # noqa: F811
    _mid_file_flip(store_copy)
    before = _hash(store_copy)
    rc, _, err = _cli(
        store_copy, "run", "--benchmark", "mock", "--method", "B0", "--seeds", "1", "--limit", "1"
    )
    assert rc == 2 and "integrity check" in err and err.count("\n") == 1, err
    assert _hash(store_copy) == before


def test_a_directory_as_store_is_one_line(tmp_path: Path) -> None:
    rc, _, err = _cli(tmp_path, "runs")
    assert rc == 2 and "is a directory" in err and err.count("\n") == 1


def test_the_studio_says_what_is_wrong_in_plain_words(tmp_path: Path) -> None:
    bad = tmp_path / "s.db"
    bad.write_bytes(b"nope" * 1024)
    with pytest.raises(StoreCorruptError) as info:
        Store.open(bad)
    text = store_problem_text(bad, info.value)
    assert "cannot use its store file" in text and "driftbench doctor" in text
    assert "Traceback" not in text and "not a SQLite database" in text


def _limit_pages(monkeypatch: pytest.MonkeyPatch, pages: int) -> None:
    """Every new store connection may grow the file to ``pages`` pages (a 'full disk')."""
    import core.store.connection as connection

    real = sqlite3.connect

    def connect(*a: object, **kw: object) -> sqlite3.Connection:
        conn = real(*a, **kw)  # type: ignore[arg-type]
        conn.execute(f"PRAGMA max_page_count={pages}")
        return conn

    monkeypatch.setattr(connection.sqlite3, "connect", connect)


def test_init_on_a_full_disk_says_so_and_leaves_no_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _limit_pages(monkeypatch, 60)  # the schema fits, the bundled worlds do not
    path = tmp_path / "new.db"
    rc, out, err = _cli(path, "init", "--no-demo")
    assert rc == 2, (out, err)
    assert "disk is full" in err and err.count("\n") == 1, err
    assert "cannot rollback" not in err
    assert not path.exists() and not Path(f"{path}-wal").exists()


def test_creating_the_schema_on_a_full_disk_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _limit_pages(monkeypatch, 3)
    path = tmp_path / "new.db"
    with pytest.raises(StoreFullError, match="disk is full"):
        Store.open(path)
    assert not path.exists()


def test_a_full_disk_during_a_write_rolls_back_and_names_the_cause(
    store_copy: Path,  # noqa: F811
) -> None:
    store = Store.open(store_copy)
    pages = int(store.conn.execute("PRAGMA page_count").fetchone()[0])
    store.conn.execute(f"PRAGMA max_page_count={pages}")
    runs = store.counts()["runs"]
    with pytest.raises(StoreFullError, match="disk is full"):
        with store.transaction() as conn:
            conn.execute("INSERT INTO meta(key, value) VALUES ('pad', ?)", ("x" * 200_000,))
    assert store.counts()["runs"] == runs
    assert store.conn.execute("SELECT count(*) FROM meta WHERE key='pad'").fetchone()[0] == 0


def test_sqlite_errors_are_described_by_kind() -> None:
    full = sqlite3.OperationalError("database or disk is full")
    assert "disk is full" in describe_sqlite_error("s.db", full)
    assert "locked" in describe_sqlite_error("s.db", sqlite3.OperationalError("database is locked"))
    corrupt = sqlite3.DatabaseError("database disk image is malformed")
    assert "corrupt" in describe_sqlite_error("s.db", corrupt)
