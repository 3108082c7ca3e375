"""No command writes over what it doesn't own (issue 32, item 1).

Every ``--out`` goes through :mod:`core.store.outputs`: the store (by name, link or content),
its WAL/SHM, anything inside ``$DRIFTBENCH_HOME``, any input folder and — without ``--force`` —
any existing file is refused with one line and exit 2, and nothing is changed. ``env
catalogue`` writes only into a new or empty folder. Before: ``export --out driftbench.db``
exited 0 and left 13 MB of JSONL where the store was.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from core.paths import DATA_DIR, home_dir
from tests.conftest import require_hostdata
from tests.reliability.test_malformed_inputs import (  # noqa: F401 - fixtures
    _cli,
    _snapshot,
    store_copy,
    template_store,
)

RUN = "mock-B0"


def _run_name(store: Path) -> str:
    from core.store import Store

    s = Store.open(store)
    try:
        return str(s.list_runs()[0]["name"])
    finally:
        s.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(store: Path, out: Path | str, *extra: str, expect: str = "--out") -> str:
    before = _snapshot(store)
    rc, stdout, err = _cli(store, "export", _run_name(store), "--out", str(out), *extra)
    assert rc == 2, (stdout[-300:], err[-800:])
    assert "Traceback" not in err
    line = next(ln for ln in err.splitlines() if "error:" in ln)
    assert expect in line, line
    assert _snapshot(store) == before
    return line


TARGETS: list[tuple[str, Callable[[Path, Path], Path]]] = [
    ("the-store", lambda store, t: store),
    ("its-wal", lambda store, t: store.with_name(store.name + "-wal")),
    ("its-shm", lambda store, t: store.with_name(store.name + "-shm")),
    ("relative-dotdot", lambda store, t: store.parent / "sub" / ".." / store.name),
    ("inside-home", lambda store, t: home_dir() / "run.jsonl"),
    ("default-store", lambda store, t: home_dir() / "driftbench.db"),
    ("input-folder-data", lambda store, t: DATA_DIR / "run.jsonl"),
]


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
@pytest.mark.parametrize(("name", "target"), TARGETS, ids=[t[0] for t in TARGETS])
def test_export_never_writes_where_it_does_not_own(
    store_copy: Path,  # noqa: F811
    tmp_path: Path,
    name: str,
    target: Callable[[Path, Path], Path],
    force: bool,
) -> None:
    (store_copy.parent / "sub").mkdir(exist_ok=True)
    home_dir().mkdir(parents=True, exist_ok=True)
    out = target(store_copy, tmp_path)
    existed = out.exists()
    _refused(store_copy, out, *(["--force"] if force else []))
    assert out.exists() == existed


def test_a_link_to_the_store_is_the_store(store_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    sym = tmp_path / "innocent.jsonl"
    sym.symlink_to(store_copy)
    _refused(store_copy, sym, "--force")
    hard = tmp_path / "hard.jsonl"
    os.link(store_copy, hard)
    _refused(store_copy, hard, "--force")


def test_another_sqlite_database_is_never_replaced(store_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    other = tmp_path / "other.db"
    shutil.copy(store_copy, other)
    digest = _digest(other)
    line = _refused(store_copy, other, "--force")
    assert "SQLite" in line
    assert _digest(other) == digest


def test_an_existing_file_needs_force(store_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "notes.txt"
    out.write_text("my notes\n")
    line = _refused(store_copy, out)
    assert "--force" in line
    assert out.read_text() == "my notes\n"
    rc, _, err = _cli(store_copy, "export", _run_name(store_copy), "--out", str(out), "--force")
    assert rc == 0, err
    assert out.read_text().startswith('{"episode_id"')


def test_a_fresh_export_is_written_whole(store_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "run.jsonl"
    rc, _, err = _cli(store_copy, "export", _run_name(store_copy), "--out", str(out))
    assert rc == 0, err
    assert out.read_text().count("\n") >= 1
    assert not list(tmp_path.glob(".*.part"))


def test_an_export_of_an_unknown_run_creates_no_file(store_copy: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "none.jsonl"
    rc, _, _ = _cli(store_copy, "export", "no-such-run", "--out", str(out))
    assert rc == 2
    assert not out.exists() and not list(tmp_path.glob(".*.part"))


# -- env catalogue -------------------------------------------------------------------------------
def test_env_catalogue_never_overwrites_real_host_data(tmp_path: Path) -> None:
    real = require_hostdata("webshop")
    copy = tmp_path / "webshop"
    shutil.copytree(real, copy)
    for p in copy.iterdir():
        p.chmod(0o644)
    before = {p.name: _digest(p) for p in copy.iterdir()}
    rc, out, err = _cli(tmp_path / "s.db", "env", "catalogue", "--products", "50", "--out", copy)
    assert rc == 2, (out, err)
    line = next(ln for ln in err.splitlines() if "error:" in ln)
    assert "--out" in line and "not empty" in line, line
    assert {p.name: _digest(p) for p in copy.iterdir()} == before


@pytest.mark.parametrize(
    "where",
    [
        lambda t: DATA_DIR / "webshop",
        lambda t: home_dir(),
        lambda t: home_dir() / "catalogue",
    ],
    ids=["bundled-data", "home", "inside-home"],
)
def test_env_catalogue_refuses_protected_folders(
    tmp_path: Path, where: Callable[[Path], Path]
) -> None:
    target = where(tmp_path)
    rc, _, err = _cli(tmp_path / "s.db", "env", "catalogue", "--products", "5", "--out", target)
    assert rc == 2, err
    assert "--out" in err
    assert not (target / "items_shuffle.json").exists() or target == DATA_DIR / "webshop"


def test_env_catalogue_writes_into_a_new_or_empty_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, _, err = _cli(tmp_path / "s.db", "env", "catalogue", "--products", "5", "--out", empty)
    assert rc == 0, err
    assert (empty / "items_shuffle.json").is_file()


def test_write_catalogue_itself_never_replaces_a_file(tmp_path: Path) -> None:
    from core.envs.webshop.catgen import write_catalogue
    from core.errors import ConfigError

    (tmp_path / "human_goals.json").write_text('["mine"]')
    with pytest.raises(ConfigError, match="human_goals.json"):
        write_catalogue(5, tmp_path)
    assert (tmp_path / "human_goals.json").read_text() == '["mine"]'


def test_the_import_error_never_suggests_writing_into_the_data_folder(tmp_path: Path) -> None:
    real = require_hostdata("webshop")
    rc, _, err = _cli(tmp_path / "s.db", "import", "webshop", "--from", real)
    assert rc == 2
    assert "here too" not in err
    assert "new" in err and "empty folder" in err
