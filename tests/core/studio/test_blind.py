"""The hidden-intent visibility rule, enforced by the server: each bypass of a blind study is
refused — the sibling sample (same graph or root intent) in either play page, free play of one's
own assigned sample, a debrief before the item is submitted — and an admin can see why."""

from __future__ import annotations

import pytest

from core.errors import ConfigError, ProtocolError
from core.model.actions import Propose
from core.store import Store
from core.studies import add_annotator, assign_study, create_study
from core.studio import blind, plays
from core.studio import roleplay as play


@pytest.fixture
def loaded(store: Store) -> Store:
    from core.studio.bootstrap import load_bundled_samples

    load_bundled_samples(store)
    return store


def _siblings(store: Store, benchmark: str = "tau2_airline") -> tuple[str, str]:
    """Two samples of one intent graph."""
    rows = store.conn.execute(
        "SELECT graph_id, group_concat(sample_id) FROM samples WHERE benchmark=? "
        "GROUP BY graph_id HAVING count(*) >= 2 ORDER BY graph_id LIMIT 1",
        (benchmark,),
    ).fetchone()
    a, b = sorted(rows[1].split(","))[:2]
    return a, b


def _agent_study(store: Store, sample: str, *, blind_: bool = True) -> int:
    study = create_study(
        store,
        {
            "name": f"blind-{sample}-{blind_}",
            "roles": ["play_agent"],
            "samples": [sample],
            "overlap": 1,
            "blind": blind_,
        },
    )
    add_annotator(store, "ann")
    assign_study(store, study.study_id, ["ann"])
    return int(
        store.conn.execute(
            "SELECT assignment_id FROM assignments WHERE study_id=? AND annotator_id='ann'",
            (study.study_id,),
        ).fetchone()[0]
    )


def _start(store: Store, role: str, sample: str, **kw):
    fn = play.start_user_play if role == "user" else play.start_agent_play
    return fn(
        store,
        benchmark="tau2_airline",
        sample_id=sample,
        persona="rational",
        seed=0,
        player="ann",
        strict=True,
        **kw,
    )


def test_sibling_of_a_pending_agent_item_is_refused_in_both_pages(loaded: Store) -> None:
    item, sibling = _siblings(loaded)
    _agent_study(loaded, item)
    for role in ("user", "agent"):
        with pytest.raises(ConfigError, match="shares its task"):
            _start(loaded, role, sibling)
        assert sibling not in {
            c.sample_id
            for c in play.sample_choices(
                loaded, "tau2_airline", person="ann", role=role, strict=True
            )
        }
    # somebody else is not affected
    eid = play.start_user_play(
        loaded,
        benchmark="tau2_airline",
        sample_id=sibling,
        persona="rational",
        seed=0,
        player="bob",
        strict=True,
    )
    assert eid


def test_free_play_of_an_assigned_sample_is_refused(loaded: Store) -> None:
    item, _ = _siblings(loaded)
    aid = _agent_study(loaded, item)
    with pytest.raises(ConfigError, match="pending study items"):
        _start(loaded, "agent", item)  # free play, junk answers, debrief: refused up front
    with pytest.raises(ConfigError):
        _start(loaded, "user", item)
    eid = _start(loaded, "agent", item, study_id=None, assignment_id=aid)
    assert plays.open_play(loaded, eid, "agent", "ann").ok


def test_no_debrief_before_the_item_is_submitted(loaded: Store) -> None:
    item, sibling = _siblings(loaded)
    aid = _agent_study(loaded, item)
    eid = _start(loaded, "agent", item, assignment_id=aid)
    view = play.agent_play_view(loaded, eid)
    for _ in range(view.turns_left + 2):
        if view.ended:
            break
        view = play.agent_play_step(loaded, eid, Propose(text="junk"))
    assert view.ended
    with pytest.raises(ProtocolError, match="submitted"):
        blind.debrief_for(loaded, eid, "ann")
    assert plays.complete_assignment(loaded, eid)
    assert blind.debrief_for(loaded, eid, "ann").wanted_at_start
    # once submitted, the sibling opens again
    assert blind.hidden_refusal(loaded, "ann", sibling, "user", strict=True) is None


def test_an_episode_started_before_the_assignment_stops_opening(loaded: Store) -> None:
    item, sibling = _siblings(loaded)
    eid = _start(loaded, "user", sibling)
    assert plays.open_play(loaded, eid, "user", "ann").ok
    _agent_study(loaded, item)
    refused = plays.open_play(loaded, eid, "user", "ann")
    assert not refused.ok and "shares its task" in refused.reason


def test_not_blind_studies_hide_no_siblings(loaded: Store) -> None:
    item, sibling = _siblings(loaded)
    _agent_study(loaded, item, blind_=False)
    assert blind.hidden_refusal(loaded, "ann", sibling, "user", strict=True) is None


def test_admin_sees_why_an_item_is_hidden(loaded: Store) -> None:
    item, sibling = _siblings(loaded)
    aid = _agent_study(loaded, item)
    reasons = blind.why_hidden(loaded, "ann", sibling)
    assert {r.code for r in reasons} == {"sibling"}
    assert all(r.assignment_id == aid and r.via_sample == item for r in reasons)
    assert {r.text.split(":")[0] for r in reasons} == {"as the user", "as the agent"}
    codes = {r.code for r in blind.why_hidden(loaded, "ann", item)}
    assert codes == {"other_seat", "own_item"}
    assert blind.why_hidden(loaded, "bob", sibling) == []
