"""Inspect: a log viewer for episodes — filter, sort and search, select, read turn by turn.

The filters drive a sortable, searchable episode table with single-row selection; the episode
shown is always one of the table's rows (a click selects it; when the filters drop it, the first
row is shown). ``?episode=`` deep-links an episode and ``?turn=N`` scrolls to that turn's card.
Below: the timeline, the turns as cards (tool calls and results as readable fields), the
researcher reveal as structured fields, compare and branch.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.studio import watch as live
from core.studio.choices import LADDER, method_label
from core.studio.inspector import (
    FACETS,
    TABLE_COLUMNS,
    choose_episode,
    episode_index,
    facet_values,
    hidden_truth,
    reveal,
    table_rows,
)
from core.studio.links import link_id, link_int
from core.studio.markdown import md_escape
from core.studio.plainwords import plain_outcome, plain_status
from core.studio.roleplay import claim_episode, world_for
from core.studio.timeline import (
    matching_turns,
    timeline_points,
    turn_records,
)
from pages.common.auth import current_user
from pages.common.inspect_view import compare_view, turn_card, turn_nav
from pages.common.nav import link, reload_link
from pages.common.store import get_store
from pages.common.ui import guarded, scroll_to
from pages.common.widgets import timeline_figure

ALL = "(all)"
INTENT_COLUMNS = ["phrase", "slot", "op", "value"]

store = get_store()
user = current_user()
st.title("Inspect")

values = facet_values(store)
linked = link_id(st.query_params.get("episode"))
if st.query_params.get("episode") and linked is None:
    st.warning("No such episode: the link's episode id is not valid.")
elif (
    linked
    and linked != st.session_state.get("insp-url-episode")
    and not store.episode_exists(linked)
):
    st.warning(f"No episode {md_escape(linked)} in this store: the link may be from another one.")
forced = None
if linked and linked != st.session_state.get("insp-url-episode") and store.episode_exists(linked):
    # arrived by a link or a typed URL: show that episode, clearing filters that would hide it
    forced = linked
    active = {f: st.session_state.get(f"insp-{f}") for f in FACETS}
    if any(v not in (None, ALL) for v in active.values()):
        narrowed = {f: (None if v in (None, ALL) else v) for f, v in active.items()}
        if linked not in {r["episode_id"] for r in episode_index(store, **narrowed)}:
            for facet in FACETS:
                st.session_state[f"insp-{facet}"] = ALL


def _facet_format(facet: str) -> Callable[[object], str]:
    """Methods by their ladder names, outcomes in plain words; every other facet as it is."""
    if facet == "method":
        return lambda m: str(m) if m == ALL else method_label(str(m))
    if facet == "outcome":
        return lambda o: str(o) if o == ALL else plain_outcome(str(o))
    return str


cols = st.columns(len(FACETS))
chosen = {}
for col, facet in zip(cols, FACETS, strict=True):
    options = [ALL, *values[facet]]
    if st.session_state.get(f"insp-{facet}") not in (None, *options):
        st.session_state[f"insp-{facet}"] = ALL
    chosen[facet] = col.selectbox(
        facet,
        options,
        key=f"insp-{facet}",
        format_func=_facet_format(facet),
    )
filters = {k: (None if v == ALL else v) for k, v in chosen.items()}
rows = episode_index(store, **filters)
ids = [r["episode_id"] for r in rows]
if linked and linked not in ids and not any(filters.values()) and store.episode_exists(linked):
    rows = episode_index(store, episode=linked) + rows  # older than the listed window
    ids = [r["episode_id"] for r in rows]

# the click of the previous run (positions refer to that run's rows)
clicked = None
last_key = st.session_state.get("insp-table-key")
last_ids: list[str] = st.session_state.get("insp-table-ids", [])
state = st.session_state.get(last_key) if last_key else None
if state is not None:
    picked_rows = list(state.get("selection", {}).get("rows", []))
    if picked_rows and picked_rows[0] < len(last_ids):
        clicked = last_ids[picked_rows[0]]
current = st.session_state.get("insp-current")
picked = st.session_state.get("insp-episode")  # the keyboard-friendly picker below the table
if clicked == current:
    clicked = None  # the table only echoes the shown episode
if picked == current:
    picked = None
episode_id = choose_episode(ids, current, forced or clicked or picked)
st.session_state["insp-current"] = episode_id

st.caption(
    f"{len(ids)} episode(s) match · click a row to open it · sort by a column header · "
    "search with the table's magnifier"
)
if episode_id is None:
    st.info("No episodes match. Run a sweep (Runs page or `driftbench run`) or load the demo.")
    st.stop()

table_key = f"insp-table-{abs(hash((tuple(filters.items()), episode_id))) % 10**12}"
st.session_state["insp-table-key"] = table_key
st.session_state["insp-table-ids"] = ids
st.dataframe(
    pd.DataFrame(table_rows(rows), columns=list(TABLE_COLUMNS)),
    hide_index=True,
    key=table_key,
    on_select="rerun",
    selection_mode="single-row",
    selection_default={"selection": {"rows": [ids.index(episode_id)], "columns": []}},
    height=260,
    column_config={
        "seed": st.column_config.NumberColumn(width="small"),
        "events": st.column_config.NumberColumn(width="small"),
    },
)
labels = {
    r["episode_id"]: f"{r['episode_id']} · {r['benchmark']} · {r['method']} · {r['persona_id']}"
    f" · {plain_status(r['outcome'], r['status'])}"
    for r in rows
}
st.session_state["insp-episode"] = episode_id
st.selectbox(
    "Episode (or click a row above)",
    ids,
    format_func=lambda i: labels.get(i, i),
    key="insp-episode",
)
if st.query_params.get("episode") != episode_id:
    st.query_params["episode"] = episode_id
    if "turn" in st.query_params and linked != episode_id:
        del st.query_params["turn"]
st.session_state["insp-url-episode"] = episode_id

events = store.events(episode_id)
header = store.header(episode_id)
records = turn_records(events)
truth = hidden_truth(events)
ended = records[-1].patience_after if records else None
row = next(r for r in rows if r["episode_id"] == episode_id)

st.subheader(f"Episode {episode_id}")
top = st.columns([2.2, 1, 1, 1, 1])  # the outcome in words needs the room
top[0].metric("Outcome", plain_status(row["outcome"], row["status"]))
top[1].metric("Turns", max((r.turn for r in records), default=0))
top[2].metric("Patience left", "—" if ended is None else f"{ended:g}")
top[3].metric("Shifts fired", sum(1 for r in records for s in r.shifts if s["event"] == "fired"))
top[4].metric("Events", len(events))
st.caption(
    f"episode {episode_id} · {method_label(header.method)} · agent {header.agent} · "
    f"persona {header.persona_id} · seed {header.seed} · voice {header.user_voice} · "
    f"config {header.config_hash[:12]}"
)
if header.parent_episode_id:
    reload_link(
        "inspect",
        f"Branched from {header.parent_episode_id} before turn {header.fork_turn} — open it",
        {"episode": header.parent_episode_id},
        icon=":material/subdirectory_arrow_left:",
        key="insp-parent-link",
    )
st.plotly_chart(timeline_figure(timeline_points(events), budget=truth.budget), key="insp-timeline")


turns_tab, reveal_tab, compare_tab, branch_tab = st.tabs(
    ["Turns", "Researcher reveal", "Compare", "Branch from a turn"]
)
with turns_tab:
    needle = st.text_input("Search this transcript", key="insp-search")
    hits = set(matching_turns(records, needle)) if needle else set()
    if needle:
        st.caption(f"{len(hits)} matching turn(s): {sorted(hits)}")
    raw_turn = st.query_params.get("turn")
    selected_turn = link_int(raw_turn, hi=10**6)
    turns = [r.turn for r in records]
    if raw_turn and selected_turn not in turns:
        st.caption(f"No turn {md_escape(raw_turn[:20])} in this episode: all its turns are below.")
    go = turn_nav(turns, selected_turn)
    for r in records:
        asked = turn_card(r, r.turn in hits, r.turn == selected_turn, turns)
        go = asked if asked is not None else go
    if go is not None:
        st.query_params["turn"] = str(go)
        st.rerun()
    if selected_turn is not None:
        scroll_to(f"turn-{selected_turn}")

with reveal_tab:
    rv = guarded(reveal, events, guarded(world_for, store, episode_id))
    if rv is not None:
        st.caption("What the agent never saw.")
        st.markdown("**Opening request** (the only thing the agent is told)")
        st.text(rv.query)
        f1, f2, f3, f4 = st.columns(4)
        f1.metric("Faults", len(rv.faults))
        f2.metric("Hidden slots", len(rv.hidden_slots))
        f3.metric("Patience budget", f"{rv.budget:g}")
        f4.metric("Shifts fired", len(rv.shifts))
        st.text("Faults: " + (", ".join(rv.faults) or "none"))
        st.text("Hidden slots: " + (", ".join(rv.hidden_slots) or "none"))
        st.text(
            "Shift thresholds: "
            + (
                ", ".join(f"{t:g} ({f})" for t, f in zip(rv.thresholds, rv.fates, strict=False))
                or "none"
            )
            + f" · persona {rv.persona}"
        )
        st.markdown("**Hidden intent at the start**")
        st.dataframe(
            pd.DataFrame(
                [c.model_dump() for c in rv.start_intent], columns=["phrase", "slot", "op", "value"]
            ),
            hide_index=True,
        )
        if rv.shifts:
            st.markdown("**Silent shifts** (where they fired)")
            st.dataframe(pd.DataFrame([s.model_dump() for s in rv.shifts]), hide_index=True)
            st.markdown("**Hidden intent at the end**")
            st.dataframe(
                pd.DataFrame(
                    [c.model_dump() for c in rv.final_intent],
                    columns=["phrase", "slot", "op", "value"],
                ),
                hide_index=True,
            )
        st.markdown("**Mask** (how the request treats each slot of the truth)")
        st.dataframe(pd.DataFrame([m.model_dump() for m in rv.mask]), hide_index=True)
        if rv.lessons:
            st.markdown("**Lesson book** (A3, in force for this episode)")
            st.text("\n".join(rv.lessons))

with compare_tab:
    same = [r for r in rows if r["episode_id"] != episode_id and r["benchmark"] == header.benchmark]
    if not same:
        st.caption(
            f"No other {header.benchmark} episode in the table to compare with (episodes are "
            "compared within one benchmark)."
        )
    else:
        other = st.selectbox(
            f"Compare with (another {header.benchmark} episode)",
            [r["episode_id"] for r in same],
            format_func=lambda i: labels.get(i, i),
            key="insp-compare",
        )
        compare_view(
            store,
            (header, row),
            (store.header(other), next(r for r in same if r["episode_id"] == other)),
            records,
        )

with branch_tab:
    st.caption(
        "A branch copies this episode up to a turn and continues it with another method (or "
        "with you as the agent). It is a run of its own: the parent run's results never change."
    )
    max_turn = max((r.turn for r in records), default=1)
    turn = st.number_input(
        "Branch before turn", 1, max(1, max_turn), min(2, max_turn), key="insp-branch-turn"
    )
    method = st.selectbox(
        "Continue with", [*LADDER, live.HUMAN], format_func=method_label, key="insp-branch-method"
    )
    if st.button("Create branch", type="primary", key="insp-branch-go"):
        new_id = guarded(live.branch, store, episode_id, int(turn), method)
        if new_id:
            st.session_state["insp-branch-made"] = (new_id, method)
            if method == live.HUMAN and user is not None:
                guarded(claim_episode, store, new_id, user.name, "agent")
            elif method != live.HUMAN:
                live.spawn_driver(store.path, new_id, pace_s=0.0)
    made = st.session_state.get("insp-branch-made")
    if made:
        new_id, how = made
        if how == live.HUMAN:
            st.success(f"Branch {new_id} is waiting for you as the agent.")
            link(
                "play_agent",
                "Take over as the agent",
                {"episode": new_id},
                icon=":material/joystick:",
            )
        else:
            st.success(f"Branch {new_id} continues with {method_label(how)} in the background.")
            reload_link(
                "inspect",
                "Open the branch",
                {"episode": new_id},
                icon=":material/call_split:",
                key="insp-branch-link",
            )
