"""Inter-annotator agreement, confusion matrices, disagreements and annotator throughput.

Statistics come from libraries, never hand-rolled: Cohen's κ from scikit-learn
(``cohen_kappa_score``), Fleiss' κ from statsmodels (``fleiss_kappa`` over
``aggregate_raters``), Krippendorff's α from the ``krippendorff`` package. Undefined values
(too few units, a single category everywhere) are ``None``, never 0.

A *unit* is one labelled thing: a target (episode, pair, session) for item-level labels, or a
(target, turn) for per-turn labels. Only the latest label per (annotator, unit, kind) counts.
Labels on episodes the annotator played themselves (``self_played``) are left out unless
asked for: they are kept apart, not mixed with third-party judgments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from typing import Any, Literal

import numpy as np
import pandas as pd

from core.store import Store
from core.studies.labels import episodes_of, list_labels
from core.studies.models import LabelRecord
from core.studies.schema import ensure_study_schema
from core.studies.studies import get_study

ORDINAL_KINDS = frozenset({"realism"})
"""Label kinds whose values are ordered (Krippendorff's α at the ordinal level)."""

AGREEMENT_KINDS = ("persona_id", "same_persona", "realism", "fault_type", "shift_type", "who_broke")
"""Label kinds with agreement statistics (comments and intents are free text)."""


def _category(kind: str, value: Any) -> str | int | None:
    if kind == "who_broke":
        return str(value.get("who")) if isinstance(value, dict) else None
    if kind == "realism":
        return int(value)
    if isinstance(value, (str, int)):
        return value
    return None


def unit_of(record: LabelRecord) -> str:
    """The unit id of a label: ``target_id`` or ``target_id@turn``."""
    return record.target_id if record.turn is None else f"{record.target_id}@{record.turn}"


def label_table(
    labels: Sequence[LabelRecord], label_kind: str, *, include_self_played: bool = False
) -> pd.DataFrame:
    """Pivot labels of one kind into a units × annotators table of categories.

    Args:
        labels: Labels (latest per slot, e.g. ``list_labels(..., latest_only=True)``).
        label_kind: The kind to tabulate (``who_broke`` uses its ``who`` part).
        include_self_played: Keep labels on episodes the annotator played.

    Returns:
        A DataFrame indexed by unit, one column per annotator (missing = NaN / None).
    """
    cells: dict[str, dict[str, Any]] = {}
    for r in labels:
        if r.label_kind != label_kind or (r.self_played and not include_self_played):
            continue
        cat = _category(label_kind, r.value)
        if cat is not None:
            cells.setdefault(r.annotator, {})[unit_of(r)] = cat
    if not cells:
        return pd.DataFrame()
    table = pd.DataFrame(cells).sort_index()
    return table[sorted(table.columns)]


def _clean(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def cohen_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """Cohen's κ for every annotator pair on the units both labelled.

    Returns:
        Columns ``annotator_a, annotator_b, n_units, agreement, kappa`` (κ None when
        undefined: fewer than 2 shared units or a single category used by both).
    """
    from sklearn.metrics import cohen_kappa_score  # imported on use: keeps queue pages light

    rows = []
    for a, b in combinations(list(table.columns), 2):
        both = table[[a, b]].dropna()
        n = len(both)
        kappa = None
        agree = None
        if n:
            ya, yb = both[a].astype(str).tolist(), both[b].astype(str).tolist()
            agree = sum(x == y for x, y in zip(ya, yb, strict=True)) / n
            if n >= 2 and len(set(ya) | set(yb)) > 1:
                kappa = _clean(float(cohen_kappa_score(ya, yb)))
        rows.append(
            {"annotator_a": a, "annotator_b": b, "n_units": n, "agreement": agree, "kappa": kappa}
        )
    return pd.DataFrame(
        rows, columns=["annotator_a", "annotator_b", "n_units", "agreement", "kappa"]
    )


def fleiss(table: pd.DataFrame) -> tuple[float | None, int]:
    """Fleiss' κ (statsmodels) over the units rated by the most common number (≥ 2) of raters.

    Fleiss' κ needs the same number of raters per unit; units with another count are left
    out, and the number of units used is returned beside κ.

    Returns:
        (κ or None, units used).
    """
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    if table.empty:
        return None, 0
    counts = table.notna().sum(axis=1)
    eligible = counts[counts >= 2]
    if eligible.empty:
        return None, 0
    m = int(eligible.mode().max())
    rows = table[counts == m]
    if len(rows) < 2:
        return None, len(rows)
    cats = sorted({str(v) for v in rows.stack().tolist()})
    if len(cats) < 2:
        return None, len(rows)
    codes = {c: i for i, c in enumerate(cats)}
    data = np.array([[codes[str(v)] for v in r.dropna().tolist()] for _, r in rows.iterrows()])
    counts_table, _ = aggregate_raters(data, n_cat=len(cats))
    return _clean(float(fleiss_kappa(counts_table, method="fleiss"))), len(rows)


def kripp_alpha(table: pd.DataFrame, *, ordinal: bool = False) -> float | None:
    """Krippendorff's α (nominal, or ordinal for ordered labels) over all units with ≥ 2 labels."""
    if table.empty:
        return None
    kept = table[table.notna().sum(axis=1) >= 2]
    if len(kept) < 1:
        return None
    values = [v for v in kept.stack().tolist()]
    if len({str(v) for v in values}) < 2:
        return None
    if ordinal:
        data = kept.astype(float).to_numpy().T
    else:
        cats = sorted({str(v) for v in values})
        codes = {c: float(i) for i, c in enumerate(cats)}
        data = kept.apply(lambda col: col.map(lambda v: codes.get(str(v), np.nan))).to_numpy().T
    import krippendorff

    level: Literal["nominal", "ordinal"] = "ordinal" if ordinal else "nominal"
    try:
        return _clean(float(krippendorff.alpha(reliability_data=data, level_of_measurement=level)))
    except ValueError:
        return None


def confusion(
    table: pd.DataFrame, a: str, b: str, *, labels: Sequence[Any] | None = None
) -> pd.DataFrame:
    """Confusion matrix of two annotators (rows: ``a``'s labels, columns: ``b``'s)."""
    both = table[[a, b]].dropna() if {a, b} <= set(table.columns) else pd.DataFrame()
    return confusion_from(
        both[a].tolist() if len(both) else [], both[b].tolist() if len(both) else [], labels
    )


def confusion_from(
    truth: Sequence[Any], predicted: Sequence[Any], labels: Sequence[Any] | None = None
) -> pd.DataFrame:
    """Confusion matrix (scikit-learn) as a labelled DataFrame (rows truth, columns predicted)."""
    cats = list(labels) if labels is not None else sorted({*map(str, truth), *map(str, predicted)})
    cats = [str(c) for c in cats]
    if not truth:
        return pd.DataFrame(0, index=cats, columns=cats)
    from sklearn.metrics import confusion_matrix

    m = confusion_matrix([str(t) for t in truth], [str(p) for p in predicted], labels=cats)
    return pd.DataFrame(m, index=pd.Index(cats, name="rows"), columns=pd.Index(cats, name="cols"))


def disagreements(
    labels: Sequence[LabelRecord], *, include_self_played: bool = False
) -> pd.DataFrame:
    """Units where annotators gave different labels (with episode ids for the inspector).

    Returns:
        Columns ``label_kind, target_kind, target_id, turn, episode_ids, n_annotators,
        values`` (``values`` maps annotator → label), one row per disagreeing unit.
    """
    groups: dict[tuple[str, str, str, int | None], dict[str, Any]] = {}
    for r in labels:
        if r.label_kind not in AGREEMENT_KINDS or (r.self_played and not include_self_played):
            continue
        key = (r.label_kind, r.target_kind, r.target_id, r.turn)
        groups.setdefault(key, {})[r.annotator] = r.value
    rows = []
    for (kind, tkind, tid, turn), values in sorted(groups.items(), key=lambda kv: str(kv[0])):
        cats = {str(_category(kind, v)) for v in values.values()}
        if len(values) >= 2 and len(cats) > 1:
            rows.append(
                {
                    "label_kind": kind,
                    "target_kind": tkind,
                    "target_id": tid,
                    "turn": turn,
                    "episode_ids": list(episodes_of(tkind, tid)),
                    "n_annotators": len(values),
                    "values": dict(sorted(values.items())),
                }
            )
    cols = [
        "label_kind",
        "target_kind",
        "target_id",
        "turn",
        "episode_ids",
        "n_annotators",
        "values",
    ]
    return pd.DataFrame(rows, columns=cols)


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def throughput(store: Store, study: str) -> pd.DataFrame:
    """Per annotator: labels, items done, labels per hour and time per item.

    Time per item is the sum of the ``seconds`` the page recorded on the item's labels when
    present, else the time from opening the item to its last label.

    Returns:
        Columns ``annotator, labels, items_done, active_hours, labels_per_hour,
        median_seconds_per_item, mean_seconds_per_item``.
    """
    st = get_study(store, study)
    labels = list_labels(store, study_id=st.study_id)
    opened = {
        (a, k, t): o
        for a, k, t, o in store.conn.execute(
            "SELECT annotator_id, target_kind, target_id, opened_at FROM assignments "
            "WHERE study_id=?",
            (st.study_id,),
        )
    }
    done = dict(
        store.conn.execute(
            "SELECT annotator_id, count(*) FROM assignments WHERE study_id=? AND status='done' "
            "GROUP BY annotator_id",
            (st.study_id,),
        ).fetchall()
    )
    by_ann: dict[str, list[LabelRecord]] = {}
    for r in labels:
        by_ann.setdefault(r.annotator, []).append(r)
    rows = []
    for ann in sorted(set(by_ann) | set(done)):
        recs = by_ann.get(ann, [])
        per_item: dict[tuple[str, str], list[LabelRecord]] = {}
        for r in recs:
            per_item.setdefault((r.target_kind, r.target_id), []).append(r)
        item_secs = []
        for (kind, tid), rs in per_item.items():
            secs = [r.seconds for r in rs if r.seconds is not None]
            if secs:
                item_secs.append(float(sum(secs)))
            elif opened.get((ann, kind, tid)):
                last = max(_ts(r.created_at) for r in rs)
                item_secs.append(max(0.0, (last - _ts(opened[(ann, kind, tid)])).total_seconds()))
        hours = None
        if len(recs) >= 2:
            span = (_ts(recs[-1].created_at) - _ts(recs[0].created_at)).total_seconds() / 3600
            hours = span if span > 0 else None
        rows.append(
            {
                "annotator": ann,
                "labels": len(recs),
                "items_done": int(done.get(ann, 0)),
                "active_hours": hours,
                "labels_per_hour": len(recs) / hours if hours else None,
                "median_seconds_per_item": float(np.median(item_secs)) if item_secs else None,
                "mean_seconds_per_item": float(np.mean(item_secs)) if item_secs else None,
            }
        )
    cols = [
        "annotator",
        "labels",
        "items_done",
        "active_hours",
        "labels_per_hour",
        "median_seconds_per_item",
        "mean_seconds_per_item",
    ]
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class AgreementReport:
    """What the Agreement & QA page shows for one study.

    Attributes:
        summary: Per label kind: units, annotators, percent agreement, mean pairwise Cohen's
            κ, Fleiss' κ (and units used), Krippendorff's α.
        pairs: Cohen's κ per annotator pair and label kind.
        disagreements: Disagreeing units with episode ids (link to the inspector).
        throughput: Per annotator labels, items, speed.
        self_played: How many self-played labels were kept apart.
    """

    summary: pd.DataFrame
    pairs: pd.DataFrame
    disagreements: pd.DataFrame
    throughput: pd.DataFrame
    self_played: int


def agreement_report(
    store: Store, study: str, *, include_self_played: bool = False
) -> AgreementReport:
    """Compute every agreement statistic of a study.

    Args:
        store: The open store.
        study: Study id or name.
        include_self_played: Count labels on episodes the annotator played (default: no).

    Returns:
        The report (pandas frames).
    """
    ensure_study_schema(store)
    st = get_study(store, study)
    labels = list_labels(store, study_id=st.study_id, latest_only=True)
    summary, pair_frames = [], []
    for kind in AGREEMENT_KINDS:
        if kind not in st.spec.label_kinds:
            continue
        table = label_table(labels, kind, include_self_played=include_self_played)
        multi = table[table.notna().sum(axis=1) >= 2] if not table.empty else table
        pairs = cohen_pairs(table) if not table.empty else cohen_pairs(pd.DataFrame())
        if len(pairs):
            pair_frames.append(pairs.assign(label_kind=kind))
        f_kappa, f_units = fleiss(table)
        kappas = [k for k in pairs["kappa"].tolist() if k is not None] if len(pairs) else []
        pct = None
        if len(multi):
            pct = float(
                np.mean(
                    [len({str(v) for v in r.dropna().tolist()}) == 1 for _, r in multi.iterrows()]
                )
            )
        summary.append(
            {
                "label_kind": kind,
                "units": int(len(table)),
                "units_multi": int(len(multi)),
                "annotators": int(table.shape[1]) if not table.empty else 0,
                "percent_agreement": pct,
                "mean_cohen_kappa": float(np.mean(kappas)) if kappas else None,
                "fleiss_kappa": f_kappa,
                "fleiss_units": f_units,
                "krippendorff_alpha": kripp_alpha(table, ordinal=kind in ORDINAL_KINDS),
            }
        )
    pairs_df = (
        pd.concat(pair_frames, ignore_index=True)
        if pair_frames
        else pd.DataFrame(
            columns=["annotator_a", "annotator_b", "n_units", "agreement", "kappa", "label_kind"]
        )
    )
    return AgreementReport(
        summary=pd.DataFrame(summary),
        pairs=pairs_df,
        disagreements=disagreements(labels, include_self_played=include_self_played),
        throughput=throughput(store, study),
        self_played=sum(1 for r in labels if r.self_played),
    )


def study_confusion(
    store: Store, study: str, label_kind: str, annotator_a: str, annotator_b: str
) -> pd.DataFrame:
    """Confusion matrix of two annotators on one label kind of a study."""
    st = get_study(store, study)
    labels = list_labels(store, study_id=st.study_id, latest_only=True)
    return confusion(label_table(labels, label_kind), annotator_a, annotator_b)
