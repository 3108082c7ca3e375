"""Who may play what: ownership (22.4), study assignments, blindness between roles (21.6),
discarded and expired plays, and the debrief after playing the agent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.errors import ConfigError, ProtocolError
from core.model.actions import Propose
from core.store import Store
from core.studies import add_annotator, assign_study, create_study
from core.studio import blind, plays
from core.studio import roleplay as play
from core.studio.debrief import agent_debrief
from core.studio.home import my_work


@pytest.fixture
def loaded(store: Store) -> Store:
    from core.studio.bootstrap import load_bundled_samples

    load_bundled_samples(store)
    return store


def _ids(store: Store, benchmark: str = "tau2_airline") -> list[str]:
    return [c.sample_id for c in play.sample_choices(store, benchmark)]


def test_an_episode_opens_only_for_its_player(loaded: Store) -> None:
    eid = play.start_agent_play(
        loaded, benchmark="tau2_airline", sample_id=None, persona="rational", seed=0, player="ann"
    )
    assert plays.open_play(loaded, eid, "agent", "ann").ok
    refused = plays.open_play(loaded, eid, "agent", "bob")
    assert not refused.ok and "belongs to another person" in refused.reason
    assert not plays.open_play(loaded, eid, "user", "ann").ok  # not a play-as-user episode
    # an episode nobody is recorded for opens only in single-user mode
    other = play.start_agent_play(
        loaded, benchmark="tau2_airline", sample_id=None, persona="rational", seed=1
    )
    assert not plays.open_play(loaded, other, "agent", "ann").ok
    assert plays.open_play(loaded, other, "agent", "ann", allow_unowned=True).ok


def test_the_two_pages_draw_different_samples_for_the_same_settings(loaded: Store) -> None:
    for bench in ("webshop", "tau2_retail", "tau2_airline"):
        for seed in range(25):
            u = play.choose_sample(loaded, bench, None, seed, role="user")
            a = play.choose_sample(loaded, bench, None, seed, role="agent")
            assert u != a, (bench, seed)
            assert u == play.choose_sample(loaded, bench, None, seed)  # the user draw is stable


def test_an_annotator_who_played_the_agent_cannot_open_the_user_view(loaded: Store) -> None:
    sid = _ids(loaded)[3]
    play.start_agent_play(
        loaded,
        benchmark="tau2_airline",
        sample_id=sid,
        persona="rational",
        seed=0,
        player="ann",
        strict=True,
    )
    with pytest.raises(ConfigError, match="played the agent on this sample"):
        play.start_user_play(
            loaded,
            benchmark="tau2_airline",
            sample_id=sid,
            persona="rational",
            seed=0,
            player="ann",
            strict=True,
        )
    # a random draw never lands on it either
    for seed in range(30):
        got = play.start_user_play(
            loaded,
            benchmark="tau2_airline",
            sample_id=None,
            persona="rational",
            seed=seed,
            player="ann",
            strict=True,
        )
        assert loaded.header(got).sample_id != sid
    # someone else may, and so may a researcher (not strict) outside studies
    play.start_user_play(
        loaded, benchmark="tau2_airline", sample_id=sid, persona="rational", seed=0, player="bob"
    )


def test_a_study_assignment_fixes_role_and_sample(loaded: Store) -> None:
    sid = _ids(loaded)[0]
    study = create_study(
        loaded,
        {"name": "blind", "roles": ["play_agent"], "samples": [sid], "overlap": 1},
        check=False,
    )
    add_annotator(loaded, "ann")
    assign_study(loaded, study.study_id, ["ann"])
    aid = int(
        loaded.conn.execute(
            "SELECT assignment_id FROM assignments WHERE annotator_id='ann'"
        ).fetchone()[0]
    )
    # the agent-role participant can never open the user view of that sample — even as a
    # researcher (not strict): the assignment decides
    with pytest.raises(ConfigError, match="assigned to play the agent"):
        play.start_user_play(
            loaded,
            benchmark="tau2_airline",
            sample_id=sid,
            persona="rational",
            seed=0,
            player="ann",
        )
    assert sid in blind.hidden_samples(loaded, "ann", "user", strict=False)
    item = plays.assigned_play(loaded, aid, "ann", "agent")
    assert item.sample_id == sid and item.episode_id is None
    with pytest.raises(ProtocolError, match="someone else"):
        plays.assigned_play(loaded, aid, "bob", "agent")
    with pytest.raises(ProtocolError, match="not a play-as-user item"):
        plays.assigned_play(loaded, aid, "ann", "user")
    assert my_work(loaded, "ann")["plays"][0]["assignment_id"] == aid
    eid = play.start_agent_play(
        loaded,
        benchmark=item.benchmark,
        sample_id=item.sample_id,
        persona="rational",
        seed=aid,
        player="ann",
        study_id=item.study_id,
        assignment_id=aid,
    )
    assert plays.assigned_play(loaded, aid, "ann", "agent").episode_id == eid  # resumes it
    assert not plays.complete_assignment(loaded, eid)  # still running: stays pending
    # the debrief stays closed while the episode runs, and opens when it ends
    with pytest.raises(ProtocolError):
        agent_debrief(loaded, eid)
    view = play.agent_play_view(loaded, eid)
    for _ in range(view.turns_left + 2):
        if view.ended:
            break
        view = play.agent_play_step(loaded, eid, Propose(text="done"))
    assert view.ended
    assert plays.complete_assignment(loaded, eid)
    status = loaded.conn.execute(
        "SELECT status FROM assignments WHERE assignment_id=?", (aid,)
    ).fetchone()[0]
    assert status == "done"
    debrief = agent_debrief(loaded, eid)
    assert debrief.wanted_at_start and debrief.opening
    assert {m.name for m in debrief.metrics} >= {"Success", "Patience"}
    assert debrief.outcome in {"Success", "Out of patience", "Out of turns", "Stopped by an error"}
    assert "_" not in debrief.ending  # plain words, not a termination code


def test_discard_and_expiry_take_plays_off_the_resume_list(loaded: Store) -> None:
    a = play.start_user_play(
        loaded, benchmark="webshop", sample_id=None, persona="rational", seed=0, player="ann"
    )
    b = play.start_user_play(
        loaded, benchmark="webshop", sample_id=None, persona="rational", seed=1, player="ann"
    )
    assert {r["episode_id"] for r in my_work(loaded, "ann")["resume"]} == {a, b}
    with pytest.raises(ProtocolError):
        plays.discard_play(loaded, a, "bob")  # only the owner
    plays.discard_play(loaded, a, "ann")
    assert [r["episode_id"] for r in my_work(loaded, "ann")["resume"]] == [b]
    refused = plays.open_play(loaded, a, "user", "ann")
    assert not refused.ok and "discarded" in refused.reason
    later = datetime.now(UTC) + timedelta(hours=30)
    assert plays.expire_plays(loaded, 24, now=later) == [b]
    assert my_work(loaded, "ann")["resume"] == []
    assert "expired" in plays.open_play(loaded, b, "user", "ann").reason
    assert plays.expire_plays(loaded, 0, now=later) == []  # 0 = never
