"""Watch live: start simulated episodes in a background worker and follow them as they happen."""

from __future__ import annotations

import streamlit as st

from core.model.events import EpisodeEnded
from core.model.sampling import draw_sample
from core.studio import watch as live
from core.studio.choices import LADDER, load_personas, method_label, offered_benchmarks
from core.studio.inspector import hidden_truth
from core.studio.plainwords import plain_ending
from core.studio.providers import studio_agents
from core.studio.timeline import timeline_points, turn_records
from core.studio.toolcalls import describe_call
from core.studio.watch_list import (
    PARAM,
    add_watched,
    read_watch_list,
    unknown_watched,
    watch_param,
)
from pages.common.nav import link
from pages.common.store import get_store
from pages.common.ui import guarded
from pages.common.widgets import patience_meter, timeline_figure

store = get_store()
st.title("Watch live")
st.caption(
    "Episodes run in a background worker that writes every event to the store; this page "
    "polls the store. Symbolic agents and the template voice are offline approximations."
)

samples = store.sample_rows()
if not samples:
    st.info("No samples in the store yet: load the bundled data on the Home page first.")
    st.stop()

# the list lives in the URL (?watch=…), so a reload or a shared link shows the same episodes
watched = read_watch_list(store, st.query_params.get(PARAM))
if missing := unknown_watched(store, st.query_params.get(PARAM)):
    st.caption(f"{missing} linked episode(s) not found in this store: left out of the list.")
benchmarks = offered_benchmarks(sorted({r["benchmark"] for r in samples}))
if not benchmarks:
    st.info("No samples in the store yet: load the bundled data on the Home page first.")
    st.stop()
with st.form("watch-start"):
    c = st.columns(5)
    benchmark = c[0].selectbox("Benchmark", benchmarks, key="watch-benchmark")
    persona = c[1].selectbox("Persona", ["(all five)", *load_personas()], key="watch-persona")
    method = c[2].selectbox(
        "Method",
        [m for m in LADDER if m != "ORACLE"],
        index=3,
        format_func=method_label,
        key="watch-method",
    )
    seed = c[3].number_input("Seed", 0, 10_000, 0, key="watch-seed")
    pace = c[4].slider("Seconds per action", 0.0, 2.0, 0.6, 0.1, key="watch-pace")
    agent = st.selectbox(
        "Agent",
        ["symbolic", *studio_agents()],
        key="watch-agent",
        help="Symbolic policies, or an LLM (DRIFTBENCH_PLAY_MODEL or the models file's agent).",
    )
    start = st.form_submit_button("Start", type="primary")
if start:
    pool = [r["sample_id"] for r in samples if r["benchmark"] == benchmark]
    sample_id = draw_sample(pool, int(seed))
    personas = list(load_personas()) if persona == "(all five)" else [persona]
    started = []
    for p in personas:
        eid = guarded(live.start_watched, store, sample_id, p, method, int(seed), agent=agent)
        if eid:
            live.spawn_driver(store.path, eid, pace_s=float(pace))
            started.append(eid)
    watched = add_watched(watched, started)
    if watched:
        st.query_params[PARAM] = watch_param(watched)

if not watched:
    st.info("Start an episode above; it will appear here and update live.")
    st.stop()

if st.button("Clear watched episodes", key="watch-clear"):
    del st.query_params[PARAM]
    st.rerun()


def _ended(eid: str) -> bool:
    status = store.episode_status(eid)
    return status is not None and status[0] == "ended"


@st.fragment(run_every=1.0 if not all(_ended(e) for e in watched) else None)
def cards() -> None:
    """Re-render every watched episode from the store."""
    for eid in list(watched):
        events = store.events(eid)
        header = store.header(eid)
        truth = hidden_truth(events)
        records = turn_records(events)
        last = records[-1]
        with st.container(border=True):
            status = (
                plain_ending(str(events[-1].outcome), str(events[-1].reason))
                if isinstance(events[-1], EpisodeEnded)
                else "running"
            )
            st.markdown(
                f"**{eid}** · {header.benchmark} · {header.method} · {header.persona_id} · "
                f"{header.agent} · **{status}**"
            )
            done = isinstance(events[-1], EpisodeEnded)
            if not done and events[-1].kind == "turn_started" and header.agent != "symbolic":
                st.caption("The model is thinking about its next action…")
            left, right = st.columns([2, 3])
            with left:
                now = last.patience_after if last.patience_after is not None else truth.budget
                patience_meter(now, truth.budget)
                charges = [c for r in records for c in r.charges]
                if charges:
                    st.caption(
                        "charges: "
                        + ", ".join(
                            f"−{c['cost']:g} {str(c['reason']).replace('_', ' ')}"
                            for c in charges[-6:]
                        )
                    )
                for r in records[-3:]:
                    if r.tool is not None:
                        call = describe_call(r.tool, r.tool_args).summary
                        st.text(f"[{r.turn}] agent used a tool: {call[:160]}")
                    elif r.action_text:
                        st.text(f"[{r.turn}] agent: {r.action_text[:160]}")
                    if r.reply_text:
                        st.text(f"[{r.turn}] user: {r.reply_text[:160]}")
                    for note in r.notes[-1:]:
                        st.caption(note)
            with right:
                st.plotly_chart(
                    timeline_figure(timeline_points(events), budget=truth.budget),
                    key=f"watch-timeline-{eid}",
                )
            link("inspect", "Inspect turn by turn", {"episode": eid}, icon=":material/search:")


cards()
