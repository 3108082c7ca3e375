"""A person playing the user speaks for themselves; the simulator writes only on request."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "protocol"))
from protohelp import ask, buy  # noqa: E402

from core.engine import episode  # noqa: E402
from core.engine.eventlog import InMemoryEventLog  # noqa: E402
from core.envs.mock import mock_graph, mock_sample  # noqa: E402
from core.errors import ProtocolError  # noqa: E402
from core.model.actions import Propose  # noqa: E402
from core.model.config import ProtocolConfig  # noqa: E402
from core.model.episode import Outcome  # noqa: E402
from core.model.events import PatienceCharged, UserReplied  # noqa: E402
from core.model.sample import FaultType  # noqa: E402
from core.protocol.voices import HUMAN, SIMULATOR_FOR_HUMAN  # noqa: E402

NEVER = ProtocolConfig(shift_fire_prob=0.0)


def _human(log: InMemoryEventLog, voice: str = HUMAN) -> str:
    return episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "rational",
        0,
        "h",
        NEVER,
        graph=mock_graph(),
        user_voice=voice,
    )


def _replies(log: InMemoryEventLog, eid: str) -> list[UserReplied]:
    return [e for e in log.events(eid) if isinstance(e, UserReplied)]


def _charges(log: InMemoryEventLog, eid: str) -> list[str]:
    return [e.reason for e in log.events(eid) if isinstance(e, PatienceCharged)]


def test_rejected_proposal_waits_for_the_persons_reaction() -> None:
    log = InMemoryEventLog()
    eid = _human(log)
    episode.step(log, eid, buy("s06"))
    view = episode.step(log, eid, Propose(text="done"))
    assert view.awaiting_user and not view.ended
    assert _replies(log, eid) == []  # the template did not speak for the person
    assert "rejected_proposal" not in _charges(log, eid)  # charged once they have reacted
    uv = episode.user_view(log, eid)
    assert uv.pending_reaction and uv.pending_question is None
    assert uv.unmet and all(isinstance(p, str) and p for p in uv.unmet)
    with pytest.raises(ProtocolError):
        episode.step(log, eid, ask("color"))
    uv = episode.respond(log, eid, "No, that one is the wrong colour.", [])
    last = _replies(log, eid)[-1]
    assert last.voice == HUMAN and last.reply_kind == "rejection"
    assert last.text == "No, that one is the wrong colour."
    assert _charges(log, eid)[-1] == "rejected_proposal"
    assert not uv.pending_reaction and not episode.agent_view(log, eid).awaiting_user


def test_pause_survives_a_replay_from_the_store() -> None:
    log = InMemoryEventLog()
    eid = _human(log)
    episode.step(log, eid, buy("s06"))
    episode.step(log, eid, Propose(text="done"))
    log.live.drop(eid)  # a reload: the state is rebuilt from the events alone
    assert episode.user_view(log, eid).pending_reaction
    assert episode.agent_view(log, eid).awaiting_user


def test_accepted_proposal_ends_without_words_put_in_the_persons_mouth() -> None:
    log = InMemoryEventLog()
    eid = _human(log)
    episode.step(log, eid, buy("s01"))  # the mock root's golden item
    view = episode.step(log, eid, Propose(text="done"))
    assert view.ended and episode.user_view(log, eid).outcome == Outcome.SUCCESS
    assert _replies(log, eid) == []


@pytest.mark.parametrize("pending", ["question", "reaction"])
def test_let_the_simulator_answer_is_recorded_as_such(pending: str) -> None:
    log = InMemoryEventLog()
    eid = _human(log)
    if pending == "question":
        episode.step(log, eid, ask("color"))
    else:
        episode.step(log, eid, buy("s06"))
        episode.step(log, eid, Propose(text="done"))
    uv = episode.respond_for_human(log, eid)
    last = _replies(log, eid)[-1]
    assert last.voice == SIMULATOR_FOR_HUMAN and last.text.strip()
    assert last.reply_kind == ("rejection" if pending == "reaction" else last.reply_kind)
    assert not uv.pending_reaction and uv.pending_question is None
    assert not episode.agent_view(log, eid).awaiting_user
    with pytest.raises(ProtocolError):
        episode.respond_for_human(log, eid)  # nothing is pending any more


def test_simulated_users_still_react_at_once() -> None:
    log = InMemoryEventLog()
    eid = _human(log, voice="template")
    episode.step(log, eid, buy("s06"))
    view = episode.step(log, eid, Propose(text="done"))
    assert not view.awaiting_user
    assert _replies(log, eid)[-1].reply_kind == "rejection"
    assert _charges(log, eid)[-1] == "rejected_proposal"
