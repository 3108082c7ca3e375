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
from core.store.integrity import (
    StoreCorruptError,
    StoreFullError,
    check_file,
    describe_sqlite_error,
    is_full_error,
)
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

        Raises:
            NotFoundError: No file and ``create`` is False.
            StoreCorruptError: A directory, not a SQLite database, corrupt or truncated
                (:mod:`core.store.integrity`); the file is left as it is.
            StoreFullError: The disk filled up while creating the schema; a file this call
                created is removed again, so no half-initialised store is left.
        """
        path = Path(path) if path is not None else default_store_path()
        check_file(path)
        fresh = not path.exists() or path.stat().st_size == 0
        if not path.exists():
            if not create:
                raise NotFoundError(f"no store at {path}; run 'driftbench init' first")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError):
                raise StoreCorruptError(
                    f"{path}: its folder {path.parent} is not a directory"
                ) from None
        store = cls(path)
        try:
            store._migrate()
        except BaseException:
            store.close()
            if fresh:
                store.remove_files()
            raise
        return store

    def remove_files(self) -> None:
        """Delete the store file and its WAL and shared-memory files (a failed creation)."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (WAL, foreign keys, 30 s busy timeout)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA busy_timeout=30000")
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise self._store_error(exc) from None
            self._local.conn = conn
        return conn

    def _store_error(self, exc: sqlite3.Error) -> DriftBenchError:
        """The one-line store error for a sqlite3 error (full disk or corrupt file)."""
        message = describe_sqlite_error(self.path, exc)
        if is_full_error(exc):
            return StoreFullError(message)
        low = str(exc).lower()
        if "not a database" in low or "malformed" in low or "corrupt" in low:
            return StoreCorruptError(message)
        return StoreError(message)

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
        """Run a block in one IMMEDIATE transaction (all or nothing).

        A full disk raises :class:`StoreFullError` saying so (SQLite has already rolled the
        transaction back; the rollback here never hides the cause).
        """
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException as exc:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # SQLite may have rolled back on its own (a full disk): keep the cause
            if isinstance(exc, sqlite3.Error) and is_full_error(exc):
                raise StoreFullError(describe_sqlite_error(self.path, exc)) from exc
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                if is_full_error(exc):
                    raise StoreFullError(describe_sqlite_error(self.path, exc)) from exc
                raise

    # -- schema ------------------------------------------------------------------------------
    def _migrate(self) -> None:
        try:
            self._migrate_inner()
        except sqlite3.DatabaseError as exc:
            raise self._store_error(exc) from None

    def _migrate_inner(self) -> None:
        conn = self.conn
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError as exc:  # a new file: no tables yet
            if "no such table" not in str(exc):
                raise
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
