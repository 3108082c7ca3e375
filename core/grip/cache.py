"""The columnar path: per-episode records computed once, cached in the store, read as a frame.

``grip_cache`` (created here with ``CREATE TABLE IF NOT EXISTS``) holds one row per ended
episode and GRIP version, with the fields of :class:`~core.grip.record.EpisodeRecord` as typed
columns, so a report reads a frame with one SQL query instead of re-parsing event logs. Only the
event kinds that can change a GRIP quantity are read, and the large ``episode_started`` body is
parsed once per (sample, persona, config), not once per episode.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import operator
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.errors import NotFoundError
from core.grip.extract import EpisodeMeta, extract
from core.grip.record import GRIP_VERSION, RECORD_COLUMNS
from core.grip.rows import BUILDERS, HEADER_SQL, ROW_KINDS, ROW_SQL, Row
from core.grip.target import StartInfo, start_info
from core.settings import env_name, settings
from core.store import Store

CACHE_TABLE = "grip_cache"
"""Name of the per-episode record cache table."""

_BOOL_COLUMNS = ("shifts_on", "scored", "readable", "ever_full")
_INT_COLUMNS = (
    "seed",
    "k",
    "n_questions",
    "n_scoreable",
    "n_aimed",
    "n_proposals",
    "n_shifts",
    "n_moving_shifts",
    "n_user_turns",
)
_TEXT_COLUMNS = (
    "episode_id",
    "run_id",
    "sample_id",
    "benchmark",
    "method",
    "persona",
    "backbone",
    "user_voice",
    "outcome",
    "bucket",
)


def _sql_type(col: str) -> str:
    if col in _TEXT_COLUMNS:
        return "TEXT"
    if col in _INT_COLUMNS or col in _BOOL_COLUMNS:
        return "INTEGER"
    return "REAL"


_CREATE = (
    f"CREATE TABLE IF NOT EXISTS {CACHE_TABLE} (grip_version TEXT NOT NULL, "
    + ", ".join(f"{c} {_sql_type(c)}" for c in RECORD_COLUMNS)
    + ", PRIMARY KEY (episode_id, grip_version)) WITHOUT ROWID"
)


def ensure_cache(store: Store) -> None:
    """Create the cache table (or recreate it when its columns are from another layout)."""
    conn = store.conn
    cols = [r[1] for r in conn.execute(f"PRAGMA table_info({CACHE_TABLE})").fetchall()]
    if cols and cols != ["grip_version", *RECORD_COLUMNS]:
        with store.transaction():
            conn.execute(f"DROP TABLE {CACHE_TABLE}")
        cols = []
    if not cols:
        with store.transaction():
            conn.execute(_CREATE)


def resolve_runs(store: Store, runs: Sequence[str]) -> list[str]:
    """Map run names or ids to run ids (raises NotFoundError naming the first unknown run)."""
    out: list[str] = []
    for r in runs:
        row = store.conn.execute(
            "SELECT run_id FROM runs WHERE run_id=? OR name=?", (r, r)
        ).fetchone()
        if row is None:
            if store.conn.execute("SELECT 1 FROM episodes WHERE run_id=? LIMIT 1", (r,)).fetchone():
                out.append(r)
                continue
            raise NotFoundError(f"no run named or with id '{r}'")
        if row[0] not in out:
            out.append(str(row[0]))
    return out


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


def _todo(store: Store, run_ids: Sequence[str]) -> list[tuple[Any, ...]]:
    sql = (
        "SELECT p.episode_id, p.run_id, p.sample_id, p.benchmark, p.method, p.persona_id, "
        f"p.seed, {HEADER_SQL} "
        f"FROM episodes p WHERE p.run_id IN ({_placeholders(len(run_ids))}) "
        "AND p.status='ended' AND NOT EXISTS (SELECT 1 FROM grip_cache c "
        "WHERE c.episode_id=p.episode_id AND c.grip_version=?) ORDER BY p.episode_id"
    )
    return store.conn.execute(sql, (*run_ids, GRIP_VERSION)).fetchall()


def _event_stream(conn: sqlite3.Connection, ids: Sequence[str]) -> Iterator[tuple[str, list[Row]]]:
    """Yield (episode_id, typed rows) for ``ids`` (sorted); the fields are picked in SQL.

    ``episode_started`` is left out: its large body is read once per sample and persona.
    """
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS grip_todo (episode_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.grip_todo")
    conn.executemany("INSERT OR IGNORE INTO temp.grip_todo VALUES (?)", ((i,) for i in ids))
    kinds = ROW_KINDS
    build = BUILDERS
    cur = conn.execute(
        f"SELECT e.episode_id, e.kind, e.turn, {ROW_SQL} FROM temp.grip_todo t "
        "JOIN events e ON e.episode_id = t.episode_id "
        f"WHERE e.kind IN ({_placeholders(len(kinds))}) ORDER BY e.episode_id, e.seq",
        kinds,
    )
    current: str | None = None
    buf: list[Row] = []
    while True:
        rows = cur.fetchmany(20000)
        if not rows:
            break
        for eid, kind, turn, c1, c2, c3, c4 in rows:  # WIDTH payload columns
            if eid != current:
                if current is not None:
                    yield current, buf
                current, buf = eid, []
            buf.append(build[kind](turn, c1, c2, c3, c4))
    if current is not None:
        yield current, buf
    conn.execute("DELETE FROM temp.grip_todo")


PARALLEL_MIN = 5000
"""Episodes to compute before the work is split over processes."""

WORKERS_ENV = env_name("grip_workers")
"""Environment variable capping the scoring processes (``1`` = never fork)."""


def compute_missing(store: Store, run_ids: Sequence[str], *, workers: int | None = None) -> int:
    """Compute and cache the records of ended episodes of ``run_ids`` not yet cached.

    Large batches are split over worker processes (one per core, at most 4), each reading its
    share of the event logs through its own connection and writing its own records.

    Args:
        store: The store.
        run_ids: Run ids.
        workers: Processes to use (default ``$DRIFTBENCH_GRIP_WORKERS`` or one per core, at
            most 4; only for ≥ :data:`PARALLEL_MIN` episodes).

    Returns:
        How many records were computed.
    """
    ensure_cache(store)
    todo = _todo(store, run_ids)
    if not todo:
        return 0
    if workers is None:
        configured = settings().grip_workers
        workers = configured if configured is not None else min(os.cpu_count() or 1, 4)
    n = workers
    if n <= 1 or len(todo) < PARALLEL_MIN:
        return _compute_rows(store, todo)
    size = -(-len(todo) // n)
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(len(chunks)) as pool:
        done = pool.starmap(_compute_in_worker, [(str(store.path), c) for c in chunks])
    return sum(done)


def _compute_in_worker(path: str, todo: list[tuple[Any, ...]]) -> int:
    store = Store(Path(path))  # a fresh object: never the parent's connection
    try:
        return _compute_rows(store, todo)
    finally:
        store.close()


def _compute_rows(store: Store, todo: Sequence[tuple[Any, ...]]) -> int:
    metas: dict[str, tuple[EpisodeMeta, str]] = {}
    for eid, run_id, sample_id, bench, method, persona, seed, agent, voice, shifts, chash in todo:
        metas[eid] = (
            EpisodeMeta(
                episode_id=eid,
                run_id=run_id,
                sample_id=sample_id,
                benchmark=bench,
                method=method,
                persona=persona,
                seed=int(seed),
                backbone=str(agent or ""),
                user_voice=str(voice or ""),
                shifts_on=bool(shifts) if shifts is not None else True,
            ),
            f"{sample_id}\x00{persona}\x00{chash}",
        )
    starts: dict[str, StartInfo] = {}
    records: list[tuple[Any, ...]] = []
    columns = operator.itemgetter(*RECORD_COLUMNS)
    loads = json.loads
    for eid, evs in _event_stream(store.conn, list(metas)):
        meta, skey = metas[eid]
        info = starts.get(skey)
        if info is None:
            row = store.conn.execute(
                "SELECT body FROM events WHERE episode_id=? AND kind='episode_started' "
                "ORDER BY seq LIMIT 1",
                (eid,),
            ).fetchone()
            if row is not None:
                info = starts[skey] = start_info(loads(row[0]))
        rec = extract(meta, info, evs)
        records.append((GRIP_VERSION, *columns(rec)))
    cols = ", ".join(("grip_version", *RECORD_COLUMNS))
    with store.transaction() as conn:
        conn.executemany(
            f"INSERT OR REPLACE INTO {CACHE_TABLE} ({cols}) "
            f"VALUES ({_placeholders(len(RECORD_COLUMNS) + 1)})",
            records,
        )
    return len(records)


REPORT_COLUMNS: tuple[str, ...] = (
    "episode_id",
    "run_id",
    "sample_id",
    "benchmark",
    "method",
    "persona",
    "backbone",
    "user_voice",
    "seed",
    "k",
    "shifts_on",
    "scored",
    "n_user_turns",
    "success",
    "score",
    "earned",
    "inferred",
    "aim",
    "recovery",
    "discovery",
    "patience",
    "staleness",
    "reaction",
    "postshift",
)
"""The columns a report needs (grouping keys, realism sampling, metric columns)."""


def read_frame(
    store: Store, run_ids: Sequence[str], columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read cached records of ``run_ids`` as a frame (no computation).

    Args:
        store: The store.
        run_ids: Run ids (not names).
        columns: A subset of the record columns (default: all).
    """
    ensure_cache(store)
    cols = list(columns) if columns else list(RECORD_COLUMNS)
    sql = (
        f"SELECT {', '.join('c.' + c for c in cols)} FROM {CACHE_TABLE} c "
        f"WHERE c.grip_version=? AND c.run_id IN ({_placeholders(len(run_ids))}) "
        "ORDER BY c.episode_id"
    )
    rows = store.conn.execute(sql, (GRIP_VERSION, *run_ids)).fetchall()
    if not rows:
        return normalise_frame(pd.DataFrame(columns=cols))
    data: dict[str, Any] = {}
    for c, values in zip(cols, zip(*rows, strict=True), strict=True):
        if c in _TEXT_COLUMNS or c == "hidden_target":
            data[c] = np.array(values, dtype=object)
        elif c in _BOOL_COLUMNS:
            data[c] = np.array(values, dtype=bool)
        elif c in _INT_COLUMNS:
            data[c] = np.array(values, dtype=np.int64)
        else:
            data[c] = np.array(values, dtype=float)  # None -> NaN
    return normalise_frame(pd.DataFrame(data, copy=False))


def normalise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Give a records frame its dtypes (bools, ints, float metrics with NaN = undefined)."""
    for c in df.columns:
        if c in _BOOL_COLUMNS:
            df[c] = df[c].astype(bool)
        elif c == "hidden_target":
            vals = df[c].to_numpy(dtype=object)
            df[c] = pd.Series(
                [None if v is None or v != v else bool(v) for v in vals],
                index=df.index,
                dtype=object,
            )
        elif c in _INT_COLUMNS:
            df[c] = df[c].astype(np.int64)
        elif c not in _TEXT_COLUMNS:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


def grip_frame(
    store: Store, run_ids: Sequence[str], columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Per-episode GRIP records of the ended episodes of ``run_ids`` (computed once, cached).

    Args:
        store: The store.
        run_ids: Run ids or names.
        columns: A subset of the record columns (default: all; see :data:`REPORT_COLUMNS`).

    Returns:
        One row per ended episode with the columns of
        :class:`~core.grip.record.EpisodeRecord`; metric columns are floats with NaN where the
        episode is not in that metric's denominator.
    """
    ids = resolve_runs(store, run_ids)
    compute_missing(store, ids)
    return read_frame(store, ids, columns)


def records_frame(records: Sequence[Any]) -> pd.DataFrame:
    """Build the same frame from in-memory records (tests, the studio's live episodes)."""
    rows = [r.model_dump(mode="json") if hasattr(r, "model_dump") else r for r in records]
    df = pd.DataFrame.from_records(
        [[r[c] for c in RECORD_COLUMNS] for r in rows], columns=list(RECORD_COLUMNS)
    )
    return normalise_frame(df)
