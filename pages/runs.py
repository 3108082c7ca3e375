"""Runs: compose a sweep, launch it in a background worker, watch progress, cancel, resume."""

from __future__ import annotations

from urllib.parse import quote

import pandas as pd
import streamlit as st

from core.model.run import METHODS, PERSONAS, RunOptions
from core.studio.dashboards import OFFLINE_NOTE, md_escape
from core.studio.dashboards.construction_explorer import benchmarks
from core.studio.jobs import (
    cancel_job,
    launch_job,
    reconcile,
    resume_job,
    run_rows,
    run_spec,
    spec_from_form,
    stop_job,
    worker_log,
)
from pages.common.store import get_store
from pages.common.ui import guarded

store = get_store()
st.title("Runs")
st.caption(
    "A run is a sweep over benchmarks × methods × personas × seeds. It plays in a background "
    "worker process and writes every finished episode to the store; launching the same spec "
    "again resumes it (finished episodes are skipped)."
)
reconcile(store)
flash = st.session_state.pop("runs-flash", None)
if flash:
    st.success(flash)

available = benchmarks(store)
with st.expander("New run", expanded=not run_rows(store)):
    if not available:
        st.info(
            "No samples in the store: load the bundled data from Home (or `driftbench init`) "
            "before launching a run."
        )
    with st.form("runs-form"):
        c1, c2, c3 = st.columns(3)
        f_bench = c1.multiselect(
            "Benchmarks", available, default=available[:1], key="runs-benchmarks"
        )
        f_methods = c2.multiselect(
            "Methods", list(METHODS), default=["B0", "A0"], key="runs-methods"
        )
        f_personas = c3.multiselect(
            "Personas", list(PERSONAS), default=list(PERSONAS), key="runs-personas"
        )
        c4, c5, c6 = st.columns(3)
        f_seeds = c4.number_input("Seeds", min_value=1, max_value=10, value=1, key="runs-seeds")
        f_limit = c5.number_input(
            "Samples per benchmark (0 = all)", min_value=0, value=2, key="runs-limit"
        )
        f_name = c6.text_input("Name (optional)", key="runs-name")
        f_workers = st.number_input(
            "Worker processes (0 = one per CPU)",
            min_value=0,
            max_value=64,
            value=0,
            key="runs-workers",
            help="Symbolic sweeps use a process pool; 1 plays inline and cancels fastest.",
        )
        c7, c8 = st.columns(2)
        f_agent_kind = c7.radio(
            "Agent",
            ["symbolic", "model"],
            horizontal=True,
            key="runs-agent-kind",
            help="symbolic = offline scripted policies; model = an LLM via litellm.",
        )
        f_agent_model = c7.text_input(
            "Agent model (when Agent = model)",
            placeholder="openai/gpt-4o-mini",
            key="runs-agent-model",
        )
        f_voice_kind = c8.radio(
            "User voice", ["template", "model"], horizontal=True, key="runs-voice-kind"
        )
        f_voice_model = c8.text_input(
            "User-voice model (when User voice = model)",
            placeholder="openai/gpt-4o-mini",
            key="runs-voice-model",
        )
        submitted = st.form_submit_button("Launch", type="primary", key="runs-launch")
    if submitted:
        spec = guarded(
            spec_from_form,
            benchmarks=f_bench,
            methods=f_methods,
            personas=f_personas,
            seeds=int(f_seeds),
            agent=f_agent_model if f_agent_kind == "model" else "symbolic",
            user_voice=f_voice_model if f_voice_kind == "model" else "template",
            limit=int(f_limit),
            name=f_name,
        )
        if spec is not None:
            options = RunOptions(workers=int(f_workers) or None)
            job = guarded(launch_job, store, spec, options)
            if job is not None:
                st.session_state["runs-selected"] = job.name
                st.session_state.setdefault("runs-launched", []).append(job.name)
                st.success(f"Launched {md_escape(job.name)} in worker process {job.pid}.")

rows = run_rows(store)
if not rows:
    st.info("No runs yet.")
    st.stop()

poll = "2s" if any(r.active for r in rows) else None


@st.fragment(run_every=poll)
def progress_panel() -> None:
    """Live progress of every run, re-read from the store on each tick."""
    current = run_rows(store)
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "name": r.name,
                    "status": r.status,
                    "progress": r.fraction,
                    "done": f"{r.completed + r.errors}/{r.total}",
                    "errors": r.errors,
                    "agent": r.agent,
                    "cost $": round(r.cost_usd, 4),
                    "worker": r.worker if r.pid is None else f"{r.worker} (pid {r.pid})",
                    "updated": r.updated_at,
                }
                for r in current
            ]
        ),
        hide_index=True,
        key="runs-table",
        column_config={
            "progress": st.column_config.ProgressColumn(
                "progress", min_value=0.0, max_value=1.0, format="percent"
            )
        },
    )
    watched = set(st.session_state.get("runs-launched", []))
    for r in current:
        if r.active or r.name in watched:
            st.progress(
                r.fraction,
                text=(
                    f"{md_escape(r.name)}: {r.status} · {r.completed + r.errors}/{r.total} episodes"
                ),
            )
    if any(r.symbolic for r in current):
        st.caption(OFFLINE_NOTE)


progress_panel()

st.subheader("Selected run")
names = [r.name for r in rows]
if st.session_state.get("runs-selected") not in names:
    st.session_state.pop("runs-selected", None)
picked = st.selectbox("Run", names, key="runs-selected")
row = next(r for r in rows if r.name == picked)
m1, m2, m3, m4 = st.columns(4)
m1.metric("Status", row.status)
m2.metric("Episodes", f"{row.completed + row.errors}/{row.total}")
m3.metric("Errors", row.errors)
m4.metric("Worker", row.worker)
st.progress(row.fraction, text=f"{row.fraction:.0%}")

b1, b2, b3, b4 = st.columns(4)
if b1.button("Cancel", disabled=row.status not in ("pending", "running"), key="runs-cancel"):
    status = guarded(cancel_job, store, row.run_id)
    if status is not None:
        st.session_state["runs-flash"] = (
            f"{md_escape(row.name)}: {status} — the worker stops and unfinished "
            "episodes resume later."
        )
        st.rerun()
if b2.button(
    "Stop now",
    disabled=row.worker != "alive",
    key="runs-stop",
    help="Terminate the worker this studio started (unfinished episodes resume later).",
):
    if guarded(stop_job, store, row.run_id):
        st.session_state["runs-flash"] = (
            f"{md_escape(row.name)}: worker stopped; resume to continue."
        )
        st.rerun()
if b3.button("Resume", disabled=row.active, key="runs-resume"):
    job = guarded(resume_job, store, row.run_id)
    if job is not None:
        st.session_state["runs-flash"] = (
            f"Resumed {md_escape(job.name)} in worker process {job.pid}."
        )
        st.rerun()
b4.markdown(f"[Open in the GRIP dashboard](grip?run={quote(row.name, safe='')})")

spec = guarded(run_spec, store, row.run_id)
if spec is not None:
    with st.expander("Spec"):
        st.json(spec.model_dump(mode="json"))
log = worker_log(store, row.run_id)
if log:
    with st.expander("Worker log", expanded=row.status == "failed"):
        st.code(log, language=None)
