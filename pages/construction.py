"""Construction explorer: intent graphs, samples by fault type, verifier rejections."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from core.studio.dashboards.construction_explorer import (
    benchmarks,
    fault_type_counts,
    graph_detail,
    graph_index,
    overview,
    rejections,
    sample_detail,
    samples_by_fault,
)
from pages.common.charts import network_figure
from pages.common.store import get_store
from pages.common.ui import guarded

MAX_CHOICES = 500  # at most this many graphs / samples in a picker (the tables list them all)

store = get_store()
st.title("Construction explorer")
st.caption(
    "Researcher view: host task → intent graph → verified faulty request. This page shows "
    "masks, hidden slots and ground truth, which agents never see."
)

st.subheader("Build statistics")
table = guarded(overview, store)
if table is not None and not table.empty:
    st.dataframe(table, hide_index=True, key="con-overview")
    st.caption(
        "Table-4 statistics of what this store holds, per benchmark, source and world: built "
        "and imported rows as their builds recorded them, bundled rows from the committed "
        "build; the last two columns count the store's graphs and samples."
    )

names = benchmarks(store)
if not names:
    st.info(
        "The store holds no intent graphs or samples yet. Load the bundled data from Home "
        "(or run `driftbench init`), or build them with `driftbench build …`."
    )
    st.stop()

bench = st.selectbox("Benchmark", names, key="con-benchmark")
tab_graphs, tab_samples, tab_rejections = st.tabs(
    ["Intent graphs", "Samples by fault type", "Verifier rejections"]
)

with tab_graphs:
    index = graph_index(store, bench)
    st.caption(f"{len(index)} graphs · edges by shift operator · moved = ground truth differs")
    st.dataframe(index, hide_index=True, key="con-graph-index")
    if not index.empty:
        ids = list(index["graph_id"])[:MAX_CHOICES]
        gid = st.selectbox("Graph", ids, key="con-graph")
        detail = guarded(graph_detail, store, gid)
        if detail is not None:
            left, right = st.columns([2, 3])
            with left:
                st.plotly_chart(network_figure(detail["nodes"], detail["edges"]), key="con-network")
            with right:
                st.markdown("**Intents** (ground-truth sizes)")
                st.dataframe(
                    detail["nodes"].drop(columns=["label"]), hide_index=True, key="con-nodes"
                )
                st.markdown("**Edges**")
                st.dataframe(detail["edges"], hide_index=True, key="con-edges")

with tab_samples:
    counts = fault_type_counts(store, bench)
    c1, c2 = st.columns([3, 1])
    fault = c1.selectbox(
        "Fault type",
        ["(any)", *counts],
        format_func=lambda t: t if t == "(any)" else f"{t} ({counts[t]})",
        key="con-fault",
    )
    k_choice = c2.selectbox("Composed faults (k)", ["any", 1, 2, 4], key="con-k")
    rows = samples_by_fault(
        store,
        bench,
        None if fault == "(any)" else str(fault),
        k=None if k_choice == "any" else int(k_choice),
    )
    st.caption(f"{len(rows)} samples")
    st.dataframe(rows, hide_index=True, key="con-samples")
    if not rows.empty:
        sid = st.selectbox("Sample", list(rows["sample_id"])[:MAX_CHOICES], key="con-sample")
        info = guarded(sample_detail, store, sid)
        if info is not None:
            sample = info["sample"]
            st.markdown("**Opening request** (the only field the agent sees)")
            st.text(sample.query)
            m1, m2, m3 = st.columns(3)
            m1.metric("Faults", ", ".join(str(f) for f in sample.faults))
            m2.metric("Hidden slots", len(sample.hidden_slots))
            gt = info["ground_truth_size"]
            m3.metric("Root ground truth", "—" if gt is None else gt)
            st.markdown("**Mask** (per-slot treatment of the truth)")
            st.dataframe(info["mask"], hide_index=True, key="con-mask")
            st.markdown("**Literal readings** (what the request says, taken at its word)")
            if info["literal"].empty:
                st.caption("No literal reading: taken at its word, the request cannot be executed.")
            else:
                st.dataframe(info["literal"], hide_index=True, key="con-literal")
            st.markdown("**Verifier record**")
            st.json(info["verifier"])

with tab_rejections:
    rej = rejections(bench, store=store)
    if rej["by_step"].empty:
        st.info(f"No build statistics for {bench} (data/benchmark/{bench}/stats.json).")
    else:
        fig = px.bar(
            rej["by_step"],
            x="k",
            y="rejected",
            color="step",
            barmode="group",
            labels={"k": "faults per sample", "rejected": "rejected candidates"},
        )
        fig.update_layout(height=320, margin={"l": 10, "r": 10, "t": 10, "b": 10})
        st.plotly_chart(fig, key="con-rej-steps")
        st.markdown("**By fault type** (a composite counts once per type it carries)")
        st.dataframe(rej["by_fault_type"], hide_index=True, key="con-rej-types")
        st.markdown("**Most frequent rejection reasons**")
        st.dataframe(rej["reasons"], hide_index=True, key="con-rej-reasons")
