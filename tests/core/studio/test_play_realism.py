"""The realism report reads a play study: the simulator replays each finished play once on the
same sample, persona, seed and agent, and the report puts people and simulator side by side."""

from __future__ import annotations

import pytest

from core.store import Store
from core.studies import create_study, get_study
from core.studio import roleplay as play
from core.studio.play_realism import play_study_realism, simulator_twins
from core.studio.plays import assigned_play, complete_assignment
from core.studio.reply_check import send_reply


@pytest.fixture
def loaded(store: Store) -> Store:
    from core.studio.bootstrap import load_bundled_samples

    load_bundled_samples(store)
    return store


def test_people_and_simulator_side_by_side(loaded: Store) -> None:
    from core.studies import add_annotator, assign_study

    sample = loaded.sample_rows("webshop")[2]["sample_id"]
    create_study(
        loaded,
        {
            "name": "realism-play",
            "roles": ["play_user"],
            "samples": [sample],
            "conditions": [{"persona_id": "rational"}],
            "overlap": 1,
        },
    )
    add_annotator(loaded, "ann")
    assign_study(loaded, "realism-play", ["ann"])
    aid = loaded.conn.execute("SELECT assignment_id FROM assignments").fetchone()[0]
    item = assigned_play(loaded, aid, "ann", "user")
    eid = play.start_user_play(
        loaded,
        benchmark="webshop",
        sample_id=sample,
        persona="rational",
        seed=aid,
        player="ann",
        strict=True,
        study_id=item.study_id,
        assignment_id=aid,
        **item.start_args(),
    )
    view = play.advance(loaded, eid)
    for _ in range(20):
        if view.ended:
            break
        view = send_reply(loaded, eid, "Not sure, whatever you think.", deliberate=True)
    assert view.ended
    complete_assignment(loaded, eid)
    twins = simulator_twins(loaded, "realism-play")
    assert list(twins) == [eid]
    twin = loaded.header(twins[eid])
    human = loaded.header(eid)
    assert (twin.sample_id, twin.persona_id, twin.seed, twin.method) == (
        human.sample_id,
        human.persona_id,
        human.seed,
        human.method,
    )
    assert twin.user_voice == "template" and human.user_voice == "human"
    assert simulator_twins(loaded, "realism-play") == twins  # reused, not replayed again
    frames = play_study_realism(loaded, "realism-play")
    players = set(frames["behaviour"]["player"])
    assert players == {"human", "simulator"}
    assert get_study(loaded, "realism-play").spec.roles == ("play_user",)
