"""Bounded by construction (issue 32, item 5): every hostile input stops with flat memory.

Each case runs the real CLI in a subprocess under a memory limit (``resource.setrlimit``,
``RLIMIT_AS``) and asserts the exit code and its peak RSS (``ru_maxrss``). Before: a 400 KB
``items_shuffle.json`` of brackets took ``import webshop`` to 7.9 GB; exporting 7,310 episodes
peaked at 1.33 GB; ``run --seeds 10000`` over every method and persona died in MemoryError; a
900-byte models file with YAML aliases hung ``run`` at 1.9 GB; a 150k-member zip unpacked with
no cap; staged uploads were never removed.
"""

# ruff: noqa: F811 - pytest fixtures imported from test_malformed_inputs
from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.paths import DATA_DIR
from core.store import Store
from tests.reliability.test_malformed_inputs import (  # noqa: F401 - fixtures
    store_copy,
    template_store,
)

LIMIT_MB = 2048
"""Address-space limit of each subprocess (RLIMIT_AS)."""

RUNNER = textwrap.dedent(
    """
    import contextlib, io, json, resource, sys
    limit = int(sys.argv[1]) * 1024**2
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from core.cli import main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(sys.argv[2:])
        except MemoryError:
            rc = "MemoryError"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"rc": rc, "peak_mb": peak, "err": err.getvalue()[-600:]}))
    """
)


def _limited(*argv: object, timeout: float = 300) -> dict[str, object]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(LIMIT_MB), *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return got


def _baseline(store: Path) -> float:
    """Peak RSS of a trivial command in the same kind of subprocess (imports included)."""
    got = _limited("--store", store, "runs")
    assert got["rc"] == 0, got
    return float(got["peak_mb"])  # type: ignore[arg-type]


# -- JSON readers ------------------------------------------------------------------------------
def _webshop(tmp: Path, items: bytes) -> Path:
    folder = tmp / "ws"
    folder.mkdir()
    (folder / "items_shuffle.json").write_bytes(items)
    return folder


@pytest.mark.parametrize(
    ("name", "items"),
    [
        ("brackets-400KB", b"[" * 400_000),
        ("brackets-10MB", b"[" * 10_000_000),
        ("braces-in-a-record", b'[{"a":' * 300_000),
        ("two-million-values", b'[{"asin": "B0", "x": [' + b"0," * 2_000_000 + b"0]}]"),
        ("one-64MB-string", b'[{"asin": "' + b"x" * (64 * 1024**2) + b'"}]'),
    ],
)
def test_webshop_import_of_a_hostile_file_stops_with_flat_memory(
    tmp_path: Path,
    store_copy: Path,
    name: str,
    items: bytes,  # noqa: F811
) -> None:
    src = _webshop(tmp_path, items)
    base = _baseline(store_copy)
    got = _limited("--store", store_copy, "import", "webshop", "--from", src, "--json")
    assert got["rc"] == 2, got
    assert "items_shuffle.json" in str(got["err"]) and "limit" in str(got["err"]), got
    assert float(got["peak_mb"]) < base + 150, (got["peak_mb"], base)  # type: ignore[arg-type]
    assert not list((store_copy.parent / "webshop").glob("*/catalogue.sqlite"))


@pytest.mark.parametrize("what", ["db.json", "tasks.json"])
def test_tau2_import_of_a_10MB_bracket_file_stops_with_flat_memory(
    tmp_path: Path,
    store_copy: Path,
    what: str,  # noqa: F811
) -> None:
    folder = tmp_path / "retail"
    shutil.copytree(DATA_DIR / "tau2_retail", folder)
    (folder / what).write_bytes(b"[" * 10_000_000)
    base = _baseline(store_copy)
    got = _limited("--store", store_copy, "import", "tau2", "--domain", "retail", "--from", folder)
    assert got["rc"] == 2, got
    assert what in str(got["err"]), got
    assert float(got["peak_mb"]) < base + 100, (got["peak_mb"], base)  # type: ignore[arg-type]


def test_release_import_of_a_bracket_file_stops_with_flat_memory(
    tmp_path: Path,
    store_copy: Path,  # noqa: F811
) -> None:
    folder = tmp_path / "release" / "tau2_airline"
    folder.mkdir(parents=True)
    (folder / "airline_samples_learn.json").write_bytes(b"[" * 10_000_000)
    base = _baseline(store_copy)
    got = _limited("--store", store_copy, "import", "release", "--from", folder.parent)
    assert got["rc"] == 2, got
    assert float(got["peak_mb"]) < base + 100, (got["peak_mb"], base)  # type: ignore[arg-type]


# -- YAML aliases in every YAML the project reads -------------------------------------------------
LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n"
    for i in range(9)
)


def test_a_models_file_with_aliases_is_refused_at_once(
    tmp_path: Path,
    store_copy: Path,  # noqa: F811
) -> None:
    models = tmp_path / "models.yaml"
    models.write_text("agent:\n  model: openai/gpt-4o-mini\n" + LAUGHS)
    assert len(models.read_bytes()) < 1200
    base = _baseline(store_copy)
    t0 = time.monotonic()
    got = _limited(
        "--store", store_copy, "run", "--benchmark", "mock", "--method", "B0", "--persona",
        "rational", "--seeds", "1", "--models", models,
    )  # fmt: skip
    assert time.monotonic() - t0 < 60
    assert got["rc"] == 2 and "aliases" in str(got["err"]), got
    assert float(got["peak_mb"]) < base + 50, (got["peak_mb"], base)  # type: ignore[arg-type]


def test_every_yaml_reader_refuses_aliases(tmp_path: Path) -> None:
    from core.model import bounds
    from core.studio.auth import load_credentials

    path = tmp_path / "users.yaml"
    path.write_text("users:\n  a: &x {role: admin, password: 'pbkdf2_sha256$1$a$b'}\n  b: *x\n")
    with pytest.raises(ConfigError, match="aliases"):
        load_credentials(path)
    with pytest.raises(ConfigError, match="aliases"):
        bounds.load_yaml(path)
    import ast

    for py in Path(DATA_DIR.parent / "core").rglob("*.py"):
        tree = ast.parse(py.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("safe_load", "load", "full_load"):
                if isinstance(node.value, ast.Name) and node.value.id == "yaml":
                    assert py.name == "bounds.py", f"{py}: reads YAML around the alias guard"


# -- the sweep plan ----------------------------------------------------------------------------
def test_a_10000_seed_plan_over_everything_is_refused_with_flat_memory(
    store_copy: Path,  # noqa: F811
) -> None:
    base = _baseline(store_copy)
    got = _limited(
        "--store", store_copy, "run", "--benchmark", "webshop,tau2_retail,tau2_airline",
        "--method", "B0,A0,A1,A2,A3,L0,RS,LIT,ORACLE", "--persona", "all", "--seeds", "10000",
    )  # fmt: skip
    assert got["rc"] == 2, got
    assert "DRIFTBENCH_MAX_RUN_EPISODES" in str(got["err"]), got
    assert float(got["peak_mb"]) < base + 150, (got["peak_mb"], base)  # type: ignore[arg-type]


# -- exports stream -------------------------------------------------------------------------------
def _grow(store_path: Path, n: int, pad: int) -> str:
    """Clone the first stored episode ``n`` times with ``pad`` bytes of events each."""
    store = Store.open(store_path)
    run_id = store.list_runs()[0]["run_id"]
    first = store.episode_rows(run_id=run_id)[0]
    cols = [r[1] for r in store.conn.execute("PRAGMA table_info(episodes)").fetchall()]
    row = store.conn.execute(
        "SELECT * FROM episodes WHERE episode_id=?", (first["episode_id"],)
    ).fetchone()
    events = store.conn.execute(
        "SELECT seq, kind, turn, body FROM events WHERE episode_id=? ORDER BY seq",
        (first["episode_id"],),
    ).fetchall()
    filler = json.dumps({"seq": 0, "kind": "note", "text": "y" * pad})
    with store.transaction() as conn:
        for i in range(n):
            eid = f"{first['episode_id']}-clone{i:05d}"
            values = dict(zip(cols, row, strict=True))
            values["episode_id"] = eid
            values["seed"] = 1000 + i
            conn.execute(
                f"INSERT INTO episodes({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [values[c] for c in cols],
            )
            conn.executemany(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                [(eid, s, k, t, b) for s, k, t, b in events]
                + [(eid, len(events), "note", 0, filler)],
            )
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    name = str(store.list_runs()[0]["name"])
    store.close()
    return name


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_streams_at_constant_memory(
    tmp_path: Path,
    store_copy: Path,
    fmt: str,  # noqa: F811
) -> None:
    name = _grow(store_copy, 1500, 100_000)  # ~150 MB of events
    base = _baseline(store_copy)
    out = tmp_path / f"run.{fmt}"
    got = _limited("--store", store_copy, "export", name, "--format", fmt, "--out", out)
    assert got["rc"] == 0, got
    assert out.stat().st_size > 0
    assert float(got["peak_mb"]) < base + 120, (got["peak_mb"], base)  # type: ignore[arg-type]


# -- uploads -------------------------------------------------------------------------------------
def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_an_archive_with_too_many_members_is_refused(tmp_path: Path, monkeypatch) -> None:
    from core.studio import uploads

    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    data = _zip({f"m/{i}.json": b"{}" for i in range(uploads.MAX_ARCHIVE_MEMBERS + 1)})
    with pytest.raises(ConfigError, match="members"):
        uploads.stage_upload("many.zip", data)
    assert not any((tmp_path / "uploads").rglob("*.json"))


def test_an_archive_is_capped_by_the_bytes_it_really_unpacks(tmp_path: Path, monkeypatch) -> None:
    from core.studio import uploads

    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    monkeypatch.setattr(uploads, "MAX_UNPACKED_BYTES", 3 * 1024**2)
    data = _zip({f"m/{i}.bin": b"\0" * 1024**2 for i in range(5)})
    with pytest.raises(ConfigError, match="unpacks to more than"):
        uploads.stage_upload("bomb.zip", data)
    assert not any(p.is_file() for p in (tmp_path / "uploads").rglob("*"))


def test_staged_uploads_are_removed_after_import_and_after_a_day(
    tmp_path: Path, monkeypatch
) -> None:
    from core.studio import uploads
    from core.studio.data_import import import_upload

    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    store = Store.open(tmp_path / "driftbench.db")
    retail = DATA_DIR / "tau2_retail"
    data = _zip({f"retail/{p.name}": p.read_bytes() for p in retail.iterdir() if p.is_file()})
    got = import_upload("tau2", "retail", "retail.zip", data, store)
    assert got["tasks"] > 0
    assert not any((tmp_path / "uploads").iterdir())  # removed after its import
    broken = _zip({"retail/db.json": b"[" * 1000})
    with pytest.raises(ConfigError):
        import_upload("tau2", "retail", "retail.zip", broken, store)
    assert not any((tmp_path / "uploads").iterdir())  # … and after a failed one
    old = uploads.stage_upload("left.jsonl", b"{}\n").parent
    past = time.time() - 2 * 24 * 3600
    os.utime(old, (past, past))
    uploads.stage_upload("new.jsonl", b"{}\n")
    assert not old.exists()  # a day old: removed by the next staging
