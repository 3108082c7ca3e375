"""A person playing the agent in two tabs: an action from the stale tab is refused, never recorded.

Play as user already refuses a reply from a stale tab (a reply names the prompt it answers,
``tests/reliability/test_wrong_records.py``). Play as agent has the same hazard: two tabs show
turn 3; tab A sends a message and the simulated user answers; tab B, still showing turn 3, calls
a tool, messages the user or gives a final answer — made on a state that no longer exists. The
action carries the turn of the view it was made on (``AgentView.turn``); the service refuses a
mismatch with a message to reload and records nothing.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from core.engine import episode
from core.engine.episode import StaleActionError
from core.model.actions import AgentAction, Ask, EnvOp, Propose
from core.model.world import EnvAction
from core.store import Store
from core.studio import roleplay as play

SEARCH = EnvOp(action=EnvAction(tool="search", args={"query": "shirt"}))
QUESTION = Ask(text="Which colour would you like?")
FINAL = Propose(text="done")


def _agent_play(store: Store, seed: int = 3) -> str:
    sid = play.sample_choices(store, "mock")[0].sample_id
    return play.start_agent_play(
        store, benchmark="mock", sample_id=sid, persona="rational", seed=seed
    )


def _events(store: Store, eid: str) -> list[bytes]:
    return list(store.event_jsons(eid))


@pytest.mark.parametrize("late", [SEARCH, QUESTION, FINAL], ids=["tool call", "message", "final"])
def test_an_action_from_a_stale_tab_is_refused_and_nothing_is_stored(
    store: Store, late: AgentAction
) -> None:
    eid = _agent_play(store)
    shown = play.agent_play_view(store, eid).turn
    tab_a = tab_b = shown  # two tabs show the same turn
    after = play.agent_play_step(store, eid, QUESTION, acts_on=tab_a)
    assert not after.ended and after.turn != tab_b
    before = _events(store, eid)
    with pytest.raises(StaleActionError, match="reload the page") as info:
        play.agent_play_step(store, eid, late, acts_on=tab_b)
    assert "nothing was recorded" in str(info.value)
    assert _events(store, eid) == before
    assert play.agent_play_view(store, eid) == after  # the episode did not move
    # the tab that shows the current turn still acts
    play.agent_play_step(store, eid, late, acts_on=after.turn)
    assert len(_events(store, eid)) > len(before)


def test_an_action_on_an_episode_ended_in_another_tab_says_reload(store: Store) -> None:
    eid = _agent_play(store)
    shown = play.agent_play_view(store, eid).turn
    play.agent_play_step(store, eid, FINAL, acts_on=shown)  # tab A gives the final answer
    if not play.agent_play_view(store, eid).ended:
        episode.abort_for(store, eid, RuntimeError("ended in another tab"))
    ended = play.agent_play_view(store, eid)
    assert ended.ended
    before = _events(store, eid)
    for late in (SEARCH, QUESTION, FINAL):
        with pytest.raises(StaleActionError, match="reload"):
            play.agent_play_step(store, eid, late, acts_on=shown)
        with pytest.raises(StaleActionError, match="reload"):  # even naming the final turn
            play.agent_play_step(store, eid, late, acts_on=ended.turn)
    assert _events(store, eid) == before


@settings(max_examples=12, deadline=None)
@given(order=hs.lists(hs.sampled_from("AB"), min_size=2, max_size=8), seed=hs.integers(0, 50))
def test_only_actions_made_on_the_current_turn_are_recorded(order: list[str], seed: int) -> None:
    """Two tabs act in any order; each keeps the turn it last showed (refreshed on success)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "driftbench.db")
        try:
            eid = _agent_play(store, seed)
            start = play.agent_play_view(store, eid).turn
            tabs = {"A": start, "B": start}
            rng = random.Random(seed)
            accepted = 0
            for who in order:
                view = play.agent_play_view(store, eid)
                if view.ended:
                    break
                action = rng.choice([SEARCH, QUESTION])
                before = _events(store, eid)
                stale = tabs[who] != view.turn
                if stale:
                    with pytest.raises(StaleActionError, match="reload"):
                        play.agent_play_step(store, eid, action, acts_on=tabs[who])
                    assert _events(store, eid) == before
                    tabs[who] = view.turn  # the person reloads
                    continue
                tabs[who] = play.agent_play_step(store, eid, action, acts_on=tabs[who]).turn
                accepted += 1
            acted = [
                e for e in map(json.loads, store.event_jsons(eid)) if e["kind"] == "agent_action"
            ]
            assert len(acted) == accepted
        finally:
            store.close()
