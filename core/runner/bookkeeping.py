"""What every backend of one sweep shares: run statuses, progress, the batched writer, the plan.

The parent process is the only writer of the store; it writes finished episodes in batches
(one transaction per batch, at most :data:`WRITE_BATCH` episodes or :data:`WRITE_INTERVAL_S`
apart), so a crash loses at most the last batch, which a resume plays again.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.model.episode import Outcome
from core.model.run import EpisodeKey, RunOptions, RunSpec
from core.runner.persist import ResumeState, write_records
from core.runner.plan import SampleSource, load_world
from core.runner.units import EpisodeRecord
from core.store import Store, utcnow

STATUS_PENDING = "pending"
STATUS_RUNNING = "running"
STATUS_DONE = "completed"
STATUS_DONE_ERRORS = "completed_with_errors"
STATUS_CANCELLING = "cancelling"
STATUS_CANCELLED = "cancelled"
STATUS_BUDGET = "budget_exceeded"
STATUS_PAUSED = "paused"
"""The provider became unavailable (circuit breaker, long Retry-After): resume later."""
STATUS_FAILED = "failed"

WRITE_BATCH = 256
"""Most episodes written in one store transaction."""
WRITE_INTERVAL_S = 0.25
"""Longest a finished episode waits in memory before it is written."""
CANCEL_POLL_S = 0.2
"""How often a running sweep reads its run row for a cancel request."""
POOL_MIN_EPISODES = 64
"""Smaller symbolic sweeps run inline (a pool's start-up would not pay off)."""


class RunProgress:
    """Progress counters mirrored to the store (throttled) and to a tqdm bar on a TTY."""

    def __init__(
        self, store: Store, run_id: str, total: int, done: int, errors: int, show: bool
    ) -> None:
        self.store, self.run_id = store, run_id
        self.total, self.completed, self.errors = total, done, errors
        self.cost = 0.0
        self._last = 0.0
        self._polled = 0.0
        self._cancel = False
        self._lock = threading.Lock()
        self.bar: Any = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="ep", file=sys.stderr)

    def add(self, rec: EpisodeRecord, was_error: bool) -> None:
        """Count one written episode (``was_error``: its key had errored before)."""
        with self._lock:
            if rec.outcome == Outcome.ERROR.value:
                if not was_error:
                    self.errors += 1
            else:
                self.completed += 1
                if was_error:
                    self.errors -= 1
            self.cost += rec.cost_usd
        if self.bar is not None:
            self.bar.update(1)

    def flush(self, status: str | None = None, force: bool = False) -> None:
        """Mirror the counters to the run row (at most every 0.5 s unless forced).

        Periodic updates leave the status alone, so a cancel request written meanwhile by
        another process is never overwritten; ``status`` is set at the start and the end.
        """
        now = time.monotonic()
        if force or now - self._last > 0.5:
            self._last = now
            with self._lock:
                completed, errors, cost = self.completed, self.errors, self.cost
            if status is not None:
                self.store.set_run_status(
                    self.run_id, status, completed=completed, errors=errors, cost_usd=cost
                )
                return
            with self.store.transaction() as conn:
                conn.execute(
                    "UPDATE runs SET completed=?, errors=?, cost_usd=?, updated_at=? "
                    "WHERE run_id=?",
                    (completed, errors, cost, utcnow(), self.run_id),
                )

    def cancelled(self, force: bool = False) -> bool:
        """Whether a cancel was requested (the run row is read at most every 0.2 s)."""
        now = time.monotonic()
        if not self._cancel and (force or now - self._polled >= CANCEL_POLL_S):
            self._polled = now
            self._cancel = str(self.store.get_run(self.run_id)["status"]) == STATUS_CANCELLING
        return self._cancel

    def close(self) -> None:
        """Close the progress bar, if any."""
        if self.bar is not None:
            self.bar.close()


class BatchWriter:
    """Buffers finished episodes and writes them in batches (thread-safe ``add``)."""

    def __init__(
        self,
        store: Store,
        prog: RunProgress,
        errors: set[str],
        *,
        batch: int = WRITE_BATCH,
        interval_s: float = WRITE_INTERVAL_S,
    ) -> None:
        self.store, self.prog, self.errors = store, prog, errors
        self.batch, self.interval_s = batch, interval_s
        self._buf: list[EpisodeRecord] = []
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._since = time.monotonic()

    def add(self, records: Iterable[EpisodeRecord]) -> None:
        """Queue records for writing (episodes replayed only for an A3 book are dropped)."""
        with self._lock:
            self._buf.extend(r for r in records if r.write)

    def due(self) -> bool:
        """Whether a batch is full or the oldest queued record waited long enough."""
        with self._lock:
            n = len(self._buf)
        return n >= self.batch or (n > 0 and time.monotonic() - self._since >= self.interval_s)

    def flush(self) -> int:
        """Write everything queued (one transaction per batch); return how many were written."""
        with self._write_lock:
            with self._lock:
                batch, self._buf = self._buf, []
                self._since = time.monotonic()
            for i in range(0, len(batch), self.batch):
                part = batch[i : i + self.batch]
                write_records(self.store, part)
                for rec in part:
                    self.prog.add(rec, rec.key_id in self.errors)
            if batch:
                self.prog.flush()
            return len(batch)

    def maybe_flush(self) -> None:
        """Flush when :meth:`due`."""
        if self.due():
            self.flush()


@dataclass
class Sweep:
    """What every backend of one sweep shares: the store, the plan and the bookkeeping.

    Forked workers inherit a copy and use only the plan (``spec``, ``kids``, ``rs``,
    ``options``); the store, progress and writer belong to the parent, the only writer.
    """

    store: Store
    spec: RunSpec
    units: list[list[EpisodeKey]]
    kids: dict[int, str]
    rs: ResumeState
    prog: RunProgress
    options: RunOptions

    def writer(self) -> BatchWriter:
        """A batched writer configured by the run options."""
        return BatchWriter(
            self.store,
            self.prog,
            self.rs.errors,
            batch=self.options.write_batch,
            interval_s=self.options.write_interval_s,
        )

    def key_ids(self, unit: Sequence[EpisodeKey]) -> list[str]:
        """The key ids of a unit's episodes."""
        return [self.kids[id(k)] for k in unit]


def preload(source: SampleSource, spec: RunSpec, units: list[list[EpisodeKey]]) -> None:
    """Load worlds and parse every sample and graph the units need (before forking)."""
    for b in spec.benchmarks:
        load_world(b)
    for unit in units:
        for k in unit:
            s = source.sample(k.benchmark, k.sample_id)
            source.graph(k.benchmark, s.graph_id)


def freeze_heap() -> None:
    """Move everything loaded so far (worlds, samples) out of the collector's sight.

    The loaded worlds are hundreds of thousands of long-lived objects; without this every
    full collection walks them (about a tenth of a symbolic sweep's time), and in forked
    workers the walk also copies their memory pages. Undone with ``gc.unfreeze()``.
    """
    gc.collect()
    gc.freeze()
