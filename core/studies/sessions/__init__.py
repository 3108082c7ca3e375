"""Production-log validation: import real sessions, judge them twice, compare the groups.

Example:
    result = import_sessions(store, Path("sessions.jsonl"))
    report = run_sessions_report(store, judges="heuristic")
"""

from __future__ import annotations

from core.store import Store
from core.studies.sessions.format import (
    LineError,
    SessionMessage,
    SessionRecord,
    parse_session_lines,
    read_sessions_file,
)
from core.studies.sessions.heuristic import LexiconJudge, StructureJudge
from core.studies.sessions.judges import (
    LLMSessionJudge,
    SessionJudge,
    human_judgments,
    human_pairs,
    judge_sessions,
    make_judges,
    pair_judgments,
    parse_judge_reply,
    render_transcript,
)
from core.studies.sessions.judgment import (
    SessionJudgment,
    TwoJudgeVerdict,
    strict_verdict,
)
from core.studies.sessions.report import (
    GroupComparison,
    SessionsReport,
    build_report,
    match_clean,
)
from core.studies.sessions.store import (
    ImportResult,
    get_judgments,
    get_session,
    import_sessions,
    put_judgments,
    put_sessions,
    session_rows,
)
from core.studies.sessions.synth import generate_sessions, write_sessions_jsonl


def run_sessions_report(
    store: Store,
    judges: str | tuple[SessionJudge, SessionJudge] = "heuristic",
    *,
    study: str | None = None,
    seed: int = 0,
    match_on: str | None = None,
    refresh: bool = False,
) -> SessionsReport:
    """Judge every imported session with two judges and build the validation report.

    Args:
        store: The open store.
        judges: ``"heuristic"``, ``"MODEL_A,MODEL_B"``, or two judge objects. Ignored when
            ``study`` is given.
        study: Use the human judgments of this study (two annotators per session through
            the queue) instead of automatic judges.
        seed: Bootstrap seed.
        match_on: Metadata key clean sessions must share with the misaligned one.
        refresh: Re-run judges even where judgments are stored.

    Returns:
        The report.
    """
    rows = session_rows(store)
    if study is not None:
        pairs = human_pairs(human_judgments(store, study))
    else:
        first, second = (
            make_judges(judges, cache_path=store.path) if isinstance(judges, str) else judges
        )
        ids = [r["session_id"] for r in rows]
        pairs = pair_judgments(
            judge_sessions(store, first, ids, refresh=refresh),
            judge_sessions(store, second, ids, refresh=refresh),
        )
    return build_report(pairs, rows, seed=seed, match_on=match_on)


__all__ = [
    "GroupComparison",
    "ImportResult",
    "LLMSessionJudge",
    "LexiconJudge",
    "LineError",
    "SessionJudge",
    "SessionJudgment",
    "SessionMessage",
    "SessionRecord",
    "SessionsReport",
    "StructureJudge",
    "TwoJudgeVerdict",
    "build_report",
    "generate_sessions",
    "get_judgments",
    "get_session",
    "human_judgments",
    "human_pairs",
    "import_sessions",
    "judge_sessions",
    "make_judges",
    "match_clean",
    "pair_judgments",
    "parse_judge_reply",
    "parse_session_lines",
    "put_judgments",
    "put_sessions",
    "read_sessions_file",
    "render_transcript",
    "run_sessions_report",
    "session_rows",
    "strict_verdict",
    "write_sessions_jsonl",
]
