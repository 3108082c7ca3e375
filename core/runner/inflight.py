"""LLM episodes visible while they run: a per-process board of the episodes in flight.

LLM units play in memory and write an episode only when it ends, so a run of slow local-model
episodes showed nothing but counters for minutes. Every in-memory log of an LLM unit is a
:class:`TrackedLog`: each append updates this process's :data:`BOARD` (turn, actions, the last
action in words); the sweep writes the board beside the store
(``jobs/inflight-<run>-<pid>.json``) every write interval, and :func:`read_inflight` merges
the files of live processes for the Runs page. Finished episodes leave the board; nothing here
is ever a result (the stored episode is).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.engine.eventlog import InMemoryEventLog
from core.model.events import Event

STALE_S = 120.0
"""A board file not rewritten for this long belongs to a process that is gone."""


class Board:
    """The episodes in flight in this process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, Any]] = {}

    def update(self, episode_id: str, run_id: str, events: Sequence[Event]) -> None:
        """Fold freshly appended events into the episode's row."""
        now = time.time()
        with self._lock:
            row = self._rows.setdefault(
                episode_id,
                {
                    "episode_id": episode_id,
                    "run_id": run_id,
                    "started": now,
                    "turn": 0,
                    "actions": 0,
                    "last": "",
                    "thinking_since": None,
                },
            )
            for ev in events:
                row["turn"] = max(row["turn"], ev.turn)
                if ev.kind == "episode_started":
                    sample = getattr(ev, "sample", None)
                    row["benchmark"] = getattr(sample, "benchmark", "")
                    row["sample_id"] = getattr(sample, "sample_id", "")
                elif ev.kind == "turn_started":
                    row["thinking_since"] = now
                elif ev.kind == "agent_action":
                    row["actions"] += 1
                    row["thinking_since"] = None
                    action = getattr(ev, "action", None)
                    text = getattr(action, "text", None) or getattr(action, "raw", "") or ""
                    if getattr(action, "kind", "") == "env":
                        call = action.action  # type: ignore[union-attr]
                        text = f"{call.tool}({json.dumps(call.args, ensure_ascii=False)})"
                    row["last"] = f"{getattr(action, 'kind', '?')}: {str(text)[:120]}"
                elif ev.kind == "user_reply":
                    row["last"] = f"user: {str(getattr(ev, 'text', ''))[:120]}"
            row["updated"] = now

    def drop(self, episode_id: str) -> None:
        """The episode ended (it is stored now)."""
        with self._lock:
            self._rows.pop(episode_id, None)

    def rows(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """A copy of the rows (of one run)."""
        with self._lock:
            return [dict(r) for r in self._rows.values() if run_id in (None, r["run_id"])]


BOARD = Board()
"""This process's episodes in flight."""


class TrackedLog(InMemoryEventLog):
    """An in-memory event log that reports its appends to :data:`BOARD`."""

    def __init__(self, run_id: str, board: Board = BOARD) -> None:
        super().__init__()
        self.run_id = run_id
        self.board = board

    def append(self, episode_id: str, events: Sequence[Event]) -> None:
        """Append, then update the board."""
        super().append(episode_id, events)
        self.board.update(episode_id, self.run_id, events)


def board_path(jobs: Path, run_id: str, pid: int | None = None) -> Path:
    """The board file of ``run_id`` written by process ``pid`` (default this one)."""
    return jobs / f"inflight-{run_id}-{pid or os.getpid()}.json"


def write_board(jobs: Path, run_id: str, board: Board = BOARD) -> None:
    """Write this process's rows of ``run_id`` (atomically; never raises)."""
    try:
        jobs.mkdir(parents=True, exist_ok=True)
        path = board_path(jobs, run_id)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"written": time.time(), "rows": board.rows(run_id)}))
        os.replace(tmp, path)
    except OSError:
        pass


def clear_board(jobs: Path, run_id: str) -> None:
    """Remove this process's board file of ``run_id`` (the sweep is over)."""
    board_path(jobs, run_id).unlink(missing_ok=True)


def read_inflight(jobs: Path, run_id: str) -> list[dict[str, Any]]:
    """Every live process's episodes in flight for ``run_id``, oldest first."""
    out: list[dict[str, Any]] = []
    now = time.time()
    for path in sorted(jobs.glob(f"inflight-{run_id}-*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if now - float(data.get("written") or 0) > STALE_S:
            continue
        for row in data.get("rows") or []:
            since = row.get("thinking_since")
            row["thinking_s"] = round(now - since, 1) if since else None
            out.append(row)
    return sorted(out, key=lambda r: r.get("started") or 0)
