"""Home: what the store holds and how to get started."""

from __future__ import annotations

import streamlit as st

from core.studio.bootstrap import initialise
from core.studio.home import my_work
from pages.common.auth import current_user
from pages.common.store import get_store

store = get_store()
user = current_user()
assert user is not None  # app.py routes anonymous visitors to the sign-in page

st.title("Drift-Bench++ Studio")
st.caption(
    "Interactive intent alignment: can an agent recover what a miscommunicating user really "
    "wants, and keep tracking it when the goal silently drifts?"
)
st.markdown(f"Signed in as **{user.name}** · role **{user.role}**")

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

work = my_work(store, user.name)
if work["studies"] or work["resume"]:
    st.subheader("Your work")
    for study in work["studies"]:
        left = study["pending"]
        st.markdown(
            f"**{study['name']}** ({study['status']}) — {study['done']} of {study['total']} done"
            + (f", {left} to go · [continue annotating](/annotate)" if left else "")
        )
    for play in work["resume"]:
        st.markdown(
            f"Resume {play['role'].replace('_', ' ')} episode `{play['episode_id']}` "
            f"({play['benchmark']}, {play['persona']}) · [open]({play['link']})"
        )

st.subheader("Getting started")
st.markdown(
    "- `driftbench init` loads the bundled worlds and samples.\n"
    "- `driftbench run --benchmark webshop --method A0 --persona all --seeds 3` runs a sweep.\n"
    "- `driftbench grip RUN` prints the GRIP report.\n"
    "- `driftbench doctor` shows versions, the store and configured model providers."
)
st.caption(f"Store: `{store.path}` · schema v{store.schema_version()}")
