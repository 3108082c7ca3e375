"""The report folder of ``driftbench reproduce``: every table and figure, and one index page.

``tables/<name>.{md,tex,csv}`` in the paper's layouts (:mod:`core.grip.paper`),
``figures/<name>.html`` (plotly, with ``plotly.min.js`` written once beside them, so the folder
works offline) and ``figures/<name>.png``, and ``index.html`` with the run specs, seeds, n and
costs of every experiment.

**PNG export.** plotly's static export needs kaleido, which is not installed here (and would
fetch a browser). Instead each figure's own HTML page is rendered by Debian's headless
chromium (``chromium --headless --screenshot``), the same browser the e2e tests drive; no
network is used. Without a chromium on the machine the PNGs are skipped and ``index.html`` says
so (the HTML figures are always written).
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd

from core.grip.cache import grip_frame
from core.grip.deltas import paired_deltas
from core.grip.figures import persona_heatmap
from core.grip.paper import (
    PaperTable,
    build_table,
    fault_complexity,
    to_csv,
    to_html,
    to_latex,
    to_markdown,
)
from core.runner.costs import cost_split
from core.runner.reproduce import LADDER, Plan
from core.store import Store

TABLE2_METRICS = ("Success", "Earned", "Aim", "Recovery", "Patience", "PostShift")
"""Table 2's metrics per benchmark (the eleven minus the judged two and the Persistence
details, as in the paper's main grid)."""

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


REPORT_MARKER = ".driftbench-report"
"""The file that marks a folder ``reproduce`` wrote (so a rerun may write into it again)."""


def _frame(store: Store, spec_run_id: str, **extra: Any) -> pd.DataFrame:
    frame = grip_frame(store, [spec_run_id])
    for k, v in extra.items():
        frame[k] = v
    return frame


def _rows(frame: pd.DataFrame, col: str, order: tuple[str, ...]) -> list[tuple[Any, ...]]:
    return [(m,) for m in order if m in set(frame.get(col, pd.Series(dtype=object)))]


def tables(store: Store, plan: Plan) -> list[PaperTable]:
    """Every table of the report, from the plan's runs."""
    exp = {e.key: e for e in plan.experiments}
    main = _frame(store, exp["main"].runs["main"].run_id())
    out = [
        build_table(
            main,
            group_order=plan.benchmarks,
            key="table2_main",
            title="Table 2 — main grid (Rational, single fault, shifts on; mean ± sd over seeds)",
            row_keys=("method",),
            group_keys=("benchmark",),
            metrics=TABLE2_METRICS,
            row_order=[(m,) for m in LADDER],
        )
    ]
    back = pd.concat(
        [_frame(store, s.run_id()) for s in exp["backbones"].runs.values()], ignore_index=True
    )
    out.append(
        build_table(
            back,
            group_order=plan.benchmarks,
            key="fig3_backbones",
            title="Fig. 3 data — Success by backbone",
            row_keys=("backbone", "method"),
            group_keys=("benchmark",),
            metrics=("Success",),
        )
    )
    pers = _frame(store, exp["personas"].runs["all"].run_id())
    out.append(
        build_table(
            pers,
            group_order=plan.benchmarks,
            key="table9_personas",
            title="Table 9 — per persona (all methods of the ladder)",
            row_keys=("persona", "method"),
            group_keys=("benchmark",),
            metrics=("Success", "Aim", "Recovery", "Patience", "PostShift"),
        )
    )
    both = pd.concat(
        [
            _frame(store, exp["shifts"].runs["on"].run_id(), shifts="on"),
            _frame(store, exp["shifts"].runs["off"].run_id(), shifts="off"),
        ],
        ignore_index=True,
    )
    out.append(
        build_table(
            both,
            group_order=plan.benchmarks,
            key="table8_shifts",
            title="Table 8 — silent shifts off vs on (Patience left, Success)",
            row_keys=("persona",),
            group_keys=("benchmark", "shifts"),
            metrics=("Patience", "Success"),
        )
    )
    out.append(
        build_table(
            _complexity_frame(store, plan),
            group_order=plan.benchmarks,
            key="fig10_complexity",
            title="Fig. 10 data — fault complexity k = 1 / 2 / 4 (mean ± sd over seeds)",
            row_keys=("method",),
            group_keys=("benchmark", "k"),
            metrics=("Success", "Reaction"),
            row_order=[(m,) for m in LADDER],
        )
    )
    out.append(
        build_table(
            pers,
            group_order=plan.benchmarks,
            key="fig9_earned_inferred",
            title="Fig. 9 data — Earned vs Inferred (environment discovery counts as Inferred)",
            row_keys=("method",),
            group_keys=("benchmark",),
            metrics=("Success", "Earned", "Inferred", "Recovery", "Discovery"),
            row_order=[(m,) for m in LADDER],
        )
    )
    return out


def _complexity_frame(store: Store, plan: Plan) -> pd.DataFrame:
    exp = next(e for e in plan.experiments if e.key == "complexity")
    parts = [_frame(store, s.run_id()) for s in exp.runs.values()]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def deltas_frame(store: Store, plan: Plan) -> pd.DataFrame:
    """Fig. 9 (right): A0 → A3 change of Aim and Recovery, paired, per benchmark × persona."""
    exp = next(e for e in plan.experiments if e.key == "aim_recovery")
    frame = _frame(store, exp.runs["all"].run_id())
    return paired_deltas(
        frame, "A0", "A3", metrics=("Aim", "Recovery"), by=("benchmark", "persona")
    )


def figures(store: Store, plan: Plan) -> dict[str, Any]:
    """Every figure of the report (plotly figures by name)."""
    import plotly.express as px

    from core.grip.metrics import aggregate

    exp = {e.key: e for e in plan.experiments}
    out: dict[str, Any] = {}
    back = pd.concat(
        [_frame(store, s.run_id()) for s in exp["backbones"].runs.values()], ignore_index=True
    )
    cells = _metric(aggregate(back, ("benchmark", "backbone", "method")), "Success")
    out["fig3_backbones"] = px.bar(
        cells,
        x="method",
        y="value",
        error_y="sd",
        color="backbone",
        barmode="group",
        facet_col="benchmark",
        title="Fig. 3 — Success by backbone (mean ± sd over seeds)",
        category_orders={"method": list(LADDER)},
    )
    pers = _frame(store, exp["personas"].runs["all"].run_id())
    cells = _metric(aggregate(pers, ("benchmark", "method", "persona")), "Success")
    out["fig6_personas"] = px.bar(
        cells,
        x="method",
        y="value",
        error_y="sd",
        color="persona",
        barmode="group",
        facet_col="benchmark",
        title="Fig. 6 — Success per persona (mean ± sd over seeds)",
        category_orders={"method": list(LADDER)},
    )
    ei = aggregate(pers, ("benchmark", "method"))
    ei = ei[ei["metric"].isin(["Earned", "Inferred"])]
    out["fig9_earned_inferred"] = px.bar(
        ei,
        x="method",
        y="value",
        color="metric",
        facet_col="benchmark",
        title="Fig. 9 — Earned vs Inferred (discovery is Inferred)",
        category_orders={"method": list(LADDER)},
    )
    d = deltas_frame(store, plan)
    if not d.empty:
        d = d.assign(err_hi=d["ci_high"] - d["delta"], err_lo=d["delta"] - d["ci_low"])
    out["fig9_aim_recovery"] = px.bar(
        d if not d.empty else pd.DataFrame({"persona": [], "delta": [], "metric": []}),
        x="persona",
        y="delta",
        color="metric",
        barmode="group",
        error_y="err_hi" if not d.empty else None,
        error_y_minus="err_lo" if not d.empty else None,
        facet_col="benchmark" if not d.empty else None,
        title="Fig. 9 — Aim and Recovery change A0 → A3 (paired, 95% CI)",
    )
    comp = fault_complexity(_complexity_frame(store, plan))
    out["fig10_complexity"] = px.line(
        comp,
        x="k",
        y="value",
        error_y="err_plus",
        error_y_minus="err_minus",
        color="method",
        facet_row="metric",
        facet_col="benchmark",
        markers=True,
        title="Fig. 10 — fault complexity (mean over seeds; error bars: "
        + (" / ".join(sorted(set(comp["err_kind"].dropna()))) or "none")
        + ")",
    )
    both = pd.concat(
        [
            _frame(store, exp["shifts"].runs["on"].run_id(), shifts_flag="on"),
            _frame(store, exp["shifts"].runs["off"].run_id(), shifts_flag="off"),
        ],
        ignore_index=True,
    )
    cells = _metric(aggregate(both, ("benchmark", "persona", "shifts_flag")), "Patience")
    out["fig11_shifts"] = px.bar(
        cells,
        x="persona",
        y="value",
        error_y="sd",
        color="shifts_flag",
        barmode="group",
        facet_col="benchmark",
        title="Fig. 11 — patience left, silent shifts off vs on",
    )
    heat = persona_heatmap(pers)
    out["fig12_heatmap"] = px.density_heatmap(
        heat,
        x="metric",
        y="persona",
        z="rank",
        facet_col="benchmark",
        histfunc="avg",
        title="Fig. 12 — persona ranking per metric (1 = best)",
    )
    return out


def _metric(cells: pd.DataFrame, metric: str) -> pd.DataFrame:
    return cells[cells["metric"] == metric].reset_index(drop=True)


def chromium() -> str | None:
    """The headless browser used for PNG export (None when the machine has none)."""
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def html_to_png(page: Path, png: Path, browser: str, *, timeout: float = 60.0) -> bool:
    """Screenshot ``page`` with headless chromium (offline); True when the PNG was written."""
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--window-size=1200,700",
        "--virtual-time-budget=10000",
        f"--screenshot={png}",
        page.resolve().as_uri(),
    ]
    env = {**os.environ, "HOME": str(png.parent)}
    try:
        subprocess.run(cmd, capture_output=True, timeout=timeout, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return png.is_file() and png.stat().st_size > 0


def write_report(
    store: Store, plan: Plan, out: Path, runs: list[dict[str, Any]], estimate: dict[str, Any] | None
) -> dict[str, list[str]]:
    """Write tables, figures and ``index.html`` into ``out``; return the written paths."""
    tdir, fdir = out / "tables", out / "figures"
    tdir.mkdir(parents=True, exist_ok=True)
    fdir.mkdir(parents=True, exist_ok=True)
    (out / REPORT_MARKER).write_text(
        "A report folder written by `driftbench reproduce`; running it again rewrites it.\n",
        encoding="utf-8",
    )
    written_tables: list[str] = []
    tabs = tables(store, plan)
    for t in tabs:
        for ext, text in (("md", to_markdown(t)), ("tex", to_latex(t)), ("csv", to_csv(t))):
            path = tdir / f"{t.key}.{ext}"
            path.write_text(text, encoding="utf-8")
            written_tables.append(str(path))
    browser = chromium()
    written_figs: list[str] = []
    pngs: dict[str, bool] = {}
    for name, fig in figures(store, plan).items():
        page = fdir / f"{name}.html"
        fig.update_layout(template="plotly_white", height=650, width=1150)
        fig.update_yaxes(matches=None, showticklabels=True)
        fig.write_html(
            page,
            include_plotlyjs="directory",
            full_html=True,
            config={"displayModeBar": False},
        )
        written_figs.append(str(page))
        png = fdir / f"{name}.png"
        pngs[name] = bool(browser) and html_to_png(page, png, str(browser))
        if pngs[name]:
            written_figs.append(str(png))
    index = out / "index.html"
    index.write_text(_index(store, plan, tabs, pngs, runs, estimate), encoding="utf-8")
    return {"tables": written_tables, "figures": written_figs, "index": [str(index)]}


def _index(
    store: Store,
    plan: Plan,
    tabs: list[PaperTable],
    pngs: dict[str, bool],
    runs: list[dict[str, Any]],
    estimate: dict[str, Any] | None,
) -> str:
    e = html.escape
    by_id = {r["run_id"]: r for r in runs}
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Drift-Bench++ reproduction"
        "</title><style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;"
        "font-size:13px}pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}"
        "img{max-width:100%;border:1px solid #ddd}</style></head><body>",
        f"<h1>Drift-Bench++ reproduction: {e(plan.name)}</h1>",
        f"<p>Models: {e(', '.join(plan.models))}. Benchmarks: {e(', '.join(plan.benchmarks))}. "
        f"Seeds: {e(', '.join(map(str, plan.seeds)))}. Samples per benchmark: "
        f"{e(str(plan.limit or 'all'))}. Offline agents and template voices are offline "
        "approximations of the paper's LLM methods.</p>",
        *(f"<p>Note: {e(n)}</p>" for n in plan.notes),
    ]
    if estimate is not None:
        parts.append(f"<h2>Estimate</h2><pre>{e(json.dumps(estimate, indent=1))}</pre>")
    for exp in plan.experiments:
        parts.append(f"<h2>{e(exp.title)} <small>({e(exp.paper)})</small></h2><ul>")
        for role, spec in exp.runs.items():
            rid = spec.run_id()
            info = by_id.get(rid, {})
            cost = cost_split(store, rid)
            parts.append(
                f"<li><b>{e(role)}</b>: run <code>{e(spec.display_name())}</code> ({e(rid)}), "
                f"seeds {e(str(list(spec.seeds)))}, n = {e(str(info.get('completed', '?')))}"
                f"/{e(str(info.get('episodes', '?')))} episodes, cost "
                f"${e(str(info.get('cost_usd', 0.0)))} {e(json.dumps(cost))}"
                f"<pre>{e(json.dumps(spec.identity(), indent=1, sort_keys=True))}</pre></li>"
            )
        parts.append("</ul>")
    parts.append("<h2>Tables</h2>")
    for t in tabs:
        parts.append(
            to_html(t) + f"<p>Files: <a href='tables/{t.key}.md'>Markdown</a>, "
            f"<a href='tables/{t.key}.tex'>LaTeX</a>, <a href='tables/{t.key}.csv'>CSV</a></p>"
        )
    parts.append("<h2>Figures</h2>")
    for name, ok in pngs.items():
        img = (
            f"<img src='figures/{name}.png' alt='{e(name)}'>"
            if ok
            else "<p>(PNG not written: no headless chromium on this machine)</p>"
        )
        parts.append(f"<h3>{e(name)}</h3>{img}<p><a href='figures/{name}.html'>interactive</a></p>")
    parts.append("</body></html>")
    return "\n".join(parts)
