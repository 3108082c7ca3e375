"""The paper's tables: GRIP cells in the paper's layouts (Markdown, LaTeX, CSV).

A table has row keys (Table 2: the method), column groups (the benchmark) and metrics inside
each group; every cell is mean ± sd over seeds with its n. The best value of a column is bold
and the second best underlined (ties share the mark; a column with fewer than two defined
values, or cells under :data:`MIN_MARK_N` episodes, get no mark), as the paper prints them.
Rates are ×100 with two decimals; Patience and Reaction are raw. Undefined is "—".
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from core.grip.intervals import with_errors
from core.grip.metrics import METRIC_BY_NAME, aggregate

MIN_MARK_N = 5
"""Cells with fewer episodes in their denominator are never bold or underlined."""

UNDEF = "—"

COMPLEXITY_KEYS = ("benchmark", "method", "k")
"""Fig. 10's cell: benchmark × method × number of composed faults."""

COMPLEXITY_METRICS = ("Success", "Reaction")
"""Fig. 10's metrics."""


@dataclass
class Cell:
    """One table cell."""

    value: float | None
    sd: float | None
    n: int
    mark: str = ""  # "best" | "second" | ""


@dataclass
class PaperTable:
    """A table in the paper's layout."""

    key: str
    title: str
    row_keys: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    columns: list[tuple[Any, ...]]  # (group value(s)..., metric)
    cells: dict[tuple[tuple[Any, ...], tuple[Any, ...]], Cell] = field(default_factory=dict)


def _f(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


def build_table(
    frame: pd.DataFrame,
    *,
    key: str,
    title: str,
    row_keys: Sequence[str],
    group_keys: Sequence[str],
    metrics: Sequence[str],
    row_order: Sequence[tuple[Any, ...]] | None = None,
    group_order: Sequence[Any] | None = None,
) -> PaperTable:
    """Aggregate ``frame`` by rows × groups and lay the metrics out as the paper does."""
    by = (*row_keys, *group_keys)
    cells = aggregate(frame, by) if not frame.empty else pd.DataFrame()
    rows_seen: list[tuple[Any, ...]] = []
    groups: list[tuple[Any, ...]] = []
    out: dict[tuple[tuple[Any, ...], tuple[Any, ...]], Cell] = {}
    if not cells.empty:
        for rec in cells.to_dict("records"):
            if rec["metric"] not in metrics:
                continue
            r = tuple(rec[k] for k in row_keys)
            g = tuple(rec[k] for k in group_keys)
            if r not in rows_seen:
                rows_seen.append(r)
            if g not in groups:
                groups.append(g)
            out[(r, (*g, rec["metric"]))] = Cell(
                _f(rec["value"]), _f(rec["sd"]), int(rec["denominator"])
            )
    rows = [r for r in (row_order or []) if r in rows_seen] + sorted(
        (r for r in rows_seen if r not in (row_order or [])), key=str
    )
    first = list(group_order or [])

    def gkey(g: tuple[Any, ...]) -> tuple[int, str]:
        return (first.index(g[0]) if g and g[0] in first else len(first), str(g))

    columns = [(*g, m) for g in sorted(groups, key=gkey) for m in metrics]
    table = PaperTable(key, title, tuple(row_keys), rows, columns, out)
    mark(table)
    return table


def mark(table: PaperTable) -> None:
    """Bold the best and underline the second best value of every column."""
    for col in table.columns:
        metric = METRIC_BY_NAME[str(col[-1])]
        vals = [
            c.value
            for r in table.rows
            if (c := table.cells.get((r, col))) is not None
            and c.value is not None
            and c.n >= MIN_MARK_N
        ]
        distinct = sorted(set(vals), reverse=metric.higher_is_better)
        if len(vals) < 2 or len(distinct) < 1:
            continue
        best = distinct[0]
        second = distinct[1] if len(distinct) > 1 else None
        for r in table.rows:
            c = table.cells.get((r, col))
            if c is None or c.value is None or c.n < MIN_MARK_N:
                continue
            c.mark = "best" if c.value == best else "second" if c.value == second else ""


def fmt(metric: str, c: Cell | None) -> str:
    """``12.34 ± 1.20`` (rates ×100), raw for Patience and Reaction, "—" when undefined."""
    if c is None or c.value is None:
        return UNDEF
    scale = 1.0 if METRIC_BY_NAME[metric].unit in ("budget", "turns") else 100.0
    text = f"{c.value * scale:.2f}"
    if c.sd is not None:
        text += f" ± {c.sd * scale:.2f}"
    return text


def _head(col: tuple[Any, ...]) -> str:
    return " ".join(str(x) for x in col)


def to_markdown(t: PaperTable) -> str:
    """GitHub Markdown: best **bold**, second <u>underlined</u>."""
    head = [" / ".join(t.row_keys), *(_head(c) for c in t.columns)]
    lines = [f"**{t.title}**", "", "| " + " | ".join(head) + " |"]
    lines.append("|" + "---|" * len(head))
    for r in t.rows:
        cells = []
        for col in t.columns:
            c = t.cells.get((r, col))
            text = fmt(str(col[-1]), c)
            if c is not None and c.mark == "best":
                text = f"**{text}**"
            elif c is not None and c.mark == "second":
                text = f"<u>{text}</u>"
            cells.append(text)
        lines.append("| " + " | ".join([" / ".join(map(str, r)), *cells]) + " |")
    return "\n".join(lines) + "\n"


def _tex(s: str) -> str:
    for a, b in (
        ("\\", r"\textbackslash{}"),
        ("&", r"\&"),
        ("%", r"\%"),
        ("_", r"\_"),
        ("#", r"\#"),
        ("±", r"$\pm$"),
        ("—", "--"),
        ("τ", r"$\tau$"),
    ):
        s = s.replace(a, b)
    return s


def to_latex(t: PaperTable) -> str:
    r"""A ``tabular`` with grouped column heads: best ``\textbf``, second ``\underline``."""
    groups: list[tuple[tuple[Any, ...], int]] = []
    for col in t.columns:
        g = col[:-1]
        if groups and groups[-1][0] == g:
            groups[-1] = (g, groups[-1][1] + 1)
        else:
            groups.append((g, 1))
    lines = [
        f"% {t.title}",
        r"\begin{tabular}{l" + "c" * len(t.columns) + "}",
        r"\toprule",
        " & ".join([""] + [rf"\multicolumn{{{n}}}{{c}}{{{_tex(_head(g))}}}" for g, n in groups])
        + r" \\",
        " & ".join([_tex(" / ".join(t.row_keys))] + [_tex(str(c[-1])) for c in t.columns]) + r" \\",
        r"\midrule",
    ]
    for r in t.rows:
        cells = []
        for col in t.columns:
            c = t.cells.get((r, col))
            text = _tex(fmt(str(col[-1]), c))
            if c is not None and c.mark == "best":
                text = rf"\textbf{{{text}}}"
            elif c is not None and c.mark == "second":
                text = rf"\underline{{{text}}}"
            cells.append(text)
        lines.append(" & ".join([_tex(" / ".join(map(str, r))), *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def to_csv(t: PaperTable) -> str:
    """Long CSV: one line per cell (raw values, sd, n, mark); undefined is empty."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*t.row_keys, "column", "metric", "value", "sd", "n", "mark"])
    for r in t.rows:
        for col in t.columns:
            c = t.cells.get((r, col))
            if c is None:
                continue
            w.writerow(
                [
                    *r,
                    " ".join(map(str, col[:-1])),
                    col[-1],
                    "" if c.value is None else repr(c.value),
                    "" if c.sd is None else repr(c.sd),
                    c.n,
                    c.mark,
                ]
            )
    return buf.getvalue()


def to_html(t: PaperTable) -> str:
    """An HTML table for the report's index page (same marks)."""
    import html

    head = "".join(f"<th>{html.escape(_head(c))}</th>" for c in t.columns)
    body = []
    for r in t.rows:
        tds = []
        for col in t.columns:
            c = t.cells.get((r, col))
            text = html.escape(fmt(str(col[-1]), c))
            if c is not None and c.mark == "best":
                text = f"<b>{text}</b>"
            elif c is not None and c.mark == "second":
                text = f"<u>{text}</u>"
            tds.append(f"<td>{text}</td>")
        body.append(f"<tr><th>{html.escape(' / '.join(map(str, r)))}</th>{''.join(tds)}</tr>")
    return (
        f"<table><caption>{html.escape(t.title)}</caption><tr><th>"
        f"{html.escape(' / '.join(t.row_keys))}</th>{head}</tr>{''.join(body)}</table>"
    )


def fault_complexity(frame: pd.DataFrame) -> pd.DataFrame:
    """Fig. 10: Success and Reaction per benchmark × method × k, **mean ± sd over seeds**.

    The one computation behind Fig. 10 — the studio's GRIP figure and ``driftbench reproduce``
    both draw this frame. Every cell carries its error bar (``err_minus``, ``err_plus``,
    ``err_kind``; :func:`core.grip.intervals.with_errors`): the sd over seeds when every cell of
    the metric has two or more seeds, else a 95 % bootstrap interval over the cell's episodes.

    Returns:
        Columns ``benchmark, method, k, metric, value, sd, n_seeds, denominator, err_minus,
        err_plus, err_kind`` (Success, then Reaction, per cell); empty with those columns when
        nothing is defined.
    """
    cols = [*COMPLEXITY_KEYS, "metric", "value", "sd", "n_seeds", "denominator"]
    cells = aggregate(frame, COMPLEXITY_KEYS) if not frame.empty else pd.DataFrame()
    if cells.empty:
        return pd.DataFrame(columns=[*cols, "err_minus", "err_plus", "err_kind"])
    keep = cells[cells["metric"].isin(COMPLEXITY_METRICS)][cols]
    return with_errors(keep, frame, COMPLEXITY_KEYS).reset_index(drop=True)
