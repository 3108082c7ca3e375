"""Read models of the studio's human-study pages (Annotate, Agreement & QA, Sessions).

Pure functions over engine results: they format statistics (undefined is "—", never 0), find
the studies an annotator works in, and reshape reports into tidy frames the pages plot. No
streamlit here; the pages only lay these out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from core.store import Store
from core.studies.schema import ensure_study_schema

if TYPE_CHECKING:  # the report module pulls scikit-learn; queue pages never need it
    from core.studies.sessions.report import SessionsReport

UNDEFINED = "—"
"""How an undefined statistic is shown (a κ with one category, too few units...)."""

STAT_COLUMNS: dict[str, str] = {
    "label_kind": "label",
    "units": "units",
    "units_multi": "units with ≥2 labels",
    "annotators": "annotators",
    "percent_agreement": "% agreement",
    "mean_cohen_kappa": "Cohen's κ (mean of pairs)",
    "fleiss_kappa": "Fleiss' κ",
    "fleiss_units": "Fleiss units",
    "krippendorff_alpha": "Krippendorff's α",
}
"""Agreement-summary columns and their headings."""

SESSION_MEASURES: dict[str, str] = {
    "platform_score": "Platform score",
    "tool_calls": "Tool calls per session",
}
"""The two Figure-7 measures and their titles."""


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) or math.isinf(number) else number


def fmt_stat(value: Any, digits: int = 3) -> str:
    """Format a statistic; None / NaN / non-numbers are "—".

    >>> fmt_stat(0.5), fmt_stat(None), fmt_stat(float("nan"))
    ('0.500', '—', '—')
    """
    number = _number(value)
    return UNDEFINED if number is None else f"{number:.{digits}f}"


def fmt_percent(value: Any) -> str:
    """Format a fraction as a percentage ("—" when undefined).

    >>> fmt_percent(0.75)
    '75.0%'
    """
    number = _number(value)
    return UNDEFINED if number is None else f"{100 * number:.1f}%"


def agreement_summary_rows(summary: pd.DataFrame) -> list[dict[str, str]]:
    """Format the agreement summary (one row per label kind) for display.

    Args:
        summary: ``AgreementReport.summary``.

    Returns:
        Rows keyed by the headings of :data:`STAT_COLUMNS`, every value a string.
    """
    rows: list[dict[str, str]] = []
    for rec in summary.to_dict("records"):
        row: dict[str, str] = {}
        for col, title in STAT_COLUMNS.items():
            value = rec.get(col)
            if col == "percent_agreement":
                row[title] = fmt_percent(value)
            elif col in ("mean_cohen_kappa", "fleiss_kappa", "krippendorff_alpha"):
                row[title] = fmt_stat(value)
            else:
                row[title] = str(value)
        rows.append(row)
    return rows


def pair_rows(pairs: pd.DataFrame) -> list[dict[str, str]]:
    """Format Cohen's κ per annotator pair and label kind for display."""
    out: list[dict[str, str]] = []
    for rec in pairs.to_dict("records"):
        out.append(
            {
                "label": str(rec.get("label_kind", "")),
                "annotator A": str(rec["annotator_a"]),
                "annotator B": str(rec["annotator_b"]),
                "shared units": str(rec["n_units"]),
                "% agreement": fmt_percent(rec.get("agreement")),
                "Cohen's κ": fmt_stat(rec.get("kappa")),
            }
        )
    return out


def pair_options(pairs: pd.DataFrame, label_kind: str) -> list[tuple[str, str]]:
    """Annotator pairs with shared units on one label kind (for a confusion-matrix picker)."""
    if pairs.empty:
        return []
    sel = pairs[(pairs["label_kind"] == label_kind) & (pairs["n_units"] > 0)]
    return [(str(a), str(b)) for a, b in zip(sel["annotator_a"], sel["annotator_b"], strict=True)]


def _value_text(value: Any) -> str:
    if isinstance(value, Mapping):
        who = value.get("who")
        sev = value.get("severity")
        return f"{who} ({sev})" if sev else str(who)
    return str(value)


def disagreement_rows(disagreements: pd.DataFrame) -> list[dict[str, Any]]:
    """Flatten the disagreement list: one row per unit, labels as "annotator: value" text.

    Returns:
        Rows with ``label, target, turn, episodes`` (list of episode ids), ``labels``.
    """
    out: list[dict[str, Any]] = []
    for rec in disagreements.to_dict("records"):
        turn = _number(rec.get("turn"))
        values: Mapping[str, Any] = rec.get("values") or {}
        out.append(
            {
                "label": str(rec["label_kind"]),
                "target": f"{rec['target_kind']} {rec['target_id']}",
                "turn": UNDEFINED if turn is None else str(int(turn)),
                "episodes": [str(e) for e in rec.get("episode_ids") or []],
                "labels": " · ".join(f"{a}: {_value_text(v)}" for a, v in values.items()),
            }
        )
    return out


def throughput_rows(throughput: pd.DataFrame) -> list[dict[str, str]]:
    """Format annotator throughput and time per item for display."""
    out: list[dict[str, str]] = []
    for rec in throughput.to_dict("records"):
        out.append(
            {
                "annotator": str(rec["annotator"]),
                "labels": str(rec["labels"]),
                "items done": str(rec["items_done"]),
                "labels / hour": fmt_stat(rec.get("labels_per_hour"), 1),
                "median s / item": fmt_stat(rec.get("median_seconds_per_item"), 1),
                "mean s / item": fmt_stat(rec.get("mean_seconds_per_item"), 1),
            }
        )
    return out


def annotator_studies(store: Store, annotator: str) -> list[dict[str, Any]]:
    """Studies in which ``annotator`` has assignments, open ones first, then by name.

    Returns:
        Rows with ``study_id, name, status, total, done, skipped, pending``.
    """
    ensure_study_schema(store)
    cur = store.conn.execute(
        """SELECT s.study_id, s.name, s.status, count(a.assignment_id),
            sum(a.status='done'), sum(a.status='skipped')
        FROM studies s JOIN assignments a ON a.study_id=s.study_id
        WHERE a.annotator_id=? GROUP BY s.study_id
        ORDER BY s.status!='open', s.name""",
        (annotator,),
    )
    rows = []
    for sid, name, status, total, done, skipped in cur.fetchall():
        rows.append(
            {
                "study_id": sid,
                "name": name,
                "status": status,
                "total": int(total),
                "done": int(done or 0),
                "skipped": int(skipped or 0),
                "pending": int(total) - int(done or 0) - int(skipped or 0),
            }
        )
    return rows


def progress_text(done: int, skipped: int, total: int) -> str:
    """The queue progress caption ("k of n done").

    >>> progress_text(2, 1, 5)
    '3 of 5 done (1 skipped)'
    """
    text = f"{done + skipped} of {total} done"
    return text + f" ({skipped} skipped)" if skipped else text


def matched_sessions_frame(
    report: SessionsReport, rows: Sequence[Mapping[str, Any]]
) -> pd.DataFrame:
    """Tidy frame of the matched pairs for the Figure-7 plots.

    Args:
        report: The sessions report.
        rows: Session rows (``session_rows(store)``).

    Returns:
        Columns ``pair, group`` ("misaligned" / "matched clean"), ``session_id, measure``
        (a key of :data:`SESSION_MEASURES`) and ``value``; missing scores are left out.
    """
    by_id = {str(r["session_id"]): r for r in rows}
    records: list[dict[str, Any]] = []
    for i, (mis, clean) in enumerate(report.matched_pairs, start=1):
        for group, sid in (("misaligned", mis), ("matched clean", clean)):
            row = by_id.get(sid)
            if row is None:
                continue
            for measure, value in (
                ("platform_score", row.get("platform_score")),
                ("tool_calls", row.get("n_tool_calls")),
            ):
                number = _number(value)
                if number is not None:
                    records.append(
                        {
                            "pair": i,
                            "group": group,
                            "session_id": sid,
                            "measure": measure,
                            "value": number,
                        }
                    )
    return pd.DataFrame(records, columns=["pair", "group", "session_id", "measure", "value"])


def comparison_rows(report: SessionsReport) -> list[dict[str, str]]:
    """Format the misaligned-vs-clean comparisons (means, medians, paired difference, CI)."""
    out: list[dict[str, str]] = []
    for c in report.comparisons:
        ci = UNDEFINED if c.ci95 is None else f"[{c.ci95[0]:.3f}, {c.ci95[1]:.3f}]"
        out.append(
            {
                "measure": SESSION_MEASURES.get(c.measure, c.measure),
                "pairs": str(c.n_pairs),
                "misaligned mean": fmt_stat(c.misaligned_mean),
                "clean mean": fmt_stat(c.clean_mean),
                "misaligned median": fmt_stat(c.misaligned_median),
                "clean median": fmt_stat(c.clean_median),
                "difference (mis − clean)": fmt_stat(c.mean_difference),
                "95% CI": ci,
            }
        )
    return out


def distribution_frame(report: SessionsReport) -> pd.DataFrame:
    """Fault-type, fault-family and shift-type counts over misaligned sessions (tidy).

    Returns:
        Columns ``kind`` ("fault type" / "fault family" / "shift type"), ``label``, ``count``.
    """
    records = [
        {"kind": kind, "label": label, "count": int(count)}
        for kind, counts in (
            ("fault type", report.fault_types),
            ("fault family", report.fault_families),
            ("shift type", report.shift_types),
        )
        for label, count in counts.items()
    ]
    return pd.DataFrame(records, columns=["kind", "label", "count"])


def verdict_by_session(report: SessionsReport) -> dict[str, str]:
    """Map each judged session to its two-judge verdict."""
    return {v.session_id: v.verdict for v in report.verdicts}
