"""GRIP dashboard: Table-2 grid, paired deltas, the paper's figures, persona ranking heatmap."""

from __future__ import annotations

import streamlit as st

from core.model.run import METHODS
from core.studio.choices import GROUPABLE, METRIC_NAMES, method_label
from core.studio.dashboards import (
    FILTER_KEYS,
    HEATMAP_METRICS,
    JUDGE_CHOICES,
    MIN_N_FOR_BEST,
    OFFLINE_NOTE,
    UNDEFINED,
    Cell,
    cell_episodes,
    cell_size,
    default_judges,
    default_runs,
    delta_table,
    facets,
    figure_frame,
    filter_frame,
    grid_styler,
    heatmap_cells,
    load_frame,
    md_escape,
    report_downloads,
    resolve_runs,
    run_options,
    selected_cell,
    table2,
    with_realism,
)
from pages.common.charts import FIGURES, grip_figure, heatmap_figure
from pages.common.nav import link
from pages.common.store import get_store
from pages.common.ui import guarded

MAX_EPISODES = 500  # rows of the drill-down list (the count above it is exact)

store = get_store()
st.title("GRIP dashboard")
st.caption(
    f"GRIP grip-1: eleven metrics as a vector, never a composite. Rates ×100, mean ± sd over "
    f"seeds; undefined values show as {UNDEFINED}, never 0."
)

options = run_options(store)
if not options:
    st.info(
        "No runs in the store yet. Launch one on the Runs page (or `driftbench run …`), or load "
        "the bundled data and demo sweep from Home."
    )
    st.stop()

by_name = {o.name: o for o in options}
names = list(by_name)
linked = st.query_params.get_all("run")
wanted = [r for r in linked if r in by_name]
if missing := len(linked) - len(wanted):
    st.caption(f"{missing} linked run(s) not found in this store: left out of the selection.")


def _keep_valid(key: str, allowed: list[str]) -> None:
    """Drop stale widget values that are no longer options (runs or filters changed)."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in allowed]


_keep_valid("grip-runs", names)
selected = st.multiselect(
    "Runs",
    names,
    default=None if "grip-runs" in st.session_state else (wanted or default_runs(options)),
    format_func=lambda n: by_name[n].label(),
    key="grip-runs",
)
if not selected:
    st.info("Pick one or more runs.")
    st.stop()
if any(by_name[n].symbolic for n in selected):
    st.info(OFFLINE_NOTE, icon=":material/info:")

frame = guarded(load_frame, store, selected)
if frame is None:
    st.stop()
if frame.empty:
    st.warning("The selected runs have no ended episodes yet.")
    st.stop()

with st.expander("Filters and grouping", expanded=False):
    choices = facets(frame)
    cols = st.columns(len(FILTER_KEYS))
    chosen: dict[str, list[str]] = {}
    for col, k in zip(cols, FILTER_KEYS, strict=True):
        _keep_valid(f"grip-f-{k}", choices[k])
        chosen[k] = col.multiselect(
            k,
            choices[k],
            key=f"grip-f-{k}",
            placeholder="all",
            format_func=method_label if k == "method" else str,
        )
    c1, c2 = st.columns(2)
    row_choices = [
        k
        for k in ("benchmark", "method", "persona", "backbone", "user_voice", "k")
        if k in GROUPABLE
    ]
    _keep_valid("grip-rows", row_choices)
    rows = c1.multiselect(
        "Table rows",
        row_choices,
        default=None if "grip-rows" in st.session_state else ["benchmark", "method"],
        key="grip-rows",
    )
    if "grip-judges" not in st.session_state:
        st.session_state["grip-judges"] = default_judges(frame)
    judges = c2.selectbox(
        "Role-realism judges (Identification, Consistency)",
        list(JUDGE_CHOICES),
        format_func=JUDGE_CHOICES.get,
        key="grip-judges",
        help="Identification and Consistency need judges: the offline heuristic judges run by "
        "default (an approximation); LLM judges run from the CLI (`driftbench grip --judges`).",
    )

pairs = None
if judges != "none":
    with st.spinner(f"Running the {judges} role-realism judges…"):
        result = guarded(with_realism, store, frame, judges)
    if result is not None:
        frame, pairs = result
shown = filter_frame(frame, chosen)
if shown.empty:
    st.warning("No episode matches the filters.")
    st.stop()
keys = tuple(rows) or ("benchmark", "method")
run_ids = resolve_runs(store, selected)

st.subheader("Results grid")
st.caption(
    f"{len(shown)} episodes · n = episodes in the cell (a metric's own denominator follows its "
    f"value when it differs) · best of each benchmark in **bold**, second best underlined, "
    f"never for a cell with fewer "
    f"than {MIN_N_FOR_BEST} episodes (Staleness and Reaction: lower is better) · rates ×100 · "
    "Patience in budget units · Reaction in turns. Branch runs are separate runs: they never "
    "change a sweep's grid."
)
grid = table2(shown, keys, pairs=pairs)
if judges != "none":
    st.caption(f"Identification and Consistency: {JUDGE_CHOICES[judges]}.")
st.table(grid_styler(grid))
report_json, report_csv_text = report_downloads(
    shown, run_ids, keys, pairs=pairs, judges=None if judges == "none" else judges
)
d1, d2, _ = st.columns([1, 1, 4])
d1.download_button(
    "Download JSON",
    report_json,
    file_name="grip.json",
    mime="application/json",
    key="grip-dl-json",
)
d2.download_button(
    "Download CSV", report_csv_text, file_name="grip.csv", mime="text/csv", key="grip-dl-csv"
)

st.subheader("Paired deltas")
present = {str(m) for m in shown["method"].unique()}
methods = [m for m in METHODS if m in present]
if len(methods) < 2:
    st.caption("Paired deltas need two methods on the same samples.")
else:
    p1, p2, p3, p4 = st.columns([1, 1, 3, 2])
    method_a = p1.selectbox(
        "Baseline", methods, index=0, format_func=method_label, key="grip-delta-a"
    )
    method_b = p2.selectbox(
        "Compared",
        methods,
        index=min(1, len(methods) - 1),
        format_func=method_label,
        key="grip-delta-b",
    )
    delta_metrics = p3.multiselect(
        "Metrics",
        [m for m in METRIC_NAMES if m not in ("Identification", "Consistency")],
        default=["Success", "Earned", "Aim", "Recovery", "Patience"],
        key="grip-delta-metrics",
    )
    delta_by = p4.selectbox("Per", ["benchmark", "benchmark × persona"], key="grip-delta-by")
    if method_a == method_b:
        st.caption("Pick two different methods.")
    elif delta_metrics:
        by = ("benchmark",) if delta_by == "benchmark" else ("benchmark", "persona")
        deltas = guarded(delta_table, shown, method_a, method_b, metrics=delta_metrics, by=by)
        if deltas is not None and deltas.empty:
            st.caption(f"No paired episodes of {method_a} and {method_b}.")
        elif deltas is not None:
            st.caption(
                f"{method_b} − {method_a} on the same samples, personas and seeds; "
                "bootstrap 95% intervals (2000 draws, seed 7)."
            )
            st.dataframe(deltas, hide_index=True, key="grip-deltas")

st.subheader("Figures")
f1, f2 = st.columns([3, 1])
fig_name = f1.selectbox(
    "Figure", list(FIGURES), format_func=lambda n: FIGURES[n], key="grip-figure"
)
fan_metric = None
if fig_name == "persona_fans":
    fan_metric = f2.selectbox("Metric", list(HEATMAP_METRICS), key="grip-fan-metric")
fig_df = guarded(figure_frame, fig_name, shown, pairs)
if fig_df is not None:
    st.plotly_chart(grip_figure(fig_name, fig_df, metric=fan_metric), key="grip-fig-chart")

st.subheader("Persona ranking heatmap")
st.caption(
    "One panel per benchmark. Each cell: the persona's rank on that metric (1 = best; tied "
    "values share their average rank) and n, the episodes in the cell's denominator (pairs for "
    "Consistency). A grey column = every persona ties, nobody is ranked; a hollow square = "
    "undefined. Click a cell (or pick it below) to list the episodes behind it."
)
heat = heatmap_cells(shown, pairs=pairs)
event = st.plotly_chart(
    heatmap_figure(heat),
    on_select="rerun",
    selection_mode=("points", "box"),
    key="grip-heatmap",
)
clicked = selected_cell(event, heat)
if clicked is not None and st.session_state.get("grip-heat-last") != clicked.model_dump():
    # apply a click once; afterwards the selectboxes stay free to change
    st.session_state["grip-heat-last"] = clicked.model_dump()
    st.session_state["grip-cell-benchmark"] = clicked.benchmark
    st.session_state["grip-cell-metric"] = clicked.metric
    st.session_state["grip-cell-persona"] = clicked.persona
if not heat.empty:
    benches = sorted(set(heat["benchmark"]))
    metric_opts = [m for m in HEATMAP_METRICS if m in set(heat["metric"])]
    persona_opts = list(dict.fromkeys(heat.sort_values("persona")["persona"]))
    for key, opts in (
        ("grip-cell-benchmark", benches),
        ("grip-cell-metric", metric_opts),
        ("grip-cell-persona", persona_opts),
    ):
        if st.session_state.get(key) not in opts:
            st.session_state.pop(key, None)
    s1, s2, s3 = st.columns(3)
    cb = s1.selectbox("Benchmark", benches, key="grip-cell-benchmark")
    cm = s2.selectbox("Metric", metric_opts, key="grip-cell-metric")
    cp = s3.selectbox("Persona", persona_opts, key="grip-cell-persona")
    cell = Cell(benchmark=cb, metric=cm, persona=cp)
    n_cell = cell_size(shown, cell)
    eps = cell_episodes(shown, cell, limit=MAX_EPISODES)
    if n_cell > len(eps):
        st.caption(f"Showing the first {len(eps)} (by method, seed, id).")
    st.markdown(
        f"**{n_cell} episodes** in the {cm} denominator for {md_escape(cp)} on "
        f"{md_escape(cb)} — open one in the inspector:"
    )
    st.dataframe(
        eps,
        hide_index=True,
        key="grip-cell-episodes",
        column_config={
            "inspect": st.column_config.LinkColumn(
                "Inspect", display_text=r"inspect\?episode=(.*)"
            ),
            "value": st.column_config.TextColumn(cm),
        },
    )
    if len(eps):
        st.caption("Open in the inspector (same tab):")
        row = st.container(horizontal=True)
        with row:
            for e in eps["episode_id"][:8]:
                link("inspect", str(e), {"episode": str(e)})
