"""The play-as-user survey is a validated label: checked answers, self-played, nothing on error."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from core.errors import ConfigError
from core.store import Store
from core.studies import list_labels, record_play
from core.studies.models import StudySpec
from core.studio.play_survey import SURVEY_KIND, save_play_survey

GOOD: dict[str, Any] = {
    "understood": 4,
    "questions_worth_it": 2,
    "adapted": "partly",
    "in_character": 5,
    "comment": "It asked good questions — merci.",
    "outcome": "SUCCESS",
    "shifts": 1,
}


def _count(store: Store) -> int:
    return int(store.conn.execute("SELECT count(*) FROM annotations").fetchone()[0])


def test_a_survey_is_stored_validated_and_self_played(store: Store) -> None:
    record_play(store, annotator="ann", episode_id="ep1", sample_id="s1")
    aid = save_play_survey(store, annotator="ann", episode_id="ep1", answers=GOOD)
    [label] = list_labels(store, target_id="ep1")
    assert label.annotation_id == aid and label.label_kind == SURVEY_KIND
    assert label.target_kind == "episode" and label.self_played is True
    assert label.value == GOOD


def test_a_survey_of_an_episode_not_played_is_not_self_played(store: Store) -> None:
    save_play_survey(store, annotator="ann", episode_id="ep2", answers=GOOD)
    assert list_labels(store, target_id="ep2")[0].self_played is False


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"understood": 7}, "understood"),
        ({"questions_worth_it": 0}, "questions_worth_it"),
        ({"adapted": "sort of"}, "adapted"),
        ({"in_character": "5"}, "in_character"),
        ({"shifts": -1}, "shifts"),
        ({"outcome": ""}, "outcome"),
        ({"comment": "x" * 10_001}, "comment"),
        ({"extra": 1}, "extra"),
    ],
)
def test_bad_answers_are_refused_naming_the_field(
    store: Store, change: dict[str, Any], field: str
) -> None:
    with pytest.raises(ConfigError) as info:
        save_play_survey(store, annotator="ann", episode_id="ep1", answers={**GOOD, **change})
    assert info.value.field == SURVEY_KIND and field in str(info.value)
    assert _count(store) == 0


def test_a_missing_answer_is_refused(store: Store) -> None:
    answers = {k: v for k, v in GOOD.items() if k != "adapted"}
    with pytest.raises(ConfigError, match="adapted"):
        save_play_survey(store, annotator="ann", episode_id="ep1", answers=answers)
    assert _count(store) == 0


def test_studies_cannot_ask_for_the_survey_on_a_label_form() -> None:
    with pytest.raises(ValidationError, match="written by its page"):
        StudySpec(name="s", episodes=("e1",), label_kinds=("realism", SURVEY_KIND))


def test_the_survey_is_answered_once_per_person_and_episode(store: Store) -> None:
    """A reload (or a second tab) cannot store a second, conflicting survey."""
    from core.errors import ProtocolError
    from core.studio.play_survey import stored_survey, survey_lines

    assert stored_survey(store, annotator="ann", episode_id="ep9") is None
    save_play_survey(store, annotator="ann", episode_id="ep9", answers=GOOD)
    with pytest.raises(ProtocolError, match="already answered"):
        save_play_survey(
            store, annotator="ann", episode_id="ep9", answers={**GOOD, "understood": 2}
        )
    assert _count(store) == 1
    assert stored_survey(store, annotator="ann", episode_id="ep9") == GOOD
    assert "understood what I wanted: 4" in survey_lines(GOOD)
    # another person, or another episode, answers their own
    save_play_survey(store, annotator="bob", episode_id="ep9", answers=GOOD)
    save_play_survey(store, annotator="ann", episode_id="ep10", answers=GOOD)
    assert _count(store) == 3
