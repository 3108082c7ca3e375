"""The play-as-user page's end-of-episode survey, stored through the validated label write.

The survey is a label like any other (kind ``play_user_survey`` on the episode): it goes through
:func:`core.studies.labels.write_label`, so its answers are checked against
:class:`~core.studies.labels.PlayUserSurvey`, it is marked ``self_played`` from the study-play
record (the person played the episode they rate) and it lands in one IMMEDIATE transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.store import Store
from core.studies.labels import PlayUserSurvey, write_label

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


__all__ = ["SURVEY_KIND", "PlayUserSurvey", "save_play_survey"]
