"""Realism study: the same samples played by people role-playing a persona and by the simulator.

The report puts the two players side by side per persona: how often judges identify the
persona (GRIP Identification), how well they tell SAME from DIFFERENT persona on pairs
(GRIP Consistency, balanced accuracy), and how the user behaves (disclosures, volunteering,
declining, patience left). Judge outputs are consumed as plain records, so GRIP's LLM or
heuristic judges and human labels feed it alike:

* identification record: ``{"episode_id", "judge", "predicted"}`` (a persona id);
* consistency record: ``{"episode_a", "episode_b", "judge", "predicted"}`` (SAME/DIFFERENT).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import pandas as pd
from pydantic import Field

from core.model.base import Strict
from core.store import Store
from core.studies.agreement import confusion_from
from core.studies.labels import DIFFERENT, SAME, list_labels
from core.studies.models import split_pair
from core.studies.studies import get_study

Player = Literal["human", "simulator"]


class RealismEpisode(Strict):
    """Per-episode facts the realism report needs (from the event log)."""

    episode_id: str
    sample_id: str
    persona_id: str
    player: Player
    user_replies: int = 0
    disclosures: int = Field(default=0, description="Facts disclosed in replies (all ways).")
    volunteered: int = 0
    declined: int = Field(default=0, description="Asked slots declined.")
    budget: float | None = None
    patience_left: float | None = None


def episode_facts(store: Store, episode_id: str) -> RealismEpisode:
    """Read one episode's player, persona, disclosure and patience facts from the store."""
    header = json.loads(store.header_json(episode_id))
    facts: dict[str, Any] = {
        "episode_id": episode_id,
        "sample_id": header.get("sample_id", ""),
        "persona_id": header.get("persona_id", ""),
        "player": "human" if header.get("user_voice") == "human" else "simulator",
    }
    replies = disclosures = volunteered = declined = 0
    for body in store.event_jsons(episode_id):
        ev = json.loads(body)
        kind = ev.get("kind")
        if kind == "episode_started":
            facts["budget"] = ev.get("budget")
        elif kind == "user_reply":
            replies += 1
            ds = ev.get("disclosures") or []
            disclosures += len(ds)
            volunteered += sum(1 for d in ds if d.get("how") == "volunteer")
            declined += len(ev.get("declined") or [])
        elif kind == "episode_ended":
            facts["patience_left"] = ev.get("patience_left")
    return RealismEpisode(
        **facts,
        user_replies=replies,
        disclosures=disclosures,
        volunteered=volunteered,
        declined=declined,
    )


def human_identifications(store: Store, study: str) -> list[dict[str, Any]]:
    """A study's ``persona_id`` labels as identification records (self-played ones left out)."""
    st = get_study(store, study)
    return [
        {"episode_id": r.target_id, "judge": f"human:{r.annotator}", "predicted": r.value}
        for r in list_labels(store, study_id=st.study_id, label_kind="persona_id", latest_only=True)
        if not r.self_played
    ]


def human_consistency(store: Store, study: str) -> list[dict[str, Any]]:
    """A study's ``same_persona`` labels as consistency records (self-played ones left out)."""
    st = get_study(store, study)
    out = []
    for r in list_labels(store, study_id=st.study_id, label_kind="same_persona", latest_only=True):
        if r.self_played:
            continue
        a, b = split_pair(r.target_id)
        out.append(
            {"episode_a": a, "episode_b": b, "judge": f"human:{r.annotator}", "predicted": r.value}
        )
    return out


def _rate(num: float, den: float) -> float | None:
    return num / den if den else None


def realism_report(
    episodes: Sequence[RealismEpisode],
    identifications: Iterable[Mapping[str, Any]] = (),
    consistency: Iterable[Mapping[str, Any]] = (),
) -> dict[str, pd.DataFrame]:
    """Build the realism report as tidy frames.

    Args:
        episodes: The played episodes (human and simulated).
        identifications: Identification records (see module doc).
        consistency: Consistency records (see module doc).

    Returns:
        ``identification`` (player, persona, judgments, correct, accuracy),
        ``consistency`` (player, pairs, judgments, balanced_accuracy),
        ``behaviour`` (player, persona, episodes, disclosures per reply, volunteer and
        decline rates, patience left, patience fraction left),
        ``side_by_side`` (persona × metric with human and simulator columns), and
        ``confusion_human`` / ``confusion_simulator`` (true persona × predicted).
    """
    from sklearn.metrics import balanced_accuracy_score  # on use: keeps queue pages light

    by_id = {e.episode_id: e for e in episodes}
    id_rows = []
    truths: dict[str, list[str]] = {"human": [], "simulator": []}
    preds: dict[str, list[str]] = {"human": [], "simulator": []}
    for rec in identifications:
        ep = by_id.get(str(rec["episode_id"]))
        if ep is None or rec.get("predicted") is None:
            continue
        id_rows.append(
            {
                "player": ep.player,
                "persona": ep.persona_id,
                "correct": str(rec["predicted"]) == ep.persona_id,
            }
        )
        truths[ep.player].append(ep.persona_id)
        preds[ep.player].append(str(rec["predicted"]))
    ident = pd.DataFrame(id_rows, columns=["player", "persona", "correct"])
    identification = (
        ident.groupby(["player", "persona"], as_index=False)
        .agg(judgments=("correct", "size"), correct=("correct", "sum"))
        .assign(accuracy=lambda d: d["correct"] / d["judgments"])
        if len(ident)
        else pd.DataFrame(columns=["player", "persona", "judgments", "correct", "accuracy"])
    )

    cons_rows: list[dict[str, Any]] = []
    for rec in consistency:
        a, b = by_id.get(str(rec["episode_a"])), by_id.get(str(rec["episode_b"]))
        if a is None or b is None or rec.get("predicted") not in (SAME, DIFFERENT):
            continue
        player: str = a.player if a.player == b.player else "mixed"
        truth = SAME if a.persona_id == b.persona_id else DIFFERENT
        cons_rows.append({"player": player, "truth": truth, "predicted": rec["predicted"]})
    cons_out = []
    for player in sorted({r["player"] for r in cons_rows}):
        rs = [r for r in cons_rows if r["player"] == player]
        t, p = [r["truth"] for r in rs], [r["predicted"] for r in rs]
        ba = float(balanced_accuracy_score(t, p)) if len(set(t)) > 1 else None
        cons_out.append({"player": player, "judgments": len(rs), "balanced_accuracy": ba})
    consistency_df = pd.DataFrame(cons_out, columns=["player", "judgments", "balanced_accuracy"])

    beh = []
    for (player, persona), group in _group(episodes):
        replies = sum(e.user_replies for e in group)
        left = [e.patience_left for e in group if e.patience_left is not None]
        frac = [
            e.patience_left / e.budget for e in group if e.patience_left is not None and e.budget
        ]
        beh.append(
            {
                "player": player,
                "persona": persona,
                "episodes": len(group),
                "user_replies": replies,
                "disclosures_per_reply": _rate(sum(e.disclosures for e in group), replies),
                "volunteer_rate": _rate(sum(e.volunteered for e in group), replies),
                "decline_rate": _rate(sum(e.declined for e in group), replies),
                "patience_left": sum(left) / len(left) if left else None,
                "patience_fraction_left": sum(frac) / len(frac) if frac else None,
            }
        )
    behaviour = pd.DataFrame(beh)

    side = []
    personas = sorted({e.persona_id for e in episodes})
    for persona in personas:
        for metric, frame, col in (
            ("identification_accuracy", identification, "accuracy"),
            ("disclosures_per_reply", behaviour, "disclosures_per_reply"),
            ("volunteer_rate", behaviour, "volunteer_rate"),
            ("decline_rate", behaviour, "decline_rate"),
            ("patience_left", behaviour, "patience_left"),
        ):
            row: dict[str, Any] = {"persona": persona, "metric": metric}
            for player in ("human", "simulator"):
                hit = (
                    frame[(frame["player"] == player) & (frame["persona"] == persona)]
                    if len(frame)
                    else frame
                )
                row[player] = (
                    None if hit.empty or pd.isna(hit[col].iloc[0]) else float(hit[col].iloc[0])
                )
            side.append(row)
    cats = sorted({*personas, *preds["human"], *preds["simulator"]}) or None
    return {
        "identification": identification,
        "consistency": consistency_df,
        "behaviour": behaviour,
        "side_by_side": pd.DataFrame(side, columns=["persona", "metric", "human", "simulator"]),
        "confusion_human": confusion_from(truths["human"], preds["human"], cats),
        "confusion_simulator": confusion_from(truths["simulator"], preds["simulator"], cats),
    }


def _group(
    episodes: Sequence[RealismEpisode],
) -> list[tuple[tuple[str, str], list[RealismEpisode]]]:
    groups: dict[tuple[str, str], list[RealismEpisode]] = {}
    for e in episodes:
        groups.setdefault((e.player, e.persona_id), []).append(e)
    return sorted(groups.items())


def study_realism_report(
    store: Store,
    study: str,
    episode_ids: Sequence[str],
    *,
    identifications: Iterable[Mapping[str, Any]] = (),
    consistency: Iterable[Mapping[str, Any]] = (),
) -> dict[str, pd.DataFrame]:
    """Realism report over stored episodes, with the study's human labels as judges.

    Extra judge records (e.g. GRIP's LLM or heuristic judges) are added to the human ones.
    """
    eps = [episode_facts(store, e) for e in episode_ids]
    return realism_report(
        eps,
        [*human_identifications(store, study), *identifications],
        [*human_consistency(store, study), *consistency],
    )
