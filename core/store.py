"""The SQLite store: the single source of truth for every page and command.

The schema is created up front (never lazily in a race) and versioned in ``meta``; WAL mode and
foreign keys are on for every connection. Events are append-only: triggers reject UPDATE and
DELETE on ``events``. The file opens unchanged in Datasette or ``sqlite-utils``.

Tables: ``meta``, ``worlds``, ``graphs``, ``samples``, ``runs``, ``episodes``, ``events``,
``llm_cache``, ``annotations``, ``judgments`` (v1); ``studies``, ``annotators``,
``study_annotators``, ``assignments``, ``study_plays``, ``sessions``, ``session_judgments`` (v2);
``construction_builds`` (v3: what each build or import recorded, for ``driftbench build report``).
GRIP keeps derived caches (``grip_cache``, ``grip_report_cache``) that it may drop and rebuild.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import sqlite_utils

from core.errors import DriftBenchError, NotFoundError
from core.paths import default_store_path

STORE_SCHEMA_VERSION = 3
"""Current store schema version. Bump it and add a migration to ``_MIGRATIONS``."""

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS worlds (
    world_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    payload TEXT NOT NULL,
    summary TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS worlds_benchmark ON worlds(benchmark);
CREATE TABLE IF NOT EXISTS graphs (
    graph_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    env_id TEXT NOT NULL,
    root_intent_id TEXT NOT NULL,
    source TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS graphs_benchmark ON graphs(benchmark);
CREATE TABLE IF NOT EXISTS samples (
    sample_id TEXT PRIMARY KEY,
    benchmark TEXT NOT NULL,
    graph_id TEXT NOT NULL,
    fault_types TEXT NOT NULL,
    k INTEGER NOT NULL,
    split TEXT NOT NULL,
    source TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS samples_benchmark ON samples(benchmark, k);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    completed INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS episodes (
    episode_id TEXT PRIMARY KEY,
    run_id TEXT REFERENCES runs(run_id),
    sample_id TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    method TEXT NOT NULL,
    persona_id TEXT NOT NULL,
    seed INTEGER NOT NULL,
    parent_episode_id TEXT,
    header TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    outcome TEXT,
    n_events INTEGER NOT NULL DEFAULT 0,
    summary TEXT,
    created_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE INDEX IF NOT EXISTS episodes_run ON episodes(run_id, status);
CREATE INDEX IF NOT EXISTS episodes_cell ON episodes(benchmark, method, persona_id);
CREATE INDEX IF NOT EXISTS episodes_sample ON episodes(sample_id);
CREATE TABLE IF NOT EXISTS events (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    turn INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (episode_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    namespace TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost_usd REAL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS annotations (
    annotation_id INTEGER PRIMARY KEY AUTOINCREMENT,
    study_id TEXT,
    annotator TEXT NOT NULL,
    target_kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    label_kind TEXT NOT NULL,
    value TEXT NOT NULL,
    turn INTEGER,
    self_played INTEGER NOT NULL DEFAULT 0,
    seconds REAL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS annotations_target ON annotations(target_kind, target_id);
CREATE INDEX IF NOT EXISTS annotations_study ON annotations(study_id, annotator);
CREATE TABLE IF NOT EXISTS judgments (
    judgment_id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    judge TEXT NOT NULL,
    task TEXT NOT NULL,
    target_id TEXT NOT NULL,
    value TEXT NOT NULL,
    raw TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_run ON judgments(run_id, judge, task);
"""

STUDY_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS studies (
        study_id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        spec TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open',
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS annotators (
        annotator_id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS study_annotators (
        study_id TEXT NOT NULL REFERENCES studies(study_id),
        annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id),
        added_at TEXT NOT NULL,
        PRIMARY KEY (study_id, annotator_id)
    )""",
    """CREATE TABLE IF NOT EXISTS assignments (
        assignment_id INTEGER PRIMARY KEY AUTOINCREMENT,
        study_id TEXT NOT NULL REFERENCES studies(study_id),
        annotator_id TEXT NOT NULL REFERENCES annotators(annotator_id),
        role TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        target_id TEXT NOT NULL,
        condition TEXT NOT NULL DEFAULT '',
        position INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        opened_at TEXT,
        completed_at TEXT,
        UNIQUE (study_id, annotator_id, role, target_kind, target_id, condition)
    )""",
    "CREATE INDEX IF NOT EXISTS assignments_queue ON assignments(study_id, annotator_id, position)",
    "CREATE INDEX IF NOT EXISTS assignments_target ON assignments(study_id, target_kind, "
    "target_id)",
    """CREATE TABLE IF NOT EXISTS study_plays (
        episode_id TEXT PRIMARY KEY,
        study_id TEXT,
        annotator_id TEXT NOT NULL,
        role TEXT NOT NULL,
        sample_id TEXT NOT NULL,
        assignment_id INTEGER,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS study_plays_annotator ON study_plays(annotator_id)",
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        body TEXT NOT NULL,
        n_messages INTEGER NOT NULL,
        n_user_turns INTEGER NOT NULL,
        n_tool_calls INTEGER NOT NULL,
        platform_score REAL,
        metadata TEXT NOT NULL,
        imported_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS session_judgments (
        session_id TEXT NOT NULL REFERENCES sessions(session_id),
        judge TEXT NOT NULL,
        value TEXT NOT NULL,
        raw TEXT,
        created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, judge)
    )""",
)
"""Schema v2: human studies and imported production sessions (see :mod:`core.studies`)."""


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    for statement in STUDY_DDL:
        conn.execute(statement)


# ==== construction statistics (schema v3; issue 16) ==========================================
# Kept in one block so the store can be split into a package without touching the rest.

CONSTRUCTION_DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS construction_builds (
        build_id TEXT PRIMARY KEY,
        benchmark TEXT NOT NULL,
        source TEXT NOT NULL,
        world_id TEXT,
        kind TEXT NOT NULL,
        params TEXT NOT NULL,
        stats TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS construction_builds_bench ON construction_builds(benchmark, "
    "source)",
)
"""Schema v3: one row per build/import (graph and verifier statistics as recorded)."""


def _migrate_2_to_3(conn: sqlite3.Connection) -> None:
    for statement in CONSTRUCTION_DDL:
        conn.execute(statement)


# ==== end of construction statistics schema ====================================================

_MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _migrate_1_to_2,
    2: _migrate_2_to_3,
}
"""Migrations from version ``v`` to ``v + 1``, keyed by ``v``."""


def _statements(script: str) -> list[str]:
    """Split a SQL script into complete statements (triggers keep their inner semicolons)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out


def utcnow() -> str:
    """Return the current UTC time as ISO-8601 text."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class StoreError(DriftBenchError):
    """The store is unusable (newer schema, corrupted file …)."""


class _HasHeader(Protocol):
    episode_id: str

    def model_dump_json(self) -> str: ...


class _HasEvent(Protocol):
    seq: int
    kind: str
    turn: int

    def model_dump_json(self) -> str: ...


@dataclass(frozen=True)
class WorldRecord:
    """One imported or bundled host world as stored."""

    world_id: str
    benchmark: str
    name: str
    source: str
    payload: dict[str, Any]
    summary: dict[str, Any]
    created_at: str


class Store:
    """Repository over one SQLite file.

    One instance holds one connection per thread; instances are cheap and may be shared by
    threads of one process. Every write happens inside :meth:`transaction`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()

    # -- connections -------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path | None = None, *, create: bool = True) -> Store:
        """Open (and by default create and migrate) the store at ``path``.

        Args:
            path: SQLite file; defaults to ``$DRIFTBENCH_HOME/driftbench.db``.
            create: Create the file and schema when missing. When False, a missing file
                raises :class:`NotFoundError`.

        Returns:
            The opened store, schema at :data:`STORE_SCHEMA_VERSION`.
        """
        path = Path(path) if path is not None else default_store_path()
        if not path.exists():
            if not create:
                raise NotFoundError(f"no store at {path}; run 'driftbench init' first")
            path.parent.mkdir(parents=True, exist_ok=True)
        store = cls(path)
        store._migrate()
        return store

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (WAL, foreign keys, 30 s busy timeout)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @property
    def db(self) -> sqlite_utils.Database:
        """A sqlite-utils view of this thread's connection (for ad-hoc queries)."""
        return sqlite_utils.Database(self.conn)

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run a block in one IMMEDIATE transaction (all or nothing)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    def _migrate(self) -> None:
        conn = self.conn
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:  # a new file: no tables yet
            row = None
        if row is not None and int(row[0]) == STORE_SCHEMA_VERSION:
            return  # current: opening writes nothing, so a failed command leaves the file as is
        with self.transaction():
            for statement in _statements(_SCHEMA_V1):
                conn.execute(statement)
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = int(row[0]) if row else 1  # a new file starts at v1 and migrates up
            if version > STORE_SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: schema version {version} is newer than this code "
                    f"({STORE_SCHEMA_VERSION}); upgrade driftbench"
                )
            while version < STORE_SCHEMA_VERSION:
                _MIGRATIONS[version](conn)
                version += 1
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                (str(version),),
            )

    def schema_version(self) -> int:
        """Return the schema version recorded in the file."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0])

    # -- summary -----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (what the Home page and ``doctor`` show)."""
        out: dict[str, int] = {}
        for table in ("worlds", "graphs", "samples", "runs", "episodes", "events", "annotations"):
            out[table] = int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        return out

    # -- worlds ------------------------------------------------------------------------------
    def put_world(
        self,
        *,
        benchmark: str,
        world_id: str,
        name: str,
        source: str,
        payload: dict[str, Any],
        summary: dict[str, Any],
    ) -> None:
        """Insert or replace one host world in a single transaction."""
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO worlds VALUES (?, ?, ?, ?, ?, ?, ?)",
                (world_id, benchmark, name, source, body, json.dumps(summary), utcnow()),
            )

    def get_world(self, world_id: str) -> WorldRecord | None:
        """Return one stored world, or None."""
        row = self.conn.execute(
            "SELECT world_id, benchmark, name, source, payload, summary, created_at "
            "FROM worlds WHERE world_id=?",
            (world_id,),
        ).fetchone()
        if row is None:
            return None
        return WorldRecord(
            row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]), row[6]
        )

    def list_worlds(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """List stored worlds (without payloads), newest first."""
        sql = "SELECT world_id, benchmark, name, source, summary, created_at FROM worlds"
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        rows = self.conn.execute(sql + " ORDER BY created_at DESC", args).fetchall()
        return [
            {
                "world_id": r[0],
                "benchmark": r[1],
                "name": r[2],
                "source": r[3],
                "summary": json.loads(r[4]),
                "created_at": r[5],
            }
            for r in rows
        ]

    # -- graphs and samples -------------------------------------------------------------------
    def put_graphs_and_samples(
        self, graphs: Sequence[Any], samples: Sequence[Any], *, source: str
    ) -> tuple[int, int]:
        """Insert (or replace) intent graphs and samples in one transaction.

        Args:
            graphs: ``IntentGraph`` models.
            samples: ``Sample`` models.
            source: Where they came from (``bundled``, ``built``, ``release:<dir>``).

        Returns:
            (graphs written, samples written).
        """
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO graphs VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        g.graph_id,
                        g.benchmark,
                        g.env_id,
                        g.root.intent_id,
                        source,
                        g.model_dump_json(),
                    )
                    for g in graphs
                ],
            )
            conn.executemany(
                "INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        s.sample_id,
                        s.benchmark,
                        s.graph_id,
                        ",".join(str(f) for f in s.faults),
                        len(s.faults),
                        s.split,
                        source,
                        s.model_dump_json(),
                    )
                    for s in samples
                ],
            )
        return len(graphs), len(samples)

    def graph_json(self, graph_id: str) -> str:
        """Return one graph's JSON body."""
        row = self.conn.execute("SELECT body FROM graphs WHERE graph_id=?", (graph_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no graph {graph_id}")
        return str(row[0])

    def sample_json(self, sample_id: str) -> str:
        """Return one sample's JSON body."""
        row = self.conn.execute(
            "SELECT body FROM samples WHERE sample_id=?", (sample_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no sample {sample_id}")
        return str(row[0])

    def sample_rows(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """List sample index rows (no bodies)."""
        sql = "SELECT sample_id, benchmark, graph_id, fault_types, k, split, source FROM samples"
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        cur = self.conn.execute(sql + " ORDER BY benchmark, sample_id", args)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    # -- runs --------------------------------------------------------------------------------
    def put_run(self, run_id: str, name: str, spec_json: str, total: int) -> None:
        """Create a run row, or update its spec/total when it already exists (resume)."""
        now = utcnow()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO runs(run_id, name, spec, status, total, created_at, updated_at) "
                "VALUES (?, ?, ?, 'pending', ?, ?, ?) "
                "ON CONFLICT(run_id) DO UPDATE SET total=excluded.total, "
                "updated_at=excluded.updated_at",
                (run_id, name, spec_json, total, now, now),
            )

    def set_run_status(
        self,
        run_id: str,
        status: str,
        *,
        completed: int | None = None,
        errors: int | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """Update a run's status and progress counters."""
        sets = ["status=?", "updated_at=?"]
        args: list[Any] = [status, utcnow()]
        for col, val in (("completed", completed), ("errors", errors), ("cost_usd", cost_usd)):
            if val is not None:
                sets.append(f"{col}=?")
                args.append(val)
        with self.transaction() as conn:
            conn.execute(f"UPDATE runs SET {', '.join(sets)} WHERE run_id=?", (*args, run_id))

    def get_run(self, run_or_name: str) -> dict[str, Any]:
        """Return a run row by id or name."""
        cur = self.conn.execute(
            "SELECT * FROM runs WHERE run_id=? OR name=?", (run_or_name, run_or_name)
        )
        row = cur.fetchone()
        if row is None:
            raise NotFoundError(f"no run named or with id '{run_or_name}'")
        return dict(zip([d[0] for d in cur.description], row, strict=True))

    def list_runs(self) -> list[dict[str, Any]]:
        """List runs, newest first."""
        cur = self.conn.execute(
            "SELECT run_id, name, status, total, completed, errors, cost_usd, created_at, "
            "updated_at FROM runs ORDER BY created_at DESC"
        )
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    # -- episodes and events (implements core.engine.eventlog.EventLog) ------------------
    def create_episode(self, header: Any) -> None:
        """Create an episode row from an ``EpisodeHeader``."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO episodes(episode_id, run_id, sample_id, benchmark, method, "
                "persona_id, seed, parent_episode_id, header, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    header.episode_id,
                    getattr(header, "run_id", None),
                    header.sample_id,
                    header.benchmark,
                    header.method,
                    header.persona_id,
                    header.seed,
                    getattr(header, "parent_episode_id", None),
                    header.model_dump_json(),
                    utcnow(),
                ),
            )

    def append(self, episode_id: str, events: Sequence[Any]) -> None:
        """Append events; their ``seq`` must continue the stored sequence exactly."""
        if not events:
            return
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT n_events, status FROM episodes WHERE episode_id=?", (episode_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no episode {episode_id}")
            n = int(row[0])
            rows = []
            for i, ev in enumerate(events):
                if ev.seq != n + i:
                    raise StoreError(
                        f"episode {episode_id}: event seq {ev.seq} does not continue at {n + i}"
                    )
                rows.append((episode_id, ev.seq, ev.kind, ev.turn, ev.model_dump_json()))
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute(
                "UPDATE episodes SET n_events=? WHERE episode_id=?", (n + len(rows), episode_id)
            )

    def header_json(self, episode_id: str) -> str:
        """Return an episode header's JSON."""
        row = self.conn.execute(
            "SELECT header FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no episode {episode_id}")
        return str(row[0])

    def event_jsons(self, episode_id: str, *, after_seq: int = -1) -> list[str]:
        """Return an episode's event bodies in order (optionally only after ``after_seq``)."""
        rows = self.conn.execute(
            "SELECT body FROM events WHERE episode_id=? AND seq>? ORDER BY seq",
            (episode_id, after_seq),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def header(self, episode_id: str) -> Any:
        """Return the typed ``EpisodeHeader``."""
        from core.model.episode import EpisodeHeader

        return EpisodeHeader.model_validate_json(self.header_json(episode_id))

    def events(self, episode_id: str) -> list[Any]:
        """Return the typed events of an episode (older versions upgraded on read)."""
        from core.model.events import parse_event

        return [parse_event(json.loads(b)) for b in self.event_jsons(episode_id)]

    def finish(self, episode_id: str, outcome: Any, summary: dict[str, Any]) -> None:
        """Mark an episode ended with its outcome and a small summary."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE episodes SET status='ended', outcome=?, summary=?, ended_at=? "
                "WHERE episode_id=?",
                (
                    str(getattr(outcome, "value", outcome)),
                    json.dumps(summary),
                    utcnow(),
                    episode_id,
                ),
            )

    def episode_rows(
        self,
        *,
        run_id: str | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """List episode index rows (no events), filtered by run and status."""
        sql = (
            "SELECT episode_id, run_id, sample_id, benchmark, method, persona_id, seed, "
            "parent_episode_id, status, outcome, n_events, summary, created_at, ended_at "
            "FROM episodes"
        )
        where, args = [], []
        if run_id is not None:
            where.append("run_id=?")
            args.append(run_id)
        if status is not None:
            where.append("status=?")
            args.append(status)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at, episode_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        cur = self.conn.execute(sql, args)
        cols = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(cols, r, strict=True))
            d["summary"] = json.loads(d["summary"]) if d["summary"] else None
            out.append(d)
        return out

    def episode_status(self, episode_id: str) -> tuple[str, str | None] | None:
        """Return ``(status, outcome)`` of an episode, or None when it does not exist."""
        row = self.conn.execute(
            "SELECT status, outcome FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return (str(row[0]), row[1]) if row else None

    def count_events(self, episode_id: str) -> int:
        """Return how many events an episode has (cheap; no bodies are read)."""
        row = self.conn.execute(
            "SELECT n_events FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def episode_exists(self, episode_id: str) -> bool:
        """Return whether an episode row exists."""
        row = self.conn.execute(
            "SELECT 1 FROM episodes WHERE episode_id=?", (episode_id,)
        ).fetchone()
        return row is not None

    # -- annotations -------------------------------------------------------------------------
    def add_annotation(
        self,
        *,
        annotator: str,
        target_kind: str,
        target_id: str,
        label_kind: str,
        value: Any,
        study_id: str | None = None,
        turn: int | None = None,
        self_played: bool = False,
        seconds: float | None = None,
    ) -> int:
        """Store one label as it is made; returns its id."""
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO annotations(study_id, annotator, target_kind, target_id, label_kind,"
                " value, turn, self_played, seconds, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    study_id,
                    annotator,
                    target_kind,
                    target_id,
                    label_kind,
                    json.dumps(value),
                    turn,
                    int(self_played),
                    seconds,
                    utcnow(),
                ),
            )
            return int(cur.lastrowid or 0)

    # ==== construction statistics and world stamps (schema v3; issue 16) ====================
    def put_build(
        self,
        *,
        build_id: str,
        benchmark: str,
        source: str,
        world_id: str | None,
        kind: str,
        params: dict[str, Any],
        stats: dict[str, Any],
    ) -> None:
        """Record (or replace) the statistics of one build or import (one transaction)."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO construction_builds VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    build_id,
                    benchmark,
                    source,
                    world_id,
                    kind,
                    json.dumps(params, sort_keys=True),
                    json.dumps(stats, sort_keys=True),
                    utcnow(),
                ),
            )

    def build_rows(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """Recorded builds (oldest first), with ``params`` and ``stats`` parsed."""
        sql = (
            "SELECT build_id, benchmark, source, world_id, kind, params, stats, created_at "
            "FROM construction_builds"
        )
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        cur = self.conn.execute(sql + " ORDER BY created_at, build_id", args)
        cols = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(cols, r, strict=True))
            d["params"] = json.loads(d["params"])
            d["stats"] = json.loads(d["stats"])
            out.append(d)
        return out

    def world_stamp(self, world_id: str) -> tuple[str, int] | None:
        """``(created_at, payload length)`` of a stored world without reading its payload."""
        row = self.conn.execute(
            "SELECT created_at, length(payload) FROM worlds WHERE world_id=?", (world_id,)
        ).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def sample_index(self, benchmark: str | None = None) -> list[dict[str, Any]]:
        """Sample rows with their world id and query (for selection, verify and reports)."""
        sql = (
            "SELECT sample_id, benchmark, graph_id, fault_types, k, split, source, "
            "json_extract(body, '$.world.world_id') AS world_id, "
            "json_extract(body, '$.world.fingerprint') AS world_fingerprint, "
            "json_extract(body, '$.world.name') AS world_name, "
            "json_extract(body, '$.query') AS query FROM samples"
        )
        args: tuple[Any, ...] = ()
        if benchmark:
            sql += " WHERE benchmark=?"
            args = (benchmark,)
        cur = self.conn.execute(sql + " ORDER BY benchmark, sample_id", args)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    # ==== end of construction statistics ======================================================
