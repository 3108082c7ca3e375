"""The play-as-user page's end-of-episode survey, stored through the validated label write.

The survey is a label like any other (kind ``play_user_survey`` on the episode): it goes through
:func:`core.studies.labels.write_label`, so its answers are checked against
:class:`~core.studies.labels.PlayUserSurvey`, it is marked ``self_played`` from the study-play
record (the person played the episode they rate) and it lands in one IMMEDIATE transaction.

It is answered **once** per person and episode: the store refuses a second survey (in the same
transaction that would write it), and :func:`stored_survey` gives the page the stored answers to
show read-only after a reload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.store import Store
from core.studies.labels import PlayUserSurvey, stored_label, write_label

SURVEY_KIND = "play_user_survey"
"""The label kind of the survey."""


def save_play_survey(
    store: Store,
    *,
    annotator: str,
    episode_id: str,
    answers: Mapping[str, Any],
    study_id: str | None = None,
) -> int:
    """Validate and store one player's survey of an episode; return the label's id.

    Args:
        store: The open store.
        annotator: The person who played (and now rates) the episode.
        episode_id: The episode they played.
        answers: The survey's fields (see :class:`~core.studies.labels.PlayUserSurvey`); the
            shift question is answered only when a shift happened.
        study_id: The study whose play assignment the episode fulfils, if any.

    Returns:
        The new ``annotation_id``.

    Raises:
        ConfigError: An answer out of range or missing, naming the field; nothing is stored.
        ProtocolError: This person already answered the survey of this episode.
    """
    return write_label(
        store,
        annotator=annotator,
        target_kind="episode",
        target_id=episode_id,
        label_kind=SURVEY_KIND,
        value=dict(answers),
        study_id=study_id,
    )


def stored_survey(store: Store, *, annotator: str, episode_id: str) -> dict[str, Any] | None:
    """The survey ``annotator`` gave on ``episode_id`` (None when not answered yet)."""
    got = stored_label(
        store,
        annotator=annotator,
        target_kind="episode",
        target_id=episode_id,
        label_kind=SURVEY_KIND,
    )
    return dict(got) if isinstance(got, dict) else None


_QUESTIONS = (
    ("understood", "The agent understood what I wanted"),
    ("questions_worth_it", "The agent's questions were worth my patience"),
    ("adapted", "When my goal changed, the agent adapted"),
    ("in_character", "I could stay in character"),
    ("comment", "Anything else?"),
)


def survey_lines(answers: dict[str, Any]) -> str:
    """Stored survey answers as plain lines (question: answer), for a read-only view."""
    lines = []
    for key, question in _QUESTIONS:
        if key in answers and answers[key] not in (None, ""):
            lines.append(f"{question}: {answers[key]}")
    return "\n".join(lines)


__all__ = ["SURVEY_KIND", "PlayUserSurvey", "save_play_survey", "stored_survey", "survey_lines"]
