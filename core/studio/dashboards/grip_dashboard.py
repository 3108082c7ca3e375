"""GRIP dashboard read models (pure functions over the store and GRIP frames).

The studio's ``pages/grip.py`` is layout only; everything it shows is computed here from the
per-episode GRIP frame (:func:`core.grip.grip_frame`):

* :func:`run_options` — the runs a researcher can pick (with their agent kind);
* :func:`load_frame` — the per-episode frame of some runs, memoised per store fingerprint;
* :func:`filter_frame` / :func:`facets` — the benchmark / method / persona / backbone filters;
* :func:`table2` — the Table-2-shaped grid (mean ± sd over seeds, best per benchmark in bold);
* :func:`delta_table` — paired method deltas with bootstrap 95 % intervals, formatted;
* :func:`heatmap_cells` / :func:`cell_from_point` / :func:`cell_episodes` — the persona ranking
  heatmap and its drill-down to the episodes behind one cell;
* :func:`report_downloads` — the CLI-shaped GRIP report (JSON and CSV) of what is shown.

Undefined metric values are NaN in frames and ``"—"`` in every formatted output, never 0.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from core.grip import grip_frame, paired_deltas
from core.grip.cache import resolve_runs
from core.grip.figures import persona_heatmap
from core.grip.metrics import EPISODE_METRICS, METRIC_BY_NAME, METRIC_NAMES, aggregate
from core.grip.realism import role_realism, with_identification
from core.grip.report import GripReport, cells_json, metric_definitions, report_csv
from core.model.base import Strict
from core.model.run import METHODS, OFFLINE_AGENT, PERSONAS
from core.store import Store

UNDEFINED = "—"
"""How an undefined metric value is shown (never 0)."""

OFFLINE_NOTE = (
    "Symbolic-agent numbers are an offline approximation: the method ladder runs as scripted "
    "policies acting on the literal request and the user's structured disclosures, not as "
    "language models. Compare them with each other, not with LLM results."
)
"""The caption shown wherever numbers of symbolic agents appear."""

FILTER_KEYS: tuple[str, ...] = ("benchmark", "method", "persona", "backbone")
"""Columns the dashboard filters on."""

INSPECT_PATH = "inspect"
"""URL path of the episode inspector page."""

_COLUMN_OF = {m.name: m.column for m in EPISODE_METRICS}


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

    def label(self) -> str:
        """Selectbox label: name, agent and progress."""
        return f"{self.name} · {self.agent} · {self.completed}/{self.total} ({self.status})"


def _agent_of(spec_json: str) -> str:
    try:
        spec = json.loads(spec_json)
    except ValueError:
        return "?"
    return str(spec.get("agent") or OFFLINE_AGENT) if isinstance(spec, dict) else "?"


def is_symbolic(agent: str) -> bool:
    """Whether an agent spec selects the offline symbolic policies."""
    return agent.strip().lower() in {OFFLINE_AGENT, "heuristic", "template"}


def run_options(store: Store) -> list[RunOption]:
    """Every run in the store, newest first, with its agent kind."""
    rows = store.conn.execute(
        "SELECT run_id, name, status, total, completed, errors, spec, created_at FROM runs "
        "ORDER BY created_at DESC, name"
    ).fetchall()
    out = []
    for run_id, name, status, total, completed, errors, spec, created in rows:
        agent = _agent_of(spec)
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
            )
        )
    return out


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


class _FrameMemo:
    """A small, thread-safe LRU of per-episode frames keyed by store, runs and fingerprint."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._data: OrderedDict[tuple[Any, ...], pd.DataFrame] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> pd.DataFrame | None:
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
            return hit

    def put(self, key: tuple[Any, ...], frame: pd.DataFrame) -> None:
        with self._lock:
            self._data[key] = frame
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


FRAME_MEMO = _FrameMemo()
"""Process-wide memo of :func:`load_frame` (read-only frames; shared by sessions)."""


def load_frame(store: Store, runs: Sequence[str], *, memo: bool = True) -> pd.DataFrame:
    """The per-episode GRIP frame of ``runs`` (names or ids); records computed once.

    The result is memoised per (store file, run ids, fingerprint): a warm call costs one
    aggregate query. Callers must not mutate the returned frame.

    Args:
        store: The store.
        runs: Run names or ids (empty → an empty frame).
        memo: Use the process-wide memo.

    Returns:
        One row per ended episode (columns of :class:`core.grip.EpisodeRecord`).
    """
    if not runs:
        return _empty_frame()
    run_ids = resolve_runs(store, runs)
    key = (str(store.path), tuple(run_ids), fingerprint(store, run_ids))
    if memo:
        hit = FRAME_MEMO.get(key)
        if hit is not None:
            return hit
    frame = grip_frame(store, run_ids)
    if memo:
        FRAME_MEMO.put(key, frame)
    return frame


def _empty_frame() -> pd.DataFrame:
    from core.grip.cache import normalise_frame
    from core.grip.record import RECORD_COLUMNS

    return normalise_frame(pd.DataFrame(columns=list(RECORD_COLUMNS)))


REALISM_MEMO: OrderedDict[tuple[Any, ...], tuple[Any, Any]] = OrderedDict()
"""Memo of :func:`with_realism` (judging re-fits the heuristic judge: seconds, not ms)."""
_REALISM_LOCK = threading.Lock()


def with_realism(
    store: Store, frame: pd.DataFrame, judges: str | None, *, memo: bool = True
) -> tuple[Any, Any]:
    """Add the Identification column and Consistency pairs of offline judges.

    Call it on the unfiltered frame of the selected runs, then filter: the result is memoised
    per (store, runs, fingerprint, judges), so filters never re-run the judges.

    Args:
        store: The store (heuristic judgments are written to it).
        frame: Per-episode frame.
        judges: ``None``, ``heuristic`` or ``human`` (LLM judges are for the CLI).
        memo: Use the process-wide memo.

    Returns:
        (frame with ``identification``, pairs frame or None).
    """
    if not judges or frame.empty:
        return frame, None
    run_ids = sorted(str(r) for r in frame["run_id"].dropna().unique())
    key = (str(store.path), tuple(run_ids), fingerprint(store, run_ids), len(frame), judges)
    if memo:
        with _REALISM_LOCK:
            hit = REALISM_MEMO.get(key)
        if hit is not None:
            return hit
    result = role_realism(store, frame, judges)
    out = (with_identification(frame, result.identification), result.pairs)
    if memo:
        with _REALISM_LOCK:
            REALISM_MEMO[key] = out
            while len(REALISM_MEMO) > 8:
                REALISM_MEMO.popitem(last=False)
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


# ---------------------------------------------------------------------------------- formatting
def scale_of(metric: str) -> float:
    """Display scale: rates ×100; Patience (budget units) and Reaction (turns) raw."""
    unit = METRIC_BY_NAME[metric].unit
    return 1.0 if unit in ("budget", "turns") else 100.0


def fmt(metric: str, value: Any, sd: Any = None) -> str:
    """Format one metric value (``mean ± sd``); undefined → "—", never 0."""
    v = _num(value)
    if v is None:
        return UNDEFINED
    s = scale_of(metric)
    text = f"{v * s:.2f}"
    d = _num(sd)
    if d is not None:
        text += f" ± {d * s:.2f}"
    return text


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if np.isnan(f) else f


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~:$=")


def md_escape(text: str) -> str:
    """Escape Markdown punctuation so stored text renders inert in a Markdown cell."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text))


# ---------------------------------------------------------------------------------- Table 2
@dataclass(frozen=True)
class Table2:
    """The Table-2-shaped grid.

    Attributes:
        display: Rows = cells (``keys`` columns escaped), one column per metric; each value is
            ``mean ± sd`` (×100 for rates), ``**bold**`` where it is the best of its
            benchmark block, ``"—"`` where undefined.
        best: Same shape as the metric columns: True where bold.
        cells: The long aggregated frame behind it.
        keys: The row keys.
        metrics: The metric columns, in order.
    """

    display: pd.DataFrame
    best: pd.DataFrame
    cells: pd.DataFrame
    keys: tuple[str, ...]
    metrics: tuple[str, ...]


def table2(
    frame: pd.DataFrame,
    keys: Sequence[str] = ("benchmark", "method"),
    metrics: Sequence[str] = METRIC_NAMES,
    *,
    pairs: pd.DataFrame | None = None,
) -> Table2:
    """Build the grid: one row per cell, metrics as columns, the best per benchmark in bold.

    "Best" compares rows of the same benchmark (all rows when ``benchmark`` is not a key),
    honours each metric's direction (Staleness and Reaction: lower is better), ignores
    undefined values and marks ties; a block with a single defined value gets no bold.

    Args:
        frame: Per-episode frame (already filtered).
        keys: Row keys (a subset of the groupable columns).
        metrics: Metric columns.
        pairs: Consistency pairs (role-realism judges), if any.

    Returns:
        The :class:`Table2`.
    """
    keys = tuple(keys)
    metrics = tuple(metrics)
    cells = aggregate(frame, keys, pairs=pairs)
    if cells.empty:
        empty = pd.DataFrame(columns=[*keys, *metrics])
        return Table2(empty, pd.DataFrame(columns=list(metrics)), cells, keys, metrics)
    cells = cells[cells["metric"].isin(metrics)]
    value = cells.pivot_table(
        index=list(keys), columns="metric", values="value", dropna=False, aggfunc="first"
    )
    sd = cells.pivot_table(
        index=list(keys), columns="metric", values="sd", dropna=False, aggfunc="first"
    )
    value = value.reindex(index=_ladder_order(value.index, keys), columns=list(metrics))
    sd = sd.reindex(index=value.index, columns=list(metrics))
    best = pd.DataFrame(False, index=value.index, columns=list(metrics))
    block = (
        value.index.get_level_values("benchmark")
        if "benchmark" in keys
        else pd.Index(["*"] * len(value))
    )
    for m in metrics:
        hib = METRIC_BY_NAME[m].higher_is_better
        col = value[m]
        for b in pd.unique(block):
            sel = col[block == b].dropna()
            if len(sel) < 2 or np.ptp(sel.to_numpy(dtype=float)) == 0:
                continue
            target = sel.max() if hib else sel.min()
            winners = sel.index[np.isclose(sel.to_numpy(dtype=float), target)]
            best.loc[winners, m] = True
    disp_rows = []
    for idx in value.index:
        parts = idx if isinstance(idx, tuple) else (idx,)
        row: dict[str, Any] = {k: md_escape(str(v)) for k, v in zip(keys, parts, strict=True)}
        for m in metrics:
            text = fmt(m, value.at[idx, m], sd.at[idx, m])
            row[m] = f"**{text}**" if bool(best.at[idx, m]) else text
        disp_rows.append(row)
    display = pd.DataFrame(disp_rows, columns=[*keys, *metrics])
    return Table2(display, best.reset_index(drop=True), cells, keys, metrics)


def _ladder_order(index: pd.Index, keys: Sequence[str]) -> pd.Index:
    """Sort cell rows by benchmark, then methods in ladder order and personas in file order."""
    rank = {
        "method": {m: i for i, m in enumerate(METHODS)},
        "persona": {p: i for i, p in enumerate(PERSONAS)},
    }

    def key(idx: Any) -> tuple[Any, ...]:
        parts = idx if isinstance(idx, tuple) else (idx,)
        out: list[Any] = []
        for k, v in zip(keys, parts, strict=True):
            r = rank.get(k, {})
            out.append((r.get(str(v), len(r)), str(v)))
        return tuple(out)

    return (
        pd.Index(sorted(index, key=key), name=index.name)
        if len(keys) == 1
        else (pd.MultiIndex.from_tuples(sorted(index, key=key), names=index.names))
    )


# ---------------------------------------------------------------------------------- deltas
def delta_table(
    frame: pd.DataFrame,
    method_a: str,
    method_b: str,
    *,
    metrics: Sequence[str] = ("Success", "Earned", "Aim", "Recovery", "Patience"),
    by: Sequence[str] = ("benchmark",),
    n_boot: int = 2000,
) -> pd.DataFrame:
    """Paired deltas (``method_b − method_a`` on the same samples) with 95 % intervals.

    Returns:
        ``by`` columns plus ``metric, pairs, A, B, Δ, 95% CI`` as display strings (rates ×100,
        undefined "—").
    """
    raw = paired_deltas(
        frame, method_a, method_b, metrics=tuple(metrics), by=tuple(by), n_boot=n_boot
    )
    cols = [*by, "metric", "pairs", method_a, method_b, "Δ", "95% CI"]
    if raw.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for r in raw.to_dict("records"):
        m = str(r["metric"])
        s = scale_of(m)
        lo, hi = _num(r["ci_low"]), _num(r["ci_high"])
        d = _num(r["delta"])
        rows.append(
            {
                **{k: r[k] for k in by},
                "metric": m,
                "pairs": int(r["n_pairs"]),
                method_a: fmt(m, r["mean_a"]),
                method_b: fmt(m, r["mean_b"]),
                "Δ": UNDEFINED if d is None else f"{d * s:+.2f}",
                "95% CI": (
                    UNDEFINED if lo is None or hi is None else f"[{lo * s:+.2f}, {hi * s:+.2f}]"
                ),
            }
        )
    return pd.DataFrame(rows, columns=cols)


# ---------------------------------------------------------------------------------- figures
def figure_frame(name: str, frame: pd.DataFrame, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One of the paper's figure frames by name (only that one is computed).

    Names: ``success_by_backbone``, ``persona_fans``, ``a0_to_a3``, ``earned_vs_inferred``,
    ``reaction_by_faults``, ``patience_by_shifts``.

    Raises:
        KeyError: On an unknown name.
    """
    from core.grip import figures

    if frame.empty:
        return pd.DataFrame()
    builders: dict[str, Any] = {
        "success_by_backbone": figures.success_by_backbone,
        "persona_fans": lambda f: figures.persona_fans(f, pairs),
        "a0_to_a3": figures.method_change,
        "earned_vs_inferred": figures.earned_vs_inferred,
        "reaction_by_faults": figures.reaction_by_faults,
        "patience_by_shifts": figures.patience_by_shifts,
    }
    out: pd.DataFrame = builders[name](frame)
    return out


# ---------------------------------------------------------------------------------- heatmap
HEATMAP_METRICS: tuple[str, ...] = tuple(m for m in METRIC_NAMES if m != "Score")
"""Metrics on the persona ranking heatmap."""


def heatmap_cells(
    frame: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Persona ranking per benchmark × metric, ready to plot and to click.

    Returns:
        Columns ``benchmark, metric, persona, value, rank, column, text, n``: ``column`` is the
        x label (``"<benchmark> · <metric>"``), ``text`` the formatted value ("—" when
        undefined) and ``n`` the episodes in the metric's denominator.
    """
    cols = ["benchmark", "metric", "persona", "value", "rank", "column", "text", "n"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    names = list(metrics) if metrics else list(HEATMAP_METRICS)
    heat = persona_heatmap(frame, metrics=names, pairs=pairs)
    if heat.empty:
        return pd.DataFrame(columns=cols)
    heat = heat.copy()
    order = {m: i for i, m in enumerate(names)}
    heat["_o"] = heat["metric"].map(order)
    heat = heat.sort_values(["benchmark", "_o", "persona"]).drop(columns="_o")
    heat["column"] = heat["benchmark"].astype(str) + " · " + heat["metric"].astype(str)
    heat["text"] = [fmt(m, v) for m, v in zip(heat["metric"], heat["value"], strict=True)]
    cols_of = {m: _COLUMN_OF[m] for m in names if _COLUMN_OF.get(m) in frame.columns}
    defined = frame[list(cols_of.values())].notna()
    defined[["benchmark", "persona"]] = frame[["benchmark", "persona"]]
    per = defined.groupby(["benchmark", "persona"], sort=False).sum()
    sizes = frame.groupby(["benchmark", "persona"], sort=False).size()
    counts = []
    for b, m, p in zip(heat["benchmark"], heat["metric"], heat["persona"], strict=True):
        col = cols_of.get(str(m))
        counts.append(int(per.at[(b, p), col]) if col is not None else int(sizes.get((b, p), 0)))
    heat["n"] = counts
    return heat[cols].reset_index(drop=True)


class Cell(Strict):
    """One heatmap cell: a benchmark, a metric and a persona."""

    benchmark: str
    metric: str
    persona: str


def cell_from_point(point: Mapping[str, Any], heat: pd.DataFrame) -> Cell | None:
    """Map a plotly selection point back to its heatmap cell.

    Uses the point's ``customdata`` (``[benchmark, metric, persona]``) when present, else its
    ``x`` (column label) and ``y`` (persona).
    """
    cd = point.get("customdata")
    if isinstance(cd, (list, tuple)) and len(cd) >= 3:
        return Cell(benchmark=str(cd[0]), metric=str(cd[1]), persona=str(cd[2]))
    x, y = point.get("x"), point.get("y")
    if x is None or y is None or heat.empty:
        return None
    hit = heat[(heat["column"] == x) & (heat["persona"] == y)]
    if hit.empty:
        return None
    r = hit.iloc[0]
    return Cell(benchmark=str(r["benchmark"]), metric=str(r["metric"]), persona=str(r["persona"]))


def selected_cell(selection: Any, heat: pd.DataFrame) -> Cell | None:
    """The first selected point of a ``st.plotly_chart(on_select=...)`` state, as a cell."""
    if selection is None:
        return None
    sel = selection.get("selection") if isinstance(selection, Mapping) else None
    if sel is None:
        sel = getattr(selection, "selection", None)
    if sel is None:
        return None
    points = sel.get("points") if isinstance(sel, Mapping) else getattr(sel, "points", None)
    for p in points or []:
        cell = cell_from_point(p, heat)
        if cell is not None:
            return cell
    return None


EPISODE_COLUMNS: tuple[str, ...] = (
    "episode_id",
    "method",
    "backbone",
    "seed",
    "sample_id",
    "outcome",
    "bucket",
    "value",
    "inspect",
)


def inspect_link(episode_id: str) -> str:
    """Relative link to the episode inspector for one episode."""
    return f"{INSPECT_PATH}?episode={quote(episode_id, safe='')}"


def cell_episodes(frame: pd.DataFrame, cell: Cell, limit: int | None = None) -> pd.DataFrame:
    """The episodes behind one heatmap cell: the metric's denominator in that benchmark × persona.

    Args:
        frame: Per-episode frame.
        cell: The cell.
        limit: At most this many rows (sorted by method, seed, episode id); None = all.

    Returns:
        Columns :data:`EPISODE_COLUMNS`; ``value`` is the episode's metric value formatted
        ("—" when undefined), ``inspect`` a relative link ``inspect?episode=<id>``.
    """
    if frame.empty:
        return pd.DataFrame(columns=list(EPISODE_COLUMNS))
    sub = frame[(frame["benchmark"] == cell.benchmark) & (frame["persona"] == cell.persona)]
    col = _COLUMN_OF.get(cell.metric)
    if col is not None and col in sub.columns:
        sub = sub[sub[col].notna()]
    if limit is not None and len(sub) > limit:
        order = np.lexsort(
            (sub["episode_id"].to_numpy(), sub["seed"].to_numpy(), sub["method"].to_numpy())
        )
        sub = sub.iloc[order[:limit]]
    else:
        sub = sub.sort_values(["method", "seed", "episode_id"])
    vals = sub[col] if col is not None and col in sub.columns else [None] * len(sub)
    out = pd.DataFrame(
        {
            "episode_id": sub["episode_id"].astype(str).to_numpy(),
            "method": sub["method"].to_numpy(),
            "backbone": sub["backbone"].to_numpy(),
            "seed": sub["seed"].to_numpy(),
            "sample_id": sub["sample_id"].to_numpy(),
            "outcome": sub["outcome"].to_numpy(),
            "bucket": sub["bucket"].astype(str).to_numpy(),
            "value": [fmt(cell.metric, v) for v in vals],
        }
    )
    out["inspect"] = [inspect_link(e) for e in out["episode_id"]]
    return out[list(EPISODE_COLUMNS)]


def cell_size(frame: pd.DataFrame, cell: Cell) -> int:
    """How many episodes are in the cell's metric denominator (benchmark × persona)."""
    if frame.empty:
        return 0
    mask = (frame["benchmark"] == cell.benchmark) & (frame["persona"] == cell.persona)
    col = _COLUMN_OF.get(cell.metric)
    if col is not None and col in frame.columns:
        mask &= frame[col].notna()
    return int(mask.sum())


# ---------------------------------------------------------------------------------- downloads
def report_downloads(
    frame: pd.DataFrame,
    run_ids: Sequence[str],
    keys: Sequence[str],
    *,
    pairs: pd.DataFrame | None = None,
    judges: str | None = None,
) -> tuple[str, str]:
    """The shown cells as the ``driftbench grip`` report: (JSON text, CSV text).

    Undefined values are ``null`` in JSON and empty in CSV, never 0.
    """
    cells = aggregate(frame, tuple(keys), pairs=pairs) if not frame.empty else None
    report = GripReport(
        runs=list(run_ids),
        by=list(keys),
        judges=judges,
        metrics=metric_definitions(),
        cells=cells_json(cells, frame, tuple(keys)) if cells is not None else [],
    )
    return json.dumps(report.to_json(), indent=1, allow_nan=False), report_csv(report)
