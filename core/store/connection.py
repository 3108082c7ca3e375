"""Connections, transactions and migrations of the store file.

:class:`StoreBase` owns everything about the SQLite file itself: one connection per thread (WAL,
foreign keys, 30 s busy timeout), the IMMEDIATE transaction every write runs in, and the
up-front creation and migration of the schema in :mod:`core.store.schema`. The repositories of
the other modules (worlds, catalogue, runs, episodes, annotations) build on it, and
:class:`core.store.Store` combines them.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from core.errors import DriftBenchError, NotFoundError
from core.model.cache import LockedLRU
from core.paths import default_store_path
from core.store.schema import _MIGRATIONS, _SCHEMA_V1, STORE_SCHEMA_VERSION, _statements

if TYPE_CHECKING:
    import sqlite_utils


def utcnow() -> str:
    """Return the current UTC time as ISO-8601 text."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class StoreError(DriftBenchError):
    """The store is unusable (newer schema, corrupted file …)."""


class StoreBase:
    """One SQLite file: per-thread connections, transactions, schema creation and migration.

    One instance holds one connection per thread; instances are cheap and may be shared by
    threads of one process. Every write happens inside :meth:`transaction`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._memos: dict[str, LockedLRU[Hashable, Any]] = {}
        self._memos_lock = threading.Lock()
        self.live: LockedLRU[str, Any] = LockedLRU()  # live episodes (core.engine.live)

    # -- connections -------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path | None = None, *, create: bool = True) -> Self:
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
        import sqlite_utils  # imported here: it costs half a second and only ad-hoc use needs it

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

    # -- schema ------------------------------------------------------------------------------
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

    # -- derived read models ----------------------------------------------------------------
    def memo(self, name: str, *, size: int = 8) -> LockedLRU[Hashable, Any]:
        """Return this store object's memo called ``name``, created on first use.

        Derived read models (e.g. the GRIP dashboard's frames) are memoised here rather than in
        a module, so they are dropped with the store object and shared only by its users.

        Args:
            name: Which memo (one per kind of derived value).
            size: Entries it keeps (used when the memo is created).

        Returns:
            The memo (thread-safe).
        """
        with self._memos_lock:
            got = self._memos.get(name)
            if got is None:
                got = self._memos[name] = LockedLRU(size)
            return got

    # -- summary -----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Row counts of the main tables (what the Home page and ``doctor`` show)."""
        out: dict[str, int] = {}
        for table in ("worlds", "graphs", "samples", "runs", "episodes", "events", "annotations"):
            out[table] = int(self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        return out
