"""Role-realism: sampling episodes and pairs, running judges, storing and reading judgments.

Identification: judges pick which persona wrote an episode's user turns (eligible = scored
episodes with ≥ 2 user turns); per episode the value is the mean over judges of "correct".
Consistency: judges say SAME / DIFFERENT for constructed pairs of episodes of one run that
share benchmark, method, backbone and seed (coin 0.5 for a same-persona partner).

Raw judgments go to the store's ``judgments`` table (``run_id`` = the episodes' run).
LLM judgments are never asked twice; the heuristic's are recomputed per run (cross-fitted
over the run's eligible episodes) and replace the previous ones.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from core.errors import ConfigError
from core.grip.judges.base import (
    INVALID,
    JUDGE_ERROR,
    SAME,
    Judgment,
    PersonaCard,
    RoleJudge,
    UserTurn,
    persona_cards,
)
from core.grip.judges.heuristic import HEURISTIC_NAME, cross_fit
from core.grip.metrics import SAME_RATE_BOUNDS, balanced_accuracy
from core.llm.ledger import CostLedger, split_view
from core.store import Store, utcnow

PAIR_SEED = 20260811
"""Seed of sampling and pair construction."""

PAIR_KEYS = ("benchmark", "method", "backbone", "seed")
"""Both episodes of a pair agree on these (and belong to one run)."""

HUMAN = "human"


@dataclass
class RealismResult:
    """What the role-realism step hands to the report."""

    identification: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["episode_id", "judge", "value", "correct"])
    )
    pairs: pd.DataFrame | None = None
    summary: dict[str, Any] = field(default_factory=dict)


def eligible(frame: pd.DataFrame) -> pd.DataFrame:
    """Scored episodes with at least two user turns."""
    return frame[frame["scored"].astype(bool) & (frame["n_user_turns"] >= 2)]


def load_user_turns(store: Store, episode_ids: Sequence[str]) -> dict[str, list[UserTurn]]:
    """User turns of each episode (non-mute ``user_reply`` events, in order)."""
    out: dict[str, list[UserTurn]] = {e: [] for e in episode_ids}
    conn = store.conn
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS grip_turns (episode_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.grip_turns")
    conn.executemany("INSERT OR IGNORE INTO temp.grip_turns VALUES (?)", ((e,) for e in out))
    rows = conn.execute(
        "SELECT e.episode_id, e.body FROM temp.grip_turns t JOIN events e "
        "ON e.episode_id=t.episode_id WHERE e.kind='user_reply' ORDER BY e.episode_id, e.seq"
    ).fetchall()
    conn.execute("DELETE FROM temp.grip_turns")
    for eid, body in rows:
        ev = json.loads(body)
        if ev.get("reply_kind") != "mute":
            out[eid].append(UserTurn.from_event(ev))
    return out


def sample_episodes(frame: pd.DataFrame, per_cell: int | None, seed: int = PAIR_SEED) -> list[str]:
    """Eligible episodes to judge: up to ``per_cell`` per run × cell (None = all)."""
    el = eligible(frame).sort_values("episode_id")
    if per_cell is None:
        return list(el["episode_id"])
    out: list[str] = []
    keys = ["run_id", "benchmark", "method", "persona", "backbone", "seed"]
    for gkey, g in el.groupby(keys, sort=True, dropna=False):
        ids = list(g["episode_id"])
        rng = random.Random(f"{seed}:{gkey}")
        out.extend(sorted(rng.sample(ids, min(per_cell, len(ids)))))
    return out


def construct_pairs(
    frame: pd.DataFrame, n_pairs: int = 100, seed: int = PAIR_SEED
) -> list[tuple[str, str]]:
    """Up to ``n_pairs`` pairs per run (coin 0.5: same persona or different).

    Returns:
        (a, b) episode ids; none when a run has a single persona.
    """
    el = eligible(frame).sort_values("episode_id")
    out: list[tuple[str, str]] = []
    for run_id, run in el.groupby("run_id", sort=True, dropna=False):
        if run["persona"].nunique() < 2:
            continue
        rng = random.Random(f"{seed}:{run_id}")
        groups = {k: g for k, g in run.groupby(list(PAIR_KEYS), sort=True, dropna=False)}
        ids = list(run["episode_id"])
        info = run.set_index("episode_id")
        seen: set[tuple[str, str]] = set()
        attempts = 0
        while len(seen) < n_pairs and attempts < n_pairs * 20:
            attempts += 1
            a = rng.choice(ids)
            row = info.loc[a]
            g = groups[tuple(row[k] for k in PAIR_KEYS)]
            want_same = rng.random() < 0.5
            same = g[(g["persona"] == row["persona"]) & (g["episode_id"] != a)]
            diff = g[g["persona"] != row["persona"]]
            pool = same if want_same else diff
            if pool.empty:
                pool = diff if want_same else same
            if pool.empty:
                continue
            b = rng.choice(sorted(pool["episode_id"]))
            key = (a, b) if a < b else (b, a)
            if key in seen:
                continue
            seen.add(key)
            out.append((a, b))
    return out


def _existing(store: Store, judge: str, task: str, run_ids: Sequence[str]) -> set[str]:
    rows = store.conn.execute(
        f"SELECT target_id FROM judgments WHERE judge=? AND task=? AND run_id IN "
        f"({','.join('?' * len(run_ids))})",
        (judge, task, *run_ids),
    ).fetchall()
    return {r[0] for r in rows}


def store_judgments(
    store: Store, judgments: Sequence[Judgment], run_of: Mapping[str, str | None]
) -> None:
    """Insert raw judgments next to their run (one transaction)."""
    if not judgments:
        return
    now = utcnow()
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO judgments(run_id, judge, task, target_id, value, raw, created_at) "
            "VALUES (?,?,?,?,?,?,?)",
            [
                (
                    run_of.get(j.target_id.split("|")[0]),
                    j.judge,
                    j.task,
                    j.target_id,
                    json.dumps(j.value),
                    j.raw,
                    now,
                )
                for j in judgments
            ],
        )


def run_judges(
    store: Store,
    frame: pd.DataFrame,
    judges: Sequence[RoleJudge],
    cards: Sequence[PersonaCard],
    *,
    per_cell: int | None = 20,
    n_pairs: int = 100,
    seed: int = PAIR_SEED,
    fresh: bool = False,
) -> dict[str, int]:
    """Ask every judge about the sampled episodes and pairs it has not judged yet.

    Failed calls (value ``error``) are never stored, so the next report asks again; their
    number per judge is returned. ``fresh`` (``--no-cache``) asks again about everything.
    """
    run_of = dict(zip(frame["episode_id"], frame["run_id"], strict=True))
    run_ids = sorted({str(r) for r in frame["run_id"].dropna()})
    targets = sample_episodes(frame, per_cell, seed)
    pairs = construct_pairs(frame, n_pairs, seed)
    turns = load_user_turns(store, sorted(set(targets) | {e for p in pairs for e in p}))
    errors: dict[str, int] = {}

    def keep(judgments: Sequence[Judgment]) -> list[Judgment]:
        ok = [j for j in judgments if j.value != JUDGE_ERROR]
        failed = len(judgments) - len(ok)
        if failed:
            errors[judges_name] = errors.get(judges_name, 0) + failed
        return ok

    for judge in judges:
        judges_name = judge.name
        done = set() if fresh else _existing(store, judge.name, "identification", run_ids)
        todo = [(e, turns[e]) for e in targets if e not in done]
        store_judgments(store, keep(judge.identify(todo, cards)), run_of)
        done = set() if fresh else _existing(store, judge.name, "consistency", run_ids)
        ptodo = [(f"{a}|{b}", turns[a], turns[b]) for a, b in pairs if f"{a}|{b}" not in done]
        store_judgments(store, keep(judge.compare(ptodo)), run_of)
    return errors


def run_heuristic(
    store: Store, frame: pd.DataFrame, *, n_pairs: int = 100, seed: int = PAIR_SEED
) -> dict[str, Any]:
    """Cross-fit the heuristic judge per run; replace its stored judgments.

    Returns:
        Held-out accuracy per run (``{"run": {"n", "accuracy"}}``).
    """
    report: dict[str, Any] = {}
    for run_id, run in eligible(frame).groupby("run_id", sort=True):
        run = run.sort_values("episode_id")
        ids = list(run["episode_id"])
        turns = load_user_turns(store, ids)
        preds = cross_fit(
            [turns[e] for e in ids], list(run["persona"]), list(run["sample_id"]), seed=0
        )
        pred = {e: p for e, p in zip(ids, preds, strict=True) if p is not None}
        judged = [e for e in ids if e in pred]
        truth = dict(zip(run["episode_id"], run["persona"], strict=True))
        acc = sum(pred[e] == truth[e] for e in judged) / len(judged) if judged else None
        report[str(run_id)] = {"n": len(judged), "accuracy": acc}
        js = [
            Judgment(HEURISTIC_NAME, "identification", e, pred[e], "cross-fitted") for e in judged
        ]
        for a, b in construct_pairs(run, n_pairs, seed):
            if a in pred and b in pred:
                value = SAME if pred[a] == pred[b] else "DIFFERENT"
                js.append(Judgment(HEURISTIC_NAME, "consistency", f"{a}|{b}", value, ""))
        with store.transaction() as conn:
            conn.execute(
                "DELETE FROM judgments WHERE judge=? AND run_id=?", (HEURISTIC_NAME, run_id)
            )
        store_judgments(store, js, {e: str(run_id) for e in ids})
    return report


def read_judgments(
    store: Store, run_ids: Sequence[str], judge_names: Sequence[str] | None
) -> pd.DataFrame:
    """Stored judgments of ``run_ids`` (optionally only of ``judge_names``)."""
    sql = (
        "SELECT judge, task, target_id, value FROM judgments WHERE run_id IN "
        f"({','.join('?' * len(run_ids))})"
    )
    args: list[Any] = list(run_ids)
    if judge_names is not None:
        sql += f" AND judge IN ({','.join('?' * len(judge_names))})"
        args += list(judge_names)
    rows = store.conn.execute(sql + " ORDER BY judgment_id", args).fetchall()
    recs = [(j, t, tid, _decode(v)) for j, t, tid, v in rows]
    df = pd.DataFrame(recs, columns=["judge", "task", "target_id", "value"])
    # a target judged twice by one judge: the latest judgment counts
    return df.drop_duplicates(["judge", "task", "target_id"], keep="last")


def read_human_labels(store: Store, episode_ids: Sequence[str]) -> pd.DataFrame:
    """Human labels from annotation studies, as judgments of judge ``human:<annotator>``.

    ``label_kind='persona_id'`` (target = episode id) is Identification;
    ``label_kind='same_persona'`` (target = ``"a|b"``; value a bool or SAME/DIFFERENT) is
    Consistency.
    """
    wanted = set(episode_ids)
    rows = store.conn.execute(
        "SELECT annotator, label_kind, target_id, value FROM annotations "
        "WHERE label_kind IN ('persona_id', 'same_persona') ORDER BY annotation_id"
    ).fetchall()
    recs = []
    for annotator, kind, target, value in rows:
        v = _decode(value)
        if kind == "persona_id" and target in wanted:
            recs.append((f"{HUMAN}:{annotator}", "identification", target, str(v)))
        elif kind == "same_persona" and set(str(target).split("|")) <= wanted:
            same = v if isinstance(v, bool) else str(v).strip().upper() == SAME
            recs.append(
                (f"{HUMAN}:{annotator}", "consistency", target, SAME if same else "DIFFERENT")
            )
    df = pd.DataFrame(recs, columns=["judge", "task", "target_id", "value"])
    return df.drop_duplicates(["judge", "task", "target_id"], keep="last")


def _decode(value: Any) -> Any:
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def summarise(
    judgments: pd.DataFrame, frame: pd.DataFrame, keys: Sequence[str] = ("persona",)
) -> tuple[pd.DataFrame, pd.DataFrame | None, dict[str, Any]]:
    """Turn judgments into the per-episode Identification rows and the Consistency pairs.

    An *invalid* answer (no card letter, neither SAME nor DIFFERENT) is the judge's failure,
    never a wrong label: it is excluded from Identification, agreement and Consistency and
    counted per judge in ``judge_invalid`` (``grip`` exits 1 on it unless
    ``--allow-judge-errors``).
    """
    persona = dict(zip(frame["episode_id"], frame["persona"], strict=True))
    bad = judgments["value"].map(lambda v: v == INVALID or v == JUDGE_ERROR)
    invalid = {str(k): int(v) for k, v in judgments[bad].groupby("judge").size().items()}
    judgments = judgments[~bad]
    ident = judgments[
        (judgments["task"] == "identification") & judgments["target_id"].isin(persona)
    ].copy()
    ident = ident.rename(columns={"target_id": "episode_id"})
    ident["correct"] = [
        float(v == persona[e]) for e, v in zip(ident["episode_id"], ident["value"], strict=True)
    ]
    summary: dict[str, Any] = {"judges": _identification_summary(ident, persona)}
    if invalid:  # reports without invalid answers keep their shape (golden files)
        summary["judge_invalid"] = invalid
        summary["judge_invalid_total"] = sum(invalid.values())
    wide = ident.pivot_table(index="episode_id", columns="judge", values="value", aggfunc="last")
    if wide.shape[1] >= 2:
        both = wide.dropna()
        if len(both):
            summary["identification_agreement"] = float((both.nunique(axis=1) == 1).mean())
    pairs = _consistency_pairs(judgments[judgments["task"] == "consistency"], frame)
    if pairs is not None:
        _consistency_summary(pairs, summary["judges"])
    return ident, pairs, summary


def _identification_summary(ident: pd.DataFrame, persona: dict[str, str]) -> dict[str, Any]:
    """Per judge: how many episodes it identified, its accuracy, overall and per persona."""
    out: dict[str, Any] = {}
    for judge, g in ident.groupby("judge", sort=True):
        per_persona = {
            str(p): float(gg["correct"].mean())
            for p, gg in g.assign(p=g["episode_id"].map(persona)).groupby("p", sort=True)
        }
        out[str(judge)] = {
            "identification_n": len(g),
            "identification_accuracy": float(g["correct"].mean()),
            "per_persona": per_persona,
        }
    return out


def _consistency_pairs(pj: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame | None:
    """One row per judged pair whose episodes are both in ``frame`` (None without any)."""
    if pj.empty:
        return None
    info = frame.set_index("episode_id")
    recs = []
    for judge, target, value in zip(pj["judge"], pj["target_id"], pj["value"], strict=True):
        a, _, b = str(target).partition("|")
        if a not in info.index or b not in info.index:
            continue
        ra, rb = info.loc[a], info.loc[b]
        rec: dict[str, Any] = {
            "judge": judge,
            "a": a,
            "b": b,
            "seed": ra["seed"],
            "truth_same": bool(ra["persona"] == rb["persona"]),
            "said_same": value == SAME,
        }
        for k in ("benchmark", "method", "persona", "backbone", "user_voice", "k", "run_id"):
            rec[f"{k}_a"] = ra[k]
            rec[f"{k}_b"] = rb[k]
        recs.append(rec)
    pairs = pd.DataFrame(recs)
    return None if pairs.empty else pairs


def _consistency_summary(pairs: pd.DataFrame, judges: dict[str, Any]) -> None:
    """Add each judge's SAME rate, validity, pair count and balanced accuracy."""
    for judge, g in pairs.groupby("judge", sort=True):
        rate = float(g["said_same"].mean())
        s = judges.setdefault(str(judge), {})
        s["same_rate"] = rate
        s["consistency_valid"] = SAME_RATE_BOUNDS[0] <= rate <= SAME_RATE_BOUNDS[1]
        s["consistency_n"] = len(g)
        s["balanced_accuracy"] = balanced_accuracy(list(g["truth_same"]), list(g["said_same"]))


def role_realism(
    store: Store,
    frame: pd.DataFrame,
    judges: str | None,
    *,
    per_cell: int | None = 20,
    n_pairs: int = 100,
    seed: int = PAIR_SEED,
    llm_judges: Sequence[RoleJudge] | None = None,
    fresh: bool = False,
) -> RealismResult:
    """Run (or read) the selected judges and return Identification rows and pairs.

    Args:
        store: The store (judgments are written to it).
        frame: Per-episode records of the report.
        judges: ``None`` (no role-realism), ``heuristic``, ``human`` or ``MODEL_A,MODEL_B``.
        per_cell: LLM judges: episodes per run × cell to judge (None = all).
        n_pairs: Pairs per run.
        seed: Sampling seed.
        llm_judges: Pre-built judges (tests); default built from ``judges``.
        fresh: Ask the LLM judges again even about what they judged before (``--no-cache``).

    Returns:
        The per-episode Identification judgments, the Consistency pairs and a summary.
    """
    if not judges or frame.empty:
        return RealismResult()
    run_ids = sorted({str(r) for r in frame["run_id"].dropna()})
    spec = judges.strip()
    names: list[str]
    extra: dict[str, Any] = {}
    if spec == HEURISTIC_NAME:
        extra["held_out"] = run_heuristic(store, frame, n_pairs=n_pairs, seed=seed)
        names = [HEURISTIC_NAME]
        jdf = read_judgments(store, run_ids, names)
    elif spec == HUMAN:
        jdf = read_human_labels(store, list(frame["episode_id"]))
    else:
        from core.grip.judges.llm import llm_pair
        from core.protocol.personas import load_personas

        built = list(llm_judges) if llm_judges is not None else llm_pair(spec, store.path)
        if len(built) != 2:
            raise ConfigError("role-realism needs two LLM judges", field="--judges")
        cards = persona_cards(load_personas())
        errors = run_judges(
            store, frame, built, cards, per_cell=per_cell, n_pairs=n_pairs, seed=seed, fresh=fresh
        )
        extra["judge_errors"] = errors
        extra["judge_errors_total"] = sum(errors.values())
        ledgers = [getattr(j, "client", None) for j in built]
        cost = CostLedger()
        for client in ledgers:
            book = getattr(client, "ledger", None)  # judges' clients: any ChatModel
            if isinstance(book, CostLedger):
                cost.merge(book)
        if cost:
            extra["cost_by_role"] = split_view(cost.to_dict())
        names = [j.name for j in built]
        jdf = read_judgments(store, run_ids, names)
    ident, pairs, summary = summarise(jdf, frame)
    summary.update(extra)
    summary["source"] = spec
    return RealismResult(identification=ident, pairs=pairs, summary=summary)


def with_identification(frame: pd.DataFrame, ident: pd.DataFrame) -> pd.DataFrame:
    """Add the per-episode ``identification`` column (mean correctness over judges)."""
    if ident.empty:
        return frame.assign(identification=float("nan"))
    per = ident.groupby("episode_id")["correct"].mean()
    return frame.assign(identification=frame["episode_id"].map(per).astype(float))
