"""Which split (learn / eval / test) a built sample belongs to: its host task's."""

from __future__ import annotations

from core.envs.base import HostWorld
from core.model.intent import Intent

_SPLIT_NAMES: dict[str, str] = {
    "test": "test",
    "eval": "eval",
    "dev": "eval",
    "validation": "eval",
    "train": "learn",
    "learn": "learn",
}
"""Host split names → sample splits (τ²-bench's ``train`` is the learn split)."""


def task_splits(world: HostWorld) -> dict[str, str]:
    """Host task id → sample split (``learn`` / ``eval`` / ``test``) from the world's splits.

    τ²-bench's ``split_tasks.json`` names ``train`` and ``test`` (and ``base`` = every task,
    ignored); a task in no named split is ``test``.
    """
    raw = world.task_splits()
    out: dict[str, str] = {}
    for name in ("train", "learn", "dev", "validation", "eval", "test"):  # later names win
        for tid in raw.get(name) or []:
            out[str(tid)] = _SPLIT_NAMES[name]
    return out


def split_of(splits: dict[str, str], intent: Intent) -> str:
    """The split of a graph root (its source task's split; ``test`` when unknown)."""
    task = intent.source_record or intent.base
    return splits.get(str(task).split("+", 1)[0], "test")
