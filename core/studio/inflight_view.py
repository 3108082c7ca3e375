"""The Runs page's view of LLM episodes in flight (see :mod:`core.runner.inflight`)."""

from __future__ import annotations

from typing import Any

from core.runner.inflight import read_inflight
from core.store import Store
from core.studio.jobs import jobs_dir


def inflight_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's episodes playing now.

    Each row: episode, benchmark, turn, actions, the last action and how long the model has
    been thinking (None while it is not).
    """
    return [
        {
            "episode": r.get("episode_id", ""),
            "benchmark": r.get("benchmark", ""),
            "turn": r.get("turn", 0),
            "actions": r.get("actions", 0),
            "last": r.get("last", ""),
            "thinking (s)": r.get("thinking_s"),
        }
        for r in read_inflight(jobs_dir(store), run_id)
    ]
