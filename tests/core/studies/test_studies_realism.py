from __future__ import annotations

import pytest

from core.studies import (
    RealismEpisode,
    StudySpec,
    annotator_queue,
    assign_study,
    create_study,
    episode_facts,
    label_item,
    pair_id,
    realism_report,
    record_play,
    study_realism_report,
)


def _ep(eid: str, persona: str, player: str, **kw) -> RealismEpisode:
    return RealismEpisode(episode_id=eid, sample_id="s", persona_id=persona, player=player, **kw)  # type: ignore[arg-type]


def test_realism_report_side_by_side() -> None:
    eps = [
        _ep(
            "h1",
            "dependent",
            "human",
            user_replies=4,
            disclosures=6,
            volunteered=2,
            budget=12.0,
            patience_left=6.0,
        ),
        _ep(
            "h2",
            "avoidant",
            "human",
            user_replies=2,
            disclosures=1,
            declined=1,
            budget=8.0,
            patience_left=0.0,
        ),
        _ep(
            "s1",
            "dependent",
            "simulator",
            user_replies=3,
            disclosures=6,
            volunteered=1,
            budget=12.0,
            patience_left=3.0,
        ),
        _ep(
            "s2",
            "avoidant",
            "simulator",
            user_replies=2,
            disclosures=2,
            declined=2,
            budget=8.0,
            patience_left=2.0,
        ),
    ]
    ident = [
        {"episode_id": "h1", "judge": "j1", "predicted": "dependent"},
        {"episode_id": "h1", "judge": "j2", "predicted": "rational"},
        {"episode_id": "h2", "judge": "j1", "predicted": "avoidant"},
        {"episode_id": "s1", "judge": "j1", "predicted": "dependent"},
        {"episode_id": "s2", "judge": "j1", "predicted": "avoidant"},
        {"episode_id": "unknown", "judge": "j1", "predicted": "avoidant"},  # ignored
    ]
    cons = [
        {"episode_a": "h1", "episode_b": "h2", "judge": "j1", "predicted": "DIFFERENT"},
        {"episode_a": "h1", "episode_b": "h1", "judge": "j1", "predicted": "DIFFERENT"},
        {"episode_a": "s1", "episode_b": "s2", "judge": "j1", "predicted": "DIFFERENT"},
        {"episode_a": "s1", "episode_b": "s1", "judge": "j1", "predicted": "SAME"},
        {"episode_a": "h1", "episode_b": "s1", "judge": "j1", "predicted": "SAME"},
    ]
    rep = realism_report(eps, ident, cons)
    idf = rep["identification"].set_index(["player", "persona"])
    assert idf.loc[("human", "dependent"), "accuracy"] == pytest.approx(0.5)
    assert idf.loc[("simulator", "dependent"), "accuracy"] == 1.0
    cf = rep["consistency"].set_index("player")
    assert cf.loc["human", "balanced_accuracy"] == pytest.approx(0.5)
    assert cf.loc["simulator", "balanced_accuracy"] == 1.0
    assert cf.loc["mixed", "balanced_accuracy"] is None or pd_isna(
        cf.loc["mixed", "balanced_accuracy"]
    )
    beh = rep["behaviour"].set_index(["player", "persona"])
    assert beh.loc[("human", "dependent"), "disclosures_per_reply"] == pytest.approx(1.5)
    assert beh.loc[("human", "dependent"), "volunteer_rate"] == pytest.approx(0.5)
    assert beh.loc[("simulator", "avoidant"), "decline_rate"] == pytest.approx(1.0)
    assert beh.loc[("human", "dependent"), "patience_fraction_left"] == pytest.approx(0.5)
    side = rep["side_by_side"].set_index(["persona", "metric"])
    assert side.loc[("dependent", "identification_accuracy"), "human"] == pytest.approx(0.5)
    assert side.loc[("dependent", "identification_accuracy"), "simulator"] == 1.0
    assert side.loc[("avoidant", "patience_left"), "simulator"] == 2.0
    assert rep["confusion_human"].loc["dependent", "rational"] == 1


def pd_isna(v) -> bool:
    import pandas as pd

    return bool(pd.isna(v))


def test_realism_from_store_with_human_labels(store, make_episode) -> None:
    reply = {
        "disclosures": [{"slot": "colour", "value": "red", "how": "volunteer"}],
        "declined": [],
    }
    make_episode("hum", persona_id="dependent", user_voice="human", replies=(reply, reply))
    make_episode("sim", persona_id="dependent", user_voice="template", replies=(reply,))
    make_episode("sim2", persona_id="rational", user_voice="template")
    record_play(store, annotator="player1", episode_id="hum", sample_id="sample-1")
    facts = episode_facts(store, "hum")
    assert (facts.player, facts.user_replies, facts.disclosures, facts.volunteered) == (
        "human",
        2,
        2,
        2,
    )
    assert facts.budget == 10.0 and facts.patience_left == 4.0
    create_study(
        store,
        StudySpec(
            name="realism",
            episodes=("hum", "sim", "sim2"),
            episode_pairs=(("hum", "sim"), ("sim", "sim2")),
            label_kinds=("persona_id", "same_persona"),
            overlap=2,
        ),
    )
    assign_study(store, "realism", ["player1", "j1", "j2"])
    for ann in ("player1", "j1", "j2"):
        for item in annotator_queue(store, "realism", ann, reveal_ids=True).items:
            if item.target_kind == "episode":
                label_item(store, item.assignment_id, "persona_id", "dependent")
            else:
                same = item.target_id == pair_id("hum", "sim")
                label_item(
                    store, item.assignment_id, "same_persona", "SAME" if same else "DIFFERENT"
                )
    extra = [{"episode_id": "sim2", "judge": "llm:x", "predicted": "avoidant"}]
    rep = study_realism_report(store, "realism", ["hum", "sim", "sim2"], identifications=extra)
    idf = rep["identification"].set_index(["player", "persona"])
    assert idf.loc[("human", "dependent"), "judgments"] == 2  # player1 never labels their own
    assert idf.loc[("human", "dependent"), "accuracy"] == 1.0
    assert idf.loc[("simulator", "rational"), "accuracy"] == 0.0
    assert set(rep["consistency"]["player"]) == {"mixed", "simulator"}
