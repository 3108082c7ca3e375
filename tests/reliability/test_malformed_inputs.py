"""Malformed inputs for every importer: a clear error naming file and field, exit code 2, and a
store left byte-identical.

Corpus per importer: truncated JSON, wrong-schema JSON, unknown ids, a 200 MB file (sparse, made
in tmp and never committed), a missing or disallowed path. The CLI runs in-process
(``core.cli.main``); the store is checkpointed and closed before its bytes are snapshotted.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.errors import ConfigError
from core.model.run import RunOptions, RunSpec
from core.paths import DATA_DIR, PROJECT_ROOT, shared_dir
from core.protocol.personas import load_personas
from core.runner import run_sweep
from core.store import Store
from core.studio.auth import hash_password, load_credentials
from core.studio.uploads import MAX_UPLOAD_BYTES, resolve_import_path, stage_upload

BIG = 200 * 1024 * 1024
TAU2_RETAIL = DATA_DIR / "tau2_retail"
RELEASE_WEBSHOP = shared_dir() / "driftbench_release" / "webshop_examples"


def _sparse(path: Path, size: int = BIG) -> Path:
    """A ``size``-byte file of NULs that takes no disk space."""
    with path.open("wb") as f:
        f.truncate(size)
    return path


def _snapshot(path: Path) -> tuple[str, str]:
    """Hash of the store file and of its WAL (empty when absent), all connections closed."""
    gc.collect()  # drop connections of Store objects the CLI created
    wal = path.with_name(path.name + "-wal")
    db_hash = hashlib.sha256(path.read_bytes()).hexdigest()
    wal_hash = hashlib.sha256(wal.read_bytes()).hexdigest() if wal.exists() else ""
    return db_hash, wal_hash


@pytest.fixture(scope="module")
def template_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with a finished run in it, checkpointed and closed."""
    path = tmp_path_factory.mktemp("tmpl") / "store.db"
    store = Store.open(path)
    spec = RunSpec(benchmarks=("mock",), methods=("B0",), personas=("rational",), seeds=(0,))
    run_sweep(store, spec, RunOptions(workers=1, progress=False))
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return path


@pytest.fixture
def store_copy(template_store: Path, tmp_path: Path) -> Path:
    path = tmp_path / "store.db"
    shutil.copy(template_store, path)
    return path


def _cli(store: Path, *argv: object) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(store), *map(str, argv)])
    return rc, out.getvalue(), err.getvalue()


# -- corpus ---------------------------------------------------------------------------------------
def _tau2(tmp: Path, mutate: Callable[[Path], object]) -> list[object]:
    d = tmp / "retail"
    shutil.copytree(TAU2_RETAIL, d)
    mutate(d)
    return ["import", "tau2", "--domain", "retail", "--from", d]


def _rewrite(path: Path, fn: Callable[[object], object]) -> None:
    path.write_text(json.dumps(fn(json.loads(path.read_text()))))


def _bad_address(db: object) -> object:
    assert isinstance(db, dict)
    user = next(iter(db["users"]))
    db["users"][user]["address"] = 5
    return db


def _unknown_tool(tasks: object) -> object:
    assert isinstance(tasks, list)
    tasks[0]["evaluation_criteria"]["actions"][0]["name"] = "no_such_tool"
    return tasks


def _dir_with(tmp: Path, name: str, content: bytes | None) -> Path:
    d = tmp / "src"
    d.mkdir(exist_ok=True)
    if content is None:
        _sparse(d / name)
    else:
        (d / name).write_bytes(content)
    return d


def _release_graph(graph: dict[str, object]) -> bytes:
    return json.dumps(graph).encode()


def _release_with_unknown_node(tmp: Path) -> list[object]:
    if not RELEASE_WEBSHOP.is_dir():
        pytest.skip("../shared/driftbench_release absent: third-party data not available here")
    d = tmp / "release"
    shutil.copytree(RELEASE_WEBSHOP, d)
    tree = next(d.glob("tree_*.json"))
    graph = json.loads(tree.read_text())
    graph["edges"][0]["dst"] = "no-such-node"
    tree.write_text(json.dumps(graph))
    return ["import", "release", "--from", d]


def _sessions(tmp: Path, content: bytes | None) -> list[object]:
    path = tmp / "sessions.jsonl"
    if content is None:
        _sparse(path)
    else:
        path.write_bytes(content)
    return ["import", "sessions", "--from", path]


GOOD_SESSION = b'{"session_id": "a", "messages": [{"role": "user", "content": "hi"}]}\n'

# (id, argv builder, file the error must name, field it must name or None)
CASES: list[tuple[str, Callable[[Path], list[object]], str, str | None]] = [
    (
        "tau2-truncated-db",
        lambda t: _tau2(t, lambda d: (d / "db.json").write_text('{"products": {"x')),
        "db.json",
        "line 1",
    ),
    (
        "tau2-wrong-schema-db",
        lambda t: _tau2(t, lambda d: _rewrite(d / "db.json", _bad_address)),
        "db.json",
        "address",
    ),
    (
        "tau2-wrong-schema-tasks",
        lambda t: _tau2(t, lambda d: (d / "tasks.json").write_text('[{"id": 1}]')),
        "tasks.json",
        "[0].id",
    ),
    (
        "tau2-unknown-task-id-in-split",
        lambda t: _tau2(t, lambda d: (d / "split_tasks.json").write_text('{"train": ["nope"]}')),
        "split_tasks.json",
        "train.0",
    ),
    (
        "tau2-unknown-tool-in-golden-actions",
        lambda t: _tau2(t, lambda d: _rewrite(d / "tasks.json", _unknown_tool)),
        "tasks.json",
        "actions.0.name",
    ),
    ("tau2-200MB-db", lambda t: _tau2(t, lambda d: _sparse(d / "db.json")), "db.json", None),
    (
        "webshop-truncated",
        lambda t: ["import", "webshop", "--from", _dir_with(t, "items_shuffle.json", b'[{"as')],
        "items_shuffle.json",
        "line 1",
    ),
    (
        "webshop-wrong-schema",
        lambda t: [
            "import",
            "webshop",
            "--from",
            _dir_with(t, "items_shuffle.json", b'[{"asin": 5, "name": "x", "query": "q"}]'),
        ],
        "items_shuffle.json",
        "0.asin",
    ),
    (
        "webshop-200MB",
        lambda t: ["import", "webshop", "--from", _dir_with(t, "items_shuffle.json", None)],
        "items_shuffle.json",
        None,
    ),
    (
        "webshop-no-product-file",
        lambda t: ["import", "webshop", "--from", _dir_with(t, "notes.txt", b"hello")],
        "src",
        None,
    ),
    (
        "release-truncated",
        lambda t: ["import", "release", "--from", _dir_with(t, "sample_v2_x.json", b'{"q": ')],
        "sample_v2_x.json",
        None,
    ),
    (
        "release-wrong-schema",
        lambda t: [
            "import",
            "release",
            "--from",
            _dir_with(
                t,
                "tree_x.json",
                _release_graph({"root": 1, "children": [], "edges": [], "tree_id": "x"}),
            ),
        ],
        "tree_x.json",
        "adapter",
    ),
    ("release-unknown-node", _release_with_unknown_node, "tree_", "edges"),
    (
        "release-200MB",
        lambda t: ["import", "release", "--from", _dir_with(t, "tree_big.json", None)],
        "tree_big.json",
        None,
    ),
    (
        "sessions-truncated",
        lambda t: _sessions(t, GOOD_SESSION + b'{"session_id": "b", "messa'),
        "sessions.jsonl",
        "line 2",
    ),
    (
        "sessions-wrong-schema",
        lambda t: _sessions(t, b'{"session_id": "a", "mesages": []}\n'),
        "sessions.jsonl",
        "mesages",
    ),
    (
        "sessions-duplicate-id",
        lambda t: _sessions(t, GOOD_SESSION + GOOD_SESSION),
        "sessions.jsonl",
        "line 2",
    ),
    ("sessions-200MB", lambda t: _sessions(t, None), "sessions.jsonl", "line 1"),
    (
        "sessions-missing-file",
        lambda t: ["import", "sessions", "--from", t / "absent.jsonl"],
        "absent.jsonl",
        None,
    ),
    (
        "tau2-missing-folder",
        lambda t: ["import", "tau2", "--domain", "retail", "--from", t / "absent"],
        "absent",
        None,
    ),
    (
        "run-unknown-persona",
        lambda t: ["run", "--benchmark", "mock", "--method", "B0", "--persona", "nobody"],
        "",
        "--persona",
    ),
    (
        "run-unknown-benchmark",
        lambda t: ["run", "--benchmark", "nope", "--method", "B0"],
        "",
        "--benchmark",
    ),
    ("export-unknown-run", lambda t: ["export", "no-such-run"], "", "no-such-run"),
]


def _params(cases: list[tuple[str, Callable[[Path], list[object]], str, str | None]]) -> list[Any]:
    """One 200 MB file stays in the normal suite; the others are slow (each reads 200 MB)."""
    return [
        pytest.param(
            *c[1:],
            id=c[0],
            marks=[pytest.mark.slow] if "200MB" in c[0] and not c[0].startswith("tau2") else [],
        )
        for c in cases
    ]


@pytest.mark.parametrize(("argv", "file", "field"), _params(CASES))
def test_cli_rejects_malformed_input_and_leaves_store_byte_identical(
    tmp_path: Path,
    store_copy: Path,
    argv: Callable[[Path], list[object]],
    file: str,
    field: str | None,
) -> None:
    args = argv(tmp_path)
    before = _snapshot(store_copy)
    rc, out, err = _cli(store_copy, *args)
    assert rc == 2, (out, err)
    lines = [ln for ln in err.splitlines() if "error:" in ln]
    assert lines, (out, err)
    first = lines[0]  # argparse prints its usage first, then the one error line
    assert file in first, first
    if field is not None:
        assert field in first, first
    assert "Traceback" not in err
    assert _snapshot(store_copy) == before


def test_cli_exit_code_is_2_as_a_process(tmp_path: Path, store_copy: Path) -> None:
    """The console entry point itself exits 2 (not only ``main``'s return value)."""
    import subprocess
    import sys

    bad = _dir_with(tmp_path, "items_shuffle.json", b"[")
    before = _snapshot(store_copy)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from core.cli import run; run()",
            "--store",
            str(store_copy),
            "import",
            "webshop",
            "--from",
            str(bad),
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "items_shuffle.json" in proc.stderr
    assert _snapshot(store_copy) == before


def _case(c: Any) -> Any:
    """(id, *values) or a pytest.param of the same → a pytest.param with that id."""
    if hasattr(c, "marks"):  # a ParameterSet (itself a tuple)
        return pytest.param(*c.values[1:], id=c.values[0], marks=c.marks)
    return pytest.param(*c[1:], id=c[0])


# -- personas ------------------------------------------------------------------------------------
PERSONA_CASES: list[Any] = [
    ("truncated", "rational", "id: rational\nbudget: [1, 2", None),
    ("wrong-schema", "rational", "id: rational\nname: R\npatience_multiplier: lots\n", None),
    ("id-mismatch", "rational", "id: other\n", "id"),
    ("not-a-mapping", "rational", "- a\n- b\n", None),
    pytest.param("200MB", "zz", None, None, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("stem", "text", "field"), [_case(c) for c in PERSONA_CASES])
def test_bad_persona_files_name_file_and_field(
    tmp_path: Path, stem: str, text: str | None, field: str | None
) -> None:
    folder = tmp_path / "personas"
    shutil.copytree(PROJECT_ROOT / "personas", folder)
    path = folder / f"{stem}.yaml"
    if text is None:
        _sparse(path)
    else:
        path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_personas(folder)
    assert info.value.file == str(path)
    if field is not None:
        assert info.value.field == field
    if stem == "rational" and "lots" in (text or ""):
        assert info.value.field  # the schema error names a field


# -- credentials ---------------------------------------------------------------------------------
CRED_CASES: list[Any] = [
    ("truncated-json", "c.json", '{"users": {"a": {"role": "annotator", "password": "pb', None),
    (
        "unknown-role",
        "c.json",
        '{"users": {"a": {"role": "god", "password": "x"}}}',
        "users.a.role",
    ),
    (
        "plain-password",
        "c.yaml",
        "users:\n  a: {role: annotator, password: hunter2}\n",
        "users.a.password",
    ),
    ("wrong-schema", "c.yaml", "users: [1]\n", "users"),
    ("unknown-field", "c.yaml", "users: {}\nadmins: [a]\n", "admins"),
    pytest.param("200MB", "c.yaml", None, None, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("name", "text", "field"), [_case(c) for c in CRED_CASES])
def test_bad_credentials_files_name_file_and_field(
    tmp_path: Path, name: str, text: str | None, field: str | None
) -> None:
    path = tmp_path / name
    if text is None:
        _sparse(path)
    else:
        path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_credentials(path)
    assert info.value.file == str(path)
    assert info.value.field == field
    assert "hunter2" not in str(info.value)  # a clear-text password is never echoed


def test_missing_credentials_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_credentials(tmp_path / "absent.yaml")
    assert info.value.file == str(tmp_path / "absent.yaml")


def test_good_credentials_still_load(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"users": {"a": {"role": "admin", "password": hash_password("x")}}}))
    assert load_credentials(path).users["a"].role == "admin"


# -- uploads and server paths -----------------------------------------------------------------
def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_upload_of_200MB_plus_one_is_refused_without_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    with pytest.raises(ConfigError) as info:
        stage_upload("world.zip", bytes(MAX_UPLOAD_BYTES + 1))
    assert info.value.file == "world.zip" and "200 MB" in info.value.detail
    assert not (tmp_path / "uploads").exists()


def test_corrupt_zip_member_is_a_config_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    data = bytearray(_zip({"retail/db.json": b"hello world" * 10}))
    data[data.find(b"hello world")] = ord("J")  # breaks the member's CRC
    with pytest.raises(ConfigError) as info:
        stage_upload("retail.zip", bytes(data))
    assert info.value.file == "retail.zip" and info.value.field == "retail/db.json"
    assert not any((tmp_path / "uploads").rglob("*.json"))


@pytest.mark.parametrize("name", ["..", "a/..", ".", "/", "../../escape.json"])
def test_hostile_upload_names_stay_inside_uploads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    out = stage_upload(name, b"{}")
    assert out.is_file() and (tmp_path / "uploads").resolve() in out.resolve().parents


def test_zip_with_absolute_or_parent_members_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    for member in ("../../evil.json", "/etc/evil.json", "a/../../evil.json"):
        with pytest.raises(ConfigError) as info:
            stage_upload("evil.zip", _zip({member: b"x"}))
        assert info.value.field == member
    assert not list(tmp_path.rglob("evil.json"))


def test_server_paths_outside_allowed_roots_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = tmp_path / "allowed"
    (allowed / "retail").mkdir(parents=True)
    monkeypatch.setenv("DRIFTBENCH_IMPORT_ROOTS", str(allowed))
    (allowed / "link").symlink_to("/etc")  # a symlink inside the root pointing outside
    for raw in ("/etc", "/etc/passwd", allowed / ".." / "x", allowed / "link", "~"):
        with pytest.raises(ConfigError) as info:
            resolve_import_path(raw)
        assert "outside the allowed import folders" in info.value.detail
    assert resolve_import_path(allowed / "retail") == (allowed / "retail").resolve()


def test_data_page_refuses_a_path_outside_the_allowed_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The studio's server-path import shows the error and writes nothing."""
    from streamlit.testing.v1 import AppTest

    home = tmp_path / "home"
    home.mkdir()
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    monkeypatch.setenv("DRIFTBENCH_IMPORT_ROOTS", str(allowed))
    store = Store.open(home / "driftbench.db")
    store.close()
    outside = tmp_path / "outside"
    shutil.copytree(TAU2_RETAIL, outside)
    at = AppTest.from_file(str(PROJECT_ROOT / "pages" / "data.py"), default_timeout=60).run()
    assert not at.exception
    # the first render creates the studies tables lazily (core/studies/schema.py); snapshot after
    before = _snapshot(home / "driftbench.db")
    at.text_input(key="data-path").input(str(outside))
    at.button(key="data-import-path").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "outside the allowed import folders" in errors and str(outside) in errors
    assert not at.success
    del at
    assert _snapshot(home / "driftbench.db") == before


def test_opening_and_reading_a_current_store_writes_nothing(store_copy: Path) -> None:
    before = _snapshot(store_copy)
    store = Store.open(store_copy)
    store.list_runs()
    store.counts()
    store.close()
    del store
    for argv in (("runs", "--json"), ("doctor", "--json")):
        rc, _, err = _cli(store_copy, *argv)
        assert rc == 0, err
    assert _snapshot(store_copy) == before


def test_a_store_from_a_newer_version_is_refused_untouched(store_copy: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(store_copy)
    conn.execute("UPDATE meta SET value='999' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    before = _snapshot(store_copy)
    rc, _, err = _cli(store_copy, "runs")
    assert rc == 2 and "newer" in err and str(store_copy) in err
    assert _snapshot(store_copy) == before
