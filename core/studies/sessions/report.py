"""Production-log validation report (the paper's Figure 7, for the user's own sessions).

Sessions are split by the strict two-judge rule (:func:`strict_verdict`) into misaligned,
clean, contested and unjudged. Each misaligned session is matched, without replacement, to
the clean session closest in size (same ``match_on`` metadata value when given; then fewest
differing user turns, then messages, then session id). The report compares the two groups
on platform score and tool calls per session (means, medians, paired mean difference with a
seeded bootstrap 95% interval) and shows fault-type, fault-family and shift-type
distributions over the misaligned sessions, plus the judges' agreement (Cohen's κ on the
misaligned flag).
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field
from sklearn.metrics import cohen_kappa_score

from core.model.base import Strict
from core.model.intent import ShiftOperator
from core.model.sample import FAMILY_OF, FaultFamily, FaultType
from core.studies.sessions.judgment import SessionJudgment, TwoJudgeVerdict, strict_verdict


class GroupComparison(Strict):
    """Misaligned vs matched clean sessions on one measure."""

    measure: str
    n_pairs: int = Field(description="Matched pairs where both sessions have the measure.")
    misaligned_mean: float | None
    clean_mean: float | None
    misaligned_median: float | None
    clean_median: float | None
    mean_difference: float | None = Field(description="misaligned − clean (paired).")
    ci95: tuple[float, float] | None = Field(description="Bootstrap 95% interval.")


class SessionsReport(Strict):
    """Everything the Sessions page and ``driftbench sessions report`` show."""

    judges: tuple[str, ...]
    heuristic: bool = Field(description="True when any judge is a heuristic (label it so).")
    n_sessions: int
    counts: dict[str, int] = Field(description="Sessions per verdict.")
    judge_kappa: float | None = Field(description="Cohen's κ of the judges' misaligned flags.")
    matched_pairs: tuple[tuple[str, str], ...] = Field(description="(misaligned, clean) ids.")
    comparisons: tuple[GroupComparison, ...]
    fault_types: dict[str, int]
    fault_families: dict[str, int]
    shift_types: dict[str, int]
    verdicts: tuple[TwoJudgeVerdict, ...]

    def payload(self) -> dict[str, Any]:
        """JSON form (for ``--json``)."""
        return self.model_dump(mode="json")


def match_clean(
    misaligned: Sequence[Mapping[str, Any]],
    clean: Sequence[Mapping[str, Any]],
    *,
    match_on: str | None = None,
) -> list[tuple[str, str]]:
    """Match each misaligned session to an unused clean one (nearest in size).

    Args:
        misaligned: Session rows (``session_id, n_user_turns, n_messages, metadata``).
        clean: Candidate clean session rows.
        match_on: A metadata key that must agree when a candidate with the same value exists.

    Returns:
        (misaligned id, clean id) pairs, in misaligned-id order; misaligned sessions left
        without a candidate are not matched.
    """
    pool = sorted(clean, key=lambda r: str(r["session_id"]))
    used: set[str] = set()
    pairs: list[tuple[str, str]] = []
    for m in sorted(misaligned, key=lambda r: str(r["session_id"])):
        free = [c for c in pool if c["session_id"] not in used]
        if not free:
            break
        if match_on is not None:
            want = (m.get("metadata") or {}).get(match_on)
            same = [c for c in free if (c.get("metadata") or {}).get(match_on) == want]
            free = same or free
        best = min(
            free,
            key=lambda c: (
                abs(int(c["n_user_turns"]) - int(m["n_user_turns"])),
                abs(int(c["n_messages"]) - int(m["n_messages"])),
                str(c["session_id"]),
            ),
        )
        used.add(str(best["session_id"]))
        pairs.append((str(m["session_id"]), str(best["session_id"])))
    return pairs


def _bootstrap_ci(diffs: Sequence[float], rng: random.Random, reps: int) -> tuple[float, float]:
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(reps))
    return means[int(0.025 * (reps - 1))], means[int(0.975 * (reps - 1))]


def compare(
    measure: str,
    pairs: Sequence[tuple[str, str]],
    values: Mapping[str, float | None],
    rng: random.Random,
    *,
    reps: int = 2000,
) -> GroupComparison:
    """Compare one measure over matched pairs (pairs missing a value are left out)."""
    both = [
        (values[m], values[c])
        for m, c in pairs
        if values.get(m) is not None and values.get(c) is not None
    ]
    if not both:
        return GroupComparison(
            measure=measure,
            n_pairs=0,
            misaligned_mean=None,
            clean_mean=None,
            misaligned_median=None,
            clean_median=None,
            mean_difference=None,
            ci95=None,
        )
    mis = [float(a) for a, _ in both]  # type: ignore[arg-type]
    cln = [float(b) for _, b in both]  # type: ignore[arg-type]
    diffs = [a - b for a, b in zip(mis, cln, strict=True)]
    return GroupComparison(
        measure=measure,
        n_pairs=len(both),
        misaligned_mean=statistics.fmean(mis),
        clean_mean=statistics.fmean(cln),
        misaligned_median=statistics.median(mis),
        clean_median=statistics.median(cln),
        mean_difference=statistics.fmean(diffs),
        ci95=_bootstrap_ci(diffs, rng, reps) if len(diffs) > 1 else None,
    )


def build_report(
    pairs: Mapping[str, tuple[SessionJudgment, SessionJudgment]],
    rows: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
    match_on: str | None = None,
    reps: int = 2000,
) -> SessionsReport:
    """Build the validation report from paired judgments and session rows.

    Args:
        pairs: Per session id, the two judges' judgments.
        rows: Session rows (``session_id, n_user_turns, n_messages, n_tool_calls,
            platform_score, metadata``), e.g. from ``session_rows(store)``.
        seed: Seed of the bootstrap.
        match_on: Metadata key to match clean sessions on (e.g. ``task``).
        reps: Bootstrap repetitions.

    Returns:
        The report.
    """
    by_id = {str(r["session_id"]): r for r in rows}
    verdicts = [strict_verdict(a, b) for sid, (a, b) in sorted(pairs.items()) if sid in by_id]
    counts = Counter(v.verdict for v in verdicts)
    mis_ids = [v.session_id for v in verdicts if v.verdict == "misaligned"]
    clean_ids = [v.session_id for v in verdicts if v.verdict == "clean"]
    matched = match_clean(
        [by_id[s] for s in mis_ids], [by_id[s] for s in clean_ids], match_on=match_on
    )
    rng = random.Random(seed)
    score = {sid: r.get("platform_score") for sid, r in by_id.items()}
    tools = {sid: float(r["n_tool_calls"]) for sid, r in by_id.items()}
    faults: Counter[str] = Counter()
    families: Counter[str] = Counter()
    shifts: Counter[str] = Counter()
    for v in verdicts:
        if v.verdict != "misaligned":
            continue
        for f in v.fault_types:
            faults[f.value] += 1
        for fam in {FAMILY_OF[f] for f in v.fault_types}:
            families[fam.value] += 1
        for s in v.shift_types:
            shifts[s.value] += 1
    valid = [(a, b) for a, b in pairs.values() if a.valid and b.valid]
    kappa: float | None = None
    if valid:
        flags_a = [int(a.misaligned) for a, _ in valid]
        flags_b = [int(b.misaligned) for _, b in valid]
        if len(set(flags_a) | set(flags_b)) > 1:
            kappa = float(cohen_kappa_score(flags_a, flags_b))
    names = sorted({j.judge for p in pairs.values() for j in p})
    kinds = {j.kind for p in pairs.values() for j in p}
    return SessionsReport(
        judges=tuple(names),
        heuristic="heuristic" in kinds,
        n_sessions=len(verdicts),
        counts={k: counts.get(k, 0) for k in ("misaligned", "clean", "contested", "unjudged")},
        judge_kappa=kappa,
        matched_pairs=tuple(matched),
        comparisons=(
            compare("platform_score", matched, score, rng, reps=reps),
            compare("tool_calls", matched, tools, rng, reps=reps),
        ),
        fault_types={f.value: faults.get(f.value, 0) for f in FaultType},
        fault_families={f.value: families.get(f.value, 0) for f in FaultFamily},
        shift_types={s.value: shifts.get(s.value, 0) for s in ShiftOperator},
        verdicts=tuple(verdicts),
    )
