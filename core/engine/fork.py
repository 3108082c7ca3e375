"""Forking an episode: its events before a turn, copied into a new episode for another agent."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from core.engine.eventlog import EventLog
from core.errors import ProtocolError
from core.model.events import EpisodeEnded, TurnStarted


def fork(
    log: EventLog,
    episode_id: str,
    turn: int,
    agent_spec: str,
    *,
    method: str | None = None,
    episode_id_new: str | None = None,
    run_id: str | None = None,
) -> str:
    """Copy an episode's events before ``turn`` into a new episode for another agent.

    The new episode is linked to its parent (``parent_episode_id``, ``fork_turn``); the next
    agent action it receives is its turn ``turn``. Random streams are keyed by sample and seed,
    so the user behaves identically on the shared prefix and, given the same actions, after it.
    ``run_id`` files the new episode under another run (a branch is a run of its own); by
    default it stays in the parent's.

    Raises:
        ProtocolError: ``turn`` < 1, or the parent had ended before ``turn``.
    """
    if turn < 1:
        raise ProtocolError("fork turn must be ≥ 1 (turn 1 is the first agent action)")
    parent = log.header(episode_id)
    events = log.events(episode_id)
    prefix = [e for e in events if e.turn < turn]
    if any(isinstance(e, EpisodeEnded) for e in prefix):
        raise ProtocolError(f"episode {episode_id} ended before turn {turn}")
    if not any(isinstance(e, TurnStarted) and e.turn == turn - 1 for e in events) and turn > 1:
        raise ProtocolError(f"episode {episode_id} has no turn {turn - 1}")
    new_id = episode_id_new or uuid.uuid4().hex[:16]
    header = parent.model_copy(
        update={
            "episode_id": new_id,
            "parent_episode_id": episode_id,
            "fork_turn": turn,
            "agent": agent_spec,
            "method": method or agent_spec,
            "created_at": datetime.now(UTC),
            "run_id": run_id if run_id is not None else parent.run_id,
        }
    )
    log.create_episode(header)
    log.append(new_id, prefix)
    return new_id
