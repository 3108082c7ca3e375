"""Fixtures for study tests: a store with small hand-made episodes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from core.model.config import ProtocolConfig
from core.model.episode import EpisodeHeader
from core.store import Store


class RawEvent:
    """A duck-typed event (the store only needs seq, kind, turn and model_dump_json)."""

    def __init__(self, seq: int, kind: str, turn: int, **body: Any) -> None:
        self.seq, self.kind, self.turn = seq, kind, turn
        self._body = {"v": 1, "seq": seq, "kind": kind, "turn": turn, **body}

    def model_dump_json(self) -> str:
        return json.dumps(self._body)


def add_episode(
    store: Store,
    episode_id: str,
    *,
    persona_id: str = "rational",
    user_voice: str = "template",
    method: str = "A1",
    agent: str = "openai/secret-model",
    sample_id: str = "sample-1",
    replies: tuple[dict[str, Any], ...] = (),
    budget: float = 10.0,
    patience_left: float = 4.0,
) -> str:
    """Create an ended episode with an opening request, one ask per reply, and an ending."""
    cfg = ProtocolConfig()
    header = EpisodeHeader(
        episode_id=episode_id,
        sample_id=sample_id,
        benchmark="webshop",
        persona_id=persona_id,
        seed=0,
        method=method,
        agent=agent,
        user_voice=user_voice,
        config=cfg,
        config_hash=cfg.config_hash(),
    )
    store.create_episode(header)
    events = [
        RawEvent(
            0,
            "episode_started",
            0,
            sample={"query": "I want some nice shoes", "faults": ["vagueness_subjectivity"]},
            persona={"id": persona_id},
            budget=budget,
        )
    ]
    for i, reply in enumerate(replies, start=1):
        events.append(
            RawEvent(
                len(events),
                "agent_action",
                i,
                action={"kind": "ask", "text": f"question {i}?"},
            )
        )
        events.append(RawEvent(len(events), "user_reply", i, text=f"answer {i}", **reply))
    events.append(
        RawEvent(
            len(events),
            "agent_action",
            len(replies) + 1,
            action={"kind": "env", "action": {"tool": "search", "args": {"q": "shoes"}}},
        )
    )
    events.append(RawEvent(len(events), "observation", len(replies) + 1, text="3 results"))
    events.append(
        RawEvent(
            len(events),
            "episode_ended",
            len(replies) + 1,
            outcome="SUCCESS",
            reason="accepted",
            patience_left=patience_left,
            turns=len(replies) + 1,
        )
    )
    store.append(episode_id, events)
    store.finish(episode_id, "SUCCESS", {})
    return episode_id


@pytest.fixture
def make_episode(store: Store) -> Callable[..., str]:
    """Factory ``make_episode(episode_id, **kw)`` adding an episode to the test store."""

    def make(episode_id: str, **kw: Any) -> str:
        return add_episode(store, episode_id, **kw)

    return make
