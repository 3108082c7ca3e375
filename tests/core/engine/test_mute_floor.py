"""L0 (the floor) faces a mute user: no words at all — no answer, no rejection, no hint."""

from __future__ import annotations

import pytest

from core.agents.factory import build_agent
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_samples
from core.model.events import UserReplied
from core.model.run import PERSONAS
from core.protocol.voices.template import load_style
from core.runner.plan import literal_intent


def _play(method: str, sample, persona: str):  # type: ignore[no-untyped-def]
    log = InMemoryEventLog()
    g, w = mock_graph(), load_mock_world()
    eid = episode.start(log, sample, persona, 0, "symbolic", graph=g, method=method)
    episode.run(log, eid, build_agent(method, world=w, literal=literal_intent(sample, g)))
    return [e for e in log.events(eid) if isinstance(e, UserReplied)]


@pytest.mark.parametrize("persona", PERSONAS)
def test_the_floor_user_says_nothing(persona: str) -> None:
    mute = set(load_style("default")["mute"])
    said_words = 0
    for s in mock_samples():
        floor = _play("L0", s, persona)
        assert floor, "L0 still proposes, so the user reacts (silently)"
        for r in floor:
            assert r.reply_kind == "mute" and r.voice == "mute"
            assert r.disclosures == () and r.hinted == () and r.declined == ()
            assert r.text in mute or r.text.startswith("(")
        said_words += sum(r.reply_kind != "mute" for r in _play("B0", s, persona))
    assert said_words > 0  # B0 against the same samples does hear rejections


def test_floor_and_no_ask_differ_where_a_hint_was_given() -> None:
    differ = 0
    for s in mock_samples():
        b0 = _play("B0", s, "dependent")
        l0 = _play("L0", s, "dependent")
        differ += any(r.hinted for r in b0) and not any(r.hinted for r in l0)
    assert differ > 0
