"""Home: what you can do here (by role), your assigned work, episodes to resume, the store."""

from __future__ import annotations

import streamlit as st

from core.studio.bootstrap import initialise
from core.studio.home import my_work, pages_of
from core.studio.plays import discard_play
from pages.common.auth import current_user, settings
from pages.common.nav import link
from pages.common.store import get_store
from pages.common.ui import guarded

ROLE_INTRO = {
    "annotator": (
        "You help study how AI agents cope with people who do not say exactly what they mean. "
        "You may **play the customer** (a persona with a private goal that can change), **play "
        "the agent** (blind to the customer's goal), or **label** episodes in your study queue."
    ),
    "researcher": (
        "You run and read the benchmark: launch sweeps, watch episodes live, inspect them turn "
        "by turn, read the GRIP results and set up studies for annotators."
    ),
    "admin": (
        "You can do everything researchers do, and manage the studio's data: imports, "
        "studies and assignments, personas and store health."
    ),
}

store = get_store()
user = current_user()
if user is None:  # app.py routes anonymous visitors to the sign-in page; signed out meanwhile
    st.info("You are signed out.")
    st.stop()
research = user.role in ("researcher", "admin")

st.title("Drift-Bench++ Studio")
st.caption(
    "Interactive intent alignment: can an agent recover what a miscommunicating user really "
    "wants, and keep tracking it when the goal silently drifts?"
)
st.markdown(f"Signed in as **{user.name}** · role **{user.role}**")
st.markdown(ROLE_INTRO.get(user.role, ROLE_INTRO["annotator"]))

work = my_work(store, user.name, expiry_hours=settings().play_expiry_hours)
if work["studies"] or work["plays"] or work["resume"]:
    st.subheader("Your work")
    for study in work["studies"]:
        left = study["pending"]
        with st.container(border=True):
            st.markdown(
                f"**{study['name']}** ({study['status']}) — {study['done']} of "
                f"{study['total']} done" + (f", {left} to go" if left else "")
            )
            if left and study["status"] == "open":
                link("annotate", "Continue annotating", icon=":material/edit_note:")
    for item in work["plays"]:
        role = "the customer" if item["role"] == "play_user" else "the agent"
        c1, c2 = st.columns([3, 2], vertical_alignment="center")
        c1.markdown(f"Study **{item['study']}** · item {item['ref']}: play {role}")
        with c2:
            link(item["page"], "Play this item", {"assignment": str(item["assignment_id"])})
    for play in work["resume"]:
        role = "the customer" if play["page"] == "play_user" else "the agent"
        c1, c2, c3 = st.columns([4, 2, 1], vertical_alignment="center")
        c1.markdown(
            f"Unfinished: playing {role} · `{play['episode_id']}` ({play['benchmark']}, "
            f"{play['persona']}, {play['events']} events)"
        )
        with c2:
            link(
                play["page"],
                "Resume",
                {"episode": play["episode_id"]},
                icon=":material/play_arrow:",
            )
        if c3.button("Discard", key=f"home-discard-{play['episode_id']}"):
            if guarded(discard_play, store, play["episode_id"], user.name):
                st.rerun()
    hours = settings().play_expiry_hours
    if work["resume"] and hours:
        st.caption(f"Unfinished plays are no longer offered after {hours:g} hours.")

st.subheader("What you can do here")
for spec in pages_of(user.role):
    with st.container(border=True, key=f"home-page-{spec.page_id}"):
        c1, c2 = st.columns([4, 1], vertical_alignment="center")
        c1.markdown(f"**{spec.icon} {spec.title}** — {spec.purpose}")
        with c2:
            link(spec.page_id, "Open")

if not research:
    st.subheader("How it works")
    st.markdown(
        "- **Play as user**: read your persona and private goal on the left, answer the agent "
        "in your own words; before you send, the page shows what the agent will learn from "
        "them. A banner tells you when your goal changes.\n"
        "- **Play as agent**: use the tools and messages to find out what the customer wants, "
        "then give your final answer; a debrief shows the truth afterwards.\n"
        "- **Annotate**: one item at a time; number keys pick a label, Enter saves.\n"
        "- Everything you do is saved as you do it: you can close the tab and come back."
    )
    st.stop()

counts = store.counts()
cols = st.columns(4)
for col, (label, key) in zip(
    cols,
    (("Worlds", "worlds"), ("Samples", "samples"), ("Runs", "runs"), ("Episodes", "episodes")),
    strict=True,
):
    col.metric(label, counts[key])

if counts["samples"] == 0 and counts["runs"] == 0:
    st.info(
        "The store is empty. Load the bundled worlds and samples (and run the small symbolic "
        "demo sweep) to give every page real content — or use `driftbench init` in a terminal."
    )
    if st.button("Load bundled data", type="primary", key="home-init"):
        with st.spinner("Loading bundled worlds and samples…"):
            result = initialise(store)
        st.success(
            f"Loaded {result['worlds']} worlds, {result['samples']} samples, {result['runs']} runs."
        )
        st.rerun()
else:
    runs = store.list_runs()
    if runs:
        st.subheader("Recent runs")
        st.dataframe(
            [
                {k: r[k] for k in ("name", "status", "completed", "total", "errors", "updated_at")}
                for r in runs[:10]
            ],
            hide_index=True,
        )

st.subheader("Getting started")
st.markdown(
    "- `driftbench init` loads the bundled worlds and samples.\n"
    "- `driftbench run --benchmark webshop --method A0 --persona all --seeds 3` runs a sweep.\n"
    "- `driftbench grip RUN` prints the GRIP report.\n"
    "- `driftbench doctor` shows versions, the store and configured model providers."
)
st.caption(f"Store: `{store.path}` · schema v{store.schema_version()}")
