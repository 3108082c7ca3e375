"""The play pages' services: an agent that raises ends the episode with the error recorded."""

from __future__ import annotations

from typing import Any

import pytest

from core.agents.base import AgentBase
from core.errors import LLMError
from core.llm import ScriptedLLM
from core.model.actions import AgentAction, Ask
from core.model.episode import AgentView, Outcome
from core.model.events import EpisodeEnded
from core.store import Store
from core.studio import agent_replay
from core.studio import roleplay as play
from core.studio.reply_check import send_reply


class _AsksThenRaises(AgentBase):
    """Asks once (so the page waits for the person), raises on its next turn."""

    def act(self, view: AgentView) -> AgentAction:
        if any(e.role == "user" for e in view.transcript[1:]):
            raise RuntimeError("agent fell over")
        return Ask(text="Which colour would you like?", asks=())


def _start(store: Store, **kw: Any) -> str:
    return play.start_user_play(
        store, benchmark="mock", sample_id=None, persona="rational", seed=3, **kw
    )


def _ended(store: Store, eid: str) -> EpisodeEnded:
    last = store.events(eid)[-1]
    assert isinstance(last, EpisodeEnded), last
    return last


def test_advance_records_a_raising_agent(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_replay, "build_agent", lambda *a, **k: _AsksThenRaises())
    eid = _start(store, method="A0")
    view = play.advance(store, eid)
    assert view.pending_question is not None and not view.ended
    view = send_reply(store, eid, "teal please", added=[], deliberate=True)
    assert view.ended and view.outcome is Outcome.ERROR
    end = _ended(store, eid)
    assert end.reason.value == "agent_error" and end.error == "RuntimeError: agent fell over"


def test_advance_records_an_agent_failing_while_rebuilt(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    eid = _start(store, method="A0")
    assert play.advance(store, eid).pending_question is not None  # the real agent asked

    def broken(*a: Any, **k: Any) -> Any:
        raise RuntimeError("cannot rebuild")

    monkeypatch.setattr(agent_replay, "build_agent", broken)
    view = send_reply(
        store, eid, "whatever", added=[], deliberate=True
    )  # the agent is due: its rebuild fails
    assert view.ended and view.outcome is Outcome.ERROR
    end = _ended(store, eid)
    assert end.outcome is Outcome.ERROR and end.reason.value == "agent_error"
    assert end.error == "RuntimeError: cannot rebuild"


def test_advance_records_an_llm_failure(store: Store) -> None:
    client = ScriptedLLM([LLMError("model offline", model="m", retryable=False)])
    eid = _start(store, method="A0", model="openai/scripted")
    view = play.advance(store, eid, client=client)
    assert view.ended and view.outcome is Outcome.ERROR
    end = _ended(store, eid)
    assert end.reason.value == "llm_error" and "model offline" in (end.error or "")
