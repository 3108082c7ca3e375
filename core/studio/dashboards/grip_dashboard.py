"""GRIP dashboard read models (pure functions over the store and GRIP frames).

The studio's ``pages/grip.py`` is layout only; everything it shows is computed in this package
from the per-episode GRIP frame (:func:`core.grip.grip_frame`). This module holds the data side:

* :func:`run_options` — the runs a researcher can pick (with their agent kind);
* :func:`load_frame` — the per-episode frame of some runs, memoised per store fingerprint in
  the store object's own memo (no module-level cache);
* :func:`with_realism` — the offline judges' Identification column and Consistency pairs;
* :func:`filter_frame` / :func:`facets` — the benchmark / method / persona / backbone filters.

The tables (:mod:`~core.studio.dashboards.grip_tables`), the heatmap and its drill-down
(:mod:`~core.studio.dashboards.grip_heatmap`) and the number format
(:mod:`~core.studio.dashboards.grip_format`) live beside it. Undefined metric values are NaN in
frames and ``"—"`` in every formatted output, never 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import pandas as pd

from core.grip import grip_frame
from core.grip.cache import resolve_runs
from core.grip.realism import role_realism, with_identification
from core.model.base import Strict
from core.model.cache import LockedLRU
from core.model.run import agent_of_spec_json, is_symbolic_agent
from core.store import Store
from core.studio.branches import branch_spec

OFFLINE_NOTE = (
    "Symbolic-agent numbers are an offline approximation: the method ladder runs as scripted "
    "policies acting on the literal request and the text of the user's replies, not as "
    "language models. Compare them with each other, not with LLM results."
)
"""The caption shown wherever numbers of symbolic agents appear."""

JUDGE_CHOICES: dict[str, str] = {
    "heuristic": "offline heuristic judges (an approximation)",
    "human": "human labels from annotation studies",
    "none": "none (Identification and Consistency need judges)",
}
"""Role-realism judges the dashboard can use, in the order offered, with their labels."""

HEURISTIC_BY_DEFAULT_UP_TO = 5000
"""The offline heuristic judges run by default for selections of at most this many episodes
(larger selections start with no judges and say so; LLM judges run from the CLI)."""


def default_judges(frame: pd.DataFrame) -> str:
    """``heuristic`` for a selection small enough to judge at once, else ``none``."""
    return "heuristic" if len(frame) <= HEURISTIC_BY_DEFAULT_UP_TO else "none"


FILTER_KEYS: tuple[str, ...] = ("benchmark", "method", "persona", "backbone")
"""Columns the dashboard filters on."""


# ---------------------------------------------------------------------------------- runs
class RunOption(Strict):
    """One run a researcher can select on the dashboard."""

    run_id: str
    name: str
    status: str
    total: int
    completed: int
    errors: int
    agent: str
    symbolic: bool
    created_at: str
    branch_of: str | None = None

    @property
    def is_branch(self) -> bool:
        """Whether this run is a branch forked from an episode (not a sweep)."""
        return self.branch_of is not None

    def label(self) -> str:
        """Selectbox label: name, agent and progress (branches say so)."""
        if self.branch_of is not None:
            return f"{self.name} · {self.agent} ({self.status})"
        return f"{self.name} · {self.agent} · {self.completed}/{self.total} ({self.status})"


def is_symbolic(agent: str) -> bool:
    """Whether an agent spec selects the offline symbolic policies."""
    return is_symbolic_agent(agent)


def run_options(store: Store) -> list[RunOption]:
    """Every run in the store, newest first, with its agent kind."""
    rows = store.conn.execute(
        "SELECT run_id, name, status, total, completed, errors, spec, created_at FROM runs "
        "ORDER BY created_at DESC, name"
    ).fetchall()
    out = []
    for run_id, name, status, total, completed, errors, spec, created in rows:
        agent = agent_of_spec_json(spec)
        branch = branch_spec(spec)
        out.append(
            RunOption(
                run_id=run_id,
                name=name,
                status=status,
                total=int(total),
                completed=int(completed),
                errors=int(errors),
                agent=agent,
                symbolic=is_symbolic(agent),
                created_at=created,
                branch_of=str(branch.get("parent_episode_id") or "") if branch else None,
            )
        )
    return out


def default_runs(options: Sequence[RunOption]) -> list[str]:
    """The run selected when none is asked for: the newest sweep (branches only if none)."""
    sweeps = [o.name for o in options if not o.is_branch]
    return sweeps[:1] or [o.name for o in options][:1]


# ---------------------------------------------------------------------------------- frame
def fingerprint(store: Store, run_ids: Sequence[str]) -> tuple[Any, ...]:
    """A cheap key that changes whenever an episode of ``run_ids`` ends.

    Ended episodes never un-end, so the count of ended episodes per run (plus the largest
    rowid among them, and the run row's update stamp) identifies the set; both come from the
    ``episodes_run`` covering index, so this stays a few milliseconds at 150k episodes.
    """
    if not run_ids:
        return ()
    ph = ",".join("?" * len(run_ids))
    rows = store.conn.execute(
        f"SELECT run_id, count(*), max(rowid) FROM episodes WHERE status='ended' "
        f"AND run_id IN ({ph}) GROUP BY run_id ORDER BY run_id",
        tuple(run_ids),
    ).fetchall()
    stamps = store.conn.execute(
        f"SELECT run_id, updated_at FROM runs WHERE run_id IN ({ph}) ORDER BY run_id",
        tuple(run_ids),
    ).fetchall()
    return tuple(tuple(r) for r in rows) + tuple(tuple(r) for r in stamps)


FRAME_MEMO = "grip_frame"
"""Name of the store-owned memo of :func:`load_frame` (see :func:`frame_memo`)."""

REALISM_MEMO = "grip_realism"
"""Name of the store-owned memo of :func:`with_realism` (see :func:`realism_memo`)."""


def frame_memo(store: Store) -> LockedLRU[Hashable, Any]:
    """The memo of :func:`load_frame` for ``store`` (owned by the store object, locked)."""
    return store.memo(FRAME_MEMO)


def realism_memo(store: Store) -> LockedLRU[Hashable, Any]:
    """The memo of :func:`with_realism` for ``store`` (owned by the store object, locked)."""
    return store.memo(REALISM_MEMO)


def load_frame(store: Store, runs: Sequence[str], *, memo: bool = True) -> pd.DataFrame:
    """The per-episode GRIP frame of ``runs`` (names or ids); records computed once.

    The result is memoised per (run ids, fingerprint) in the store object's own memo
    (:func:`frame_memo`): a warm call costs one aggregate query. Callers must not mutate the
    returned frame.

    Args:
        store: The store.
        runs: Run names or ids (empty → an empty frame).
        memo: Use the store's memo.

    Returns:
        One row per ended episode (columns of :class:`core.grip.EpisodeRecord`).
    """
    if not runs:
        return _empty_frame()
    run_ids = resolve_runs(store, runs)
    key = (tuple(run_ids), fingerprint(store, run_ids))
    if memo:
        hit = frame_memo(store).get(key)
        if hit is not None:
            return hit
    frame = grip_frame(store, run_ids)
    if memo:
        frame_memo(store).put(key, frame)
    return frame


def _empty_frame() -> pd.DataFrame:
    from core.grip.cache import normalise_frame
    from core.grip.record import RECORD_COLUMNS

    return normalise_frame(pd.DataFrame(columns=list(RECORD_COLUMNS)))


def with_realism(
    store: Store, frame: pd.DataFrame, judges: str | None, *, memo: bool = True
) -> tuple[Any, Any]:
    """Add the Identification column and Consistency pairs of offline judges.

    Call it on the unfiltered frame of the selected runs, then filter: the result is memoised
    per (runs, fingerprint, judges) in the store object's memo (:func:`realism_memo`), so
    filters never re-run the judges.

    Args:
        store: The store (heuristic judgments are written to it).
        frame: Per-episode frame.
        judges: ``None``, ``heuristic`` or ``human`` (LLM judges are for the CLI).
        memo: Use the store's memo.

    Returns:
        (frame with ``identification``, pairs frame or None).
    """
    if not judges or frame.empty:
        return frame, None
    run_ids = sorted(str(r) for r in frame["run_id"].dropna().unique())
    key = (tuple(run_ids), fingerprint(store, run_ids), len(frame), judges)
    if memo:
        hit = realism_memo(store).get(key)
        if hit is not None:
            return hit  # type: ignore[no-any-return]
    result = role_realism(store, frame, judges)
    out = (with_identification(frame, result.identification), result.pairs)
    if memo:
        realism_memo(store).put(key, out)
    return out


# ---------------------------------------------------------------------------------- filters
def facets(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The values present per filter key (sorted), for the filter widgets."""
    out: dict[str, list[str]] = {}
    for k in FILTER_KEYS:
        if k in frame.columns and not frame.empty:
            out[k] = sorted(str(v) for v in frame[k].dropna().unique())
        else:
            out[k] = []
    return out


def filter_frame(frame: pd.DataFrame, selected: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Keep the rows whose filter columns are in the selected values (empty = no filter)."""
    mask = pd.Series(True, index=frame.index)
    for k, values in selected.items():
        if not values:
            continue
        if k not in FILTER_KEYS:
            raise KeyError(k)
        mask &= frame[k].astype(str).isin([str(v) for v in values])
    return frame[mask]
