"""Runs: compose a sweep, launch it in a background worker, watch progress, cancel, resume.

One live fragment shows the run table and the selected run, both read from the store on every
tick, so they can never disagree; it polls while any run is active or has a live worker (also
right after a Resume) and stops by itself when the last one finishes. Buttons are enabled by the
selected run's state.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.model.run import FAULT_CONDITIONS, METHODS, PERSONAS, RunOptions
from core.studio.choices import method_label, offered_benchmarks, sample_selectors
from core.studio.dashboards import OFFLINE_NOTE, md_escape
from core.studio.dashboards.construction_explorer import benchmarks
from core.studio.inflight_view import inflight_rows
from core.studio.jobs import (
    RunRow,
    cancel_job,
    fmt_duration,
    launch_job,
    reconcile,
    resume_job,
    run_rows,
    run_spec,
    spec_from_form,
    stop_job,
    worker_log,
)
from core.studio.providers import studio_agents
from pages.common.nav import link
from pages.common.store import get_store
from pages.common.ui import guarded

store = get_store()
st.title("Runs")
st.caption(
    "A run is a sweep over benchmarks × methods × personas × seeds. It plays in a background "
    "worker process and writes every finished episode to the store; launching the same spec "
    "again resumes it (finished episodes are skipped). Branches made on the Inspect page are "
    "runs of their own, listed below the sweeps."
)
reconcile(store)
flash = st.session_state.pop("runs-flash", None)
if flash:
    st.success(flash)

available = offered_benchmarks(benchmarks(store))
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
            "Methods",
            list(METHODS),
            default=["B0", "A0"],
            format_func=method_label,
            key="runs-methods",
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
        sources, splits = sample_selectors(store)
        c9, c10 = st.columns(2)
        f_source = c9.selectbox(
            "Samples from",
            ["all", *sources],
            key="runs-source",
            help="Provenance: bundled with the project, built in this store, imported from a "
            "release, or one import by its name. Each sample runs on the world it was built on.",
        )
        f_split = c10.selectbox("Split", ["all", *splits], key="runs-split")
        c11, c12 = st.columns(2)
        f_shifts = c11.radio(
            "Silent shifts",
            ["on", "off"],
            horizontal=True,
            key="runs-shifts",
            help="The paper's shifts-off condition (Fig. 11) turns them off.",
        )
        f_faults = c12.selectbox(
            "Faults",
            ["all", *FAULT_CONDITIONS],
            key="runs-faults",
            help="single = one fault (Table 2); composite = k ≥ 2; k1/k2/k4 = exactly k.",
        )
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
        offered = studio_agents()
        f_agent_model = c7.text_input(
            "Agent model (when Agent = model)",
            value=offered[-1] if offered else "",
            placeholder="openai/gpt-4o-mini",
            key="runs-agent-model",
            help="Default: the models file's agent (DRIFTBENCH_MODELS).",
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
            source=None if f_source == "all" else f_source,
            split=None if f_split == "all" else f_split,
            shifts=f_shifts,
            faults=f_faults,
        )
        if spec is not None:
            options = RunOptions(workers=int(f_workers) or None)
            job = guarded(launch_job, store, spec, options)
            if job is not None:
                st.session_state["runs-selected"] = job.name
                st.success(f"Launched {md_escape(job.name)} in worker process {job.pid}.")

rows = run_rows(store)
if not rows:
    st.info("No runs yet.")
    st.stop()

names = [r.name for r in rows if r.kind != "branch"] or [r.name for r in rows]
if st.session_state.get("runs-selected") not in [r.name for r in rows]:
    st.session_state.pop("runs-selected", None)
picked = st.selectbox("Selected run", names, key="runs-selected")
polling = any(r.live for r in rows)


def _table(current: list[RunRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "name": r.name,
                "status": r.status,
                "progress": r.fraction,
                "done": f"{r.done}/{r.total}",
                "errors": r.errors,
                "rate /min": None if r.rate_per_s is None else round(r.rate_per_s * 60, 1),
                "ETA": fmt_duration(r.eta_s) if r.eta_s is not None and r.active else "",
                "agent": r.agent,
                "cost $": round(r.cost_usd, 4),
                "cost by role": r.cost_split_text,
                "worker": r.worker if r.pid is None else f"{r.worker} (pid {r.pid})",
                "updated": r.updated_at[:19].replace("T", " "),
            }
            for r in current
        ]
    )


_PROGRESS = {
    "progress": st.column_config.ProgressColumn(
        "progress", min_value=0.0, max_value=1.0, format="percent"
    )
}


def _actions(row: RunRow) -> None:
    b1, b2, b3, b4 = st.columns([1, 1, 1, 2])
    if b1.button(
        "Cancel",
        disabled=not row.can_cancel,
        key="runs-cancel",
        help="Stop after the episodes in flight; unfinished episodes resume later.",
    ):
        status = guarded(cancel_job, store, row.run_id)
        if status is not None:
            st.session_state["runs-flash"] = (
                f"{md_escape(row.name)}: {status} — the worker stops and unfinished "
                "episodes resume later."
            )
            st.rerun(scope="app")
    if b2.button(
        "Stop now",
        disabled=not row.can_stop,
        key="runs-stop",
        help="Terminate the worker this studio started (unfinished episodes resume later).",
    ):
        if guarded(stop_job, store, row.run_id):
            st.session_state["runs-flash"] = (
                f"{md_escape(row.name)}: worker stopped; resume to continue."
            )
            st.rerun(scope="app")
    if b3.button(
        "Resume",
        disabled=not row.can_resume,
        key="runs-resume",
        help="Play what is left of a failed, cancelled or interrupted sweep.",
    ):
        job = guarded(resume_job, store, row.run_id)
        if job is not None:
            st.session_state["runs-flash"] = (
                f"Resumed {md_escape(job.name)} in worker process {job.pid}."
            )
            st.rerun(scope="app")
    with b4:
        if row.kind == "branch" and row.parent_episode_id:
            link("inspect", "Open the parent episode", {"episode": row.parent_episode_id})
        link("grip", "Open in the GRIP dashboard", {"run": row.name}, icon=":material/bar_chart:")


@st.fragment(run_every="2s" if polling else None)
def live_panel() -> None:
    """The run table and the selected run, re-read from the store on every tick."""
    if polling:
        reconcile(store)
    current = run_rows(store)
    sweeps = [r for r in current if r.kind != "branch"]
    branches = [r for r in current if r.kind == "branch"]
    if sweeps:
        st.dataframe(_table(sweeps), hide_index=True, key="runs-table", column_config=_PROGRESS)
    if branches:
        with st.expander(f"Branch runs ({len(branches)})"):
            st.dataframe(
                _table(branches), hide_index=True, key="runs-branches", column_config=_PROGRESS
            )
    if any(r.symbolic for r in current):
        st.caption(OFFLINE_NOTE)

    row = next((r for r in current if r.name == picked), None)
    if row is None:
        st.info("The selected run is gone.")
        return
    with st.container(border=True, key="runs-selected-panel"):
        st.subheader(md_escape(row.name))
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("Status", row.status)
        m2.metric("Episodes", f"{row.done}/{row.total}")
        m3.metric("Errors", row.errors)
        m4.metric("Worker", row.worker)
        st.progress(row.fraction, text=f"{md_escape(row.name)}: {row.progress_text()}")
        playing = inflight_rows(store, row.run_id) if row.live and not row.symbolic else []
        if playing:
            st.caption(f"Playing now ({len(playing)}): LLM episodes appear here while they run")
            st.dataframe(pd.DataFrame(playing), hide_index=True, key="runs-inflight")
        _actions(row)
    if polling and not any(r.live for r in current):
        st.rerun(scope="app")  # the last live run finished: redraw once, then stop polling


live_panel()

selected = next(r for r in rows if r.name == picked)
if selected.kind == "sweep":
    spec = guarded(run_spec, store, selected.run_id)
    if spec is not None:
        with st.expander("Spec"):
            st.json(spec.model_dump(mode="json"))
log = worker_log(store, selected.run_id)
if log:
    with st.expander("Worker log", expanded=selected.status == "failed"):
        st.code(log, language=None)
