"""Inspect: find an episode, read it turn by turn, reveal the truth, compare, branch."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.studio import watch as live
from core.studio.choices import LADDER
from core.studio.inspector import FACETS, episode_index, facet_values, hidden_truth
from core.studio.timeline import align_turns, matching_turns, timeline_points, turn_records
from pages.common.store import get_store
from pages.common.ui import guarded
from pages.common.widgets import timeline_figure

store = get_store()
st.title("Inspect")

values = facet_values(store)
with st.expander("Filters", expanded=False):
    cols = st.columns(len(FACETS))
    chosen = {
        facet: col.selectbox(facet, ["(all)", *values[facet]], key=f"insp-{facet}")
        for col, facet in zip(cols, FACETS, strict=True)
    }
filters = {k: (None if v == "(all)" else v) for k, v in chosen.items()}
rows = episode_index(store, **filters)
linked = st.query_params.get("episode")
ids = [r["episode_id"] for r in rows]
if linked and linked not in ids and store.episode_exists(linked):
    ids.insert(0, linked)
    rows.insert(0, episode_index(store, episode=linked)[0])
if not ids:
    st.info("No episodes match. Run a sweep (Runs page or `driftbench run`) or load the demo.")
    st.stop()

labels = {
    r["episode_id"]: f"{r['episode_id']} · {r['benchmark']} · {r['method']} · {r['persona_id']}"
    f" · {r['outcome'] or r['status']}"
    for r in rows
}
default = ids.index(linked) if linked in ids else 0
episode_id = st.selectbox(
    "Episode", ids, index=default, format_func=lambda i: labels.get(i, i), key="insp-episode"
)
if st.query_params.get("episode") != episode_id:
    st.query_params["episode"] = episode_id

events = store.events(episode_id)
header = store.header(episode_id)
records = turn_records(events)
truth = hidden_truth(events)
ended = records[-1].patience_after if records else None

top = st.columns(5)
top[0].metric(
    "Outcome",
    next((r["outcome"] or r["status"] for r in rows if r["episode_id"] == episode_id), "—"),
)
top[1].metric("Turns", max((r.turn for r in records), default=0))
top[2].metric("Patience left", "—" if ended is None else f"{ended:g}")
top[3].metric("Shifts fired", sum(1 for r in records for s in r.shifts if s["event"] == "fired"))
top[4].metric("Events", len(events))
st.caption(
    f"episode {episode_id} · method {header.method} · agent {header.agent} · "
    f"persona {header.persona_id} · seed "
    f"{header.seed} · voice {header.user_voice} · config {header.config_hash[:12]}"
    + (
        f" · branched from {header.parent_episode_id} at turn {header.fork_turn}"
        if header.parent_episode_id
        else ""
    )
)
st.plotly_chart(
    timeline_figure(timeline_points(events), budget=truth.budget),
    key="insp-timeline",
)

with st.expander("Researcher reveal: hidden intent and mask", expanded=False):
    st.markdown("**Opening request (what the agent saw)**")
    st.text(truth.query)
    st.markdown(
        f"**Faults:** {', '.join(truth.faults)} · "
        f"**hidden slots:** {', '.join(truth.hidden_slots) or '—'}"
    )
    st.dataframe(pd.DataFrame(truth.mask), hide_index=True)
    st.markdown("**Hidden intent at start**")
    st.dataframe(pd.DataFrame(truth.root_conditions), hide_index=True)
    st.caption(
        f"budget {truth.budget:g} · shift thresholds {truth.thresholds} · fates {truth.fates}"
    )

needle = st.text_input("Search this transcript", key="insp-search")
hits = set(matching_turns(records, needle)) if needle else set()
if needle:
    st.caption(f"{len(hits)} matching turn(s): {sorted(hits)}")
turn_param = st.query_params.get("turn")
selected_turn = int(turn_param) if turn_param and turn_param.isdigit() else None

for r in records:
    title = f"Turn {r.turn}"
    if r.action_kind:
        title += f" · {r.action_kind}: {r.action_text[:70]}"
    if r.turn in hits:
        title = "🔎 " + title
    with st.expander(title, expanded=r.turn == selected_turn or r.turn in hits):
        c1, c2 = st.columns([3, 2])
        with c1:
            if r.action_text:
                st.markdown("**Agent**")
                st.text(r.action_text)
            if r.reply_text is not None:
                st.markdown(f"**User** ({r.reply_kind})")
                st.text(r.reply_text)
            for obs in r.observations:
                st.markdown(f"**Observation** `{obs['tool']}` {'✓' if obs['ok'] else '✗'}")
                st.text(obs["text"][:2000])
            for note in r.notes:
                st.caption(note)
        with c2:
            st.caption(f"intent {r.intent_id} · patience {r.patience_before} → {r.patience_after}")
            if r.asked_slots:
                st.caption("asked: " + ", ".join(r.asked_slots))
            if r.disclosures:
                st.dataframe(pd.DataFrame(r.disclosures), hide_index=True)
            if r.shifts:
                st.dataframe(pd.DataFrame(r.shifts), hide_index=True)
            if r.verdicts:
                st.dataframe(pd.DataFrame(r.verdicts), hide_index=True)
            if r.charges:
                st.dataframe(pd.DataFrame(r.charges), hide_index=True)

st.divider()
compare_tab, branch_tab = st.tabs(["Compare", "Branch from a turn"])
with compare_tab:
    others = [i for i in ids if i != episode_id]
    if not others:
        st.caption("No other episode to compare with.")
    else:
        other = st.selectbox(
            "Compare with", others, format_func=lambda i: labels.get(i, i), key="insp-compare"
        )
        other_records = turn_records(store.events(other))
        for left, right in align_turns(records, other_records):
            lc, rc = st.columns(2)
            for col, rec in ((lc, left), (rc, right)):
                with col:
                    if rec is None:
                        st.caption("—")
                        continue
                    st.markdown(f"**Turn {rec.turn}** · patience {rec.patience_after}")
                    st.text(rec.action_text or "")
                    if rec.reply_text:
                        st.text("user: " + rec.reply_text)
                    for v in rec.verdicts:
                        st.caption(
                            "verdict: "
                            + ("accepted" if v["accepted"] else "rejected")
                            + f" ({v['reason']})"
                        )
with branch_tab:
    max_turn = max((r.turn for r in records), default=1)
    turn = st.number_input(
        "Branch before turn", 1, max(1, max_turn), min(2, max_turn), key="insp-branch-turn"
    )
    method = st.selectbox("Continue with", [*LADDER, live.HUMAN], key="insp-branch-method")
    if st.button("Create branch", type="primary", key="insp-branch-go"):
        new_id = guarded(live.branch, store, episode_id, int(turn), method)
        if new_id:
            if method == live.HUMAN:
                st.success(f"Branch {new_id} is waiting for you as the agent.")
                st.markdown(f"[Take over as the agent](/play_agent?episode={new_id})")
            else:
                live.spawn_driver(store.path, new_id, pace_s=0.0)
                st.success(f"Branch {new_id} continues with {method} in the background.")
                st.markdown(
                    f"[Open the branch](?episode={new_id}) · "
                    "compare it with this episode above once it ends."
                )
