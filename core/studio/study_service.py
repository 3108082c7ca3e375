"""The study engine as the Annotate, Agreement & QA, Sessions and Data pages use it.

One import surface for the pages over :mod:`core.studies` (studies, annotators, queues, labels,
agreement, realism) and :mod:`core.studies.sessions` (production-log import and validation).
"""

from __future__ import annotations

from core.studies import (
    ItemView,
    ShownLabel,
    add_annotator,
    agreement_report,
    annotator_queue,
    assign_study,
    confirm_item,
    create_study,
    get_assignment,
    get_study,
    item_view,
    label_item,
    list_annotators,
    list_studies,
    missing_labels,
    open_next,
    set_assignment_status,
    set_study_status,
    study_confusion,
    study_progress,
    study_realism_report,
)
from core.studies.item_view import TranscriptLine, session_card
from core.studies.labels import APPLIES_TO, SEVERITIES, WHO_VALUES
from core.studies.sessions import (
    ImportResult,
    import_sessions,
    run_sessions_report,
    session_rows,
    write_sessions_jsonl,
)
from core.studies.study_file import check_annotators
from core.studio.play_realism import play_study_realism

__all__ = [
    "APPLIES_TO",
    "SEVERITIES",
    "WHO_VALUES",
    "ImportResult",
    "ItemView",
    "ShownLabel",
    "TranscriptLine",
    "add_annotator",
    "agreement_report",
    "check_annotators",
    "annotator_queue",
    "assign_study",
    "confirm_item",
    "create_study",
    "get_assignment",
    "get_study",
    "import_sessions",
    "item_view",
    "label_item",
    "list_annotators",
    "list_studies",
    "missing_labels",
    "open_next",
    "play_study_realism",
    "run_sessions_report",
    "session_card",
    "session_rows",
    "set_assignment_status",
    "set_study_status",
    "study_confusion",
    "study_progress",
    "study_realism_report",
    "write_sessions_jsonl",
]
