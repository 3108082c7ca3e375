"""Annotate: one's queue in a study, one item at a time, blind, every label stored as made.

Keyboard shortcuts as in Label Studio: number keys pick an option of the first unanswered
choice (or of the one with focus), Enter saves the labels. A play item links to its play page,
which starts the study's sample for this annotator (the assignment fixes who plays which role
on which sample).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import streamlit as st

from core.studio.study_display import annotator_studies, progress_text
from core.studio.study_service import (
    annotator_queue,
    confirm_item,
    get_assignment,
    item_view,
    label_item,
    list_annotators,
    missing_labels,
    open_next,
    set_assignment_status,
)
from pages.common.auth import auth_mode, current_user
from pages.common.label_form import label_form, label_glossary, labels_table
from pages.common.nav import link
from pages.common.store import get_store
from pages.common.study_items import item_cards
from pages.common.ui import guarded, keyboard_shortcuts

store = get_store()
st.title("Annotate")
user = current_user()
if user is None:
    st.stop()

if auth_mode() == "none":
    # local single-user mode has no identity of its own: pick whose queue to work on
    known = [a.annotator_id for a in list_annotators(store)]
    if not known:
        st.info("No annotators yet. Create a study on the Data page (Studies tab).")
        st.stop()
    annotator = st.selectbox(
        "Annotate as",
        known,
        index=known.index(user.name) if user.name in known else 0,
        key="ann-as",
    )
else:
    annotator = user.name
    st.caption(f"Signed in as {annotator}")

studies = annotator_studies(store, annotator)
if not studies:
    st.info("No study assigns you any items yet.")
    st.stop()
by_id = {s["study_id"]: s for s in studies}
study_id = st.selectbox(
    "Study",
    list(by_id),
    format_func=lambda s: f"{by_id[s]['name']} ({by_id[s]['status']}, {by_id[s]['pending']} to do)",
    key="ann-study",
)
study = by_id[study_id]
queue = annotator_queue(store, study_id, annotator)
st.progress(queue.progress, text=progress_text(queue.done, queue.skipped, queue.total))
if flash := st.session_state.pop("ann-flash", None):
    st.success(flash)


def _queue_panel() -> None:
    with st.expander(f"My queue ({queue.total} items)"):
        for it in queue.items:
            c1, c2 = st.columns([4, 1])
            done = ", ".join(it.labels_done) or "no labels yet"
            c1.text(f"{it.ref} · {it.target_kind} · {it.status} · {done}")
            if it.status != "pending" and study["status"] == "open":
                if c2.button("Reopen", key=f"ann-reopen-{it.assignment_id}"):
                    guarded(set_assignment_status, store, it.assignment_id, "pending")
                    st.rerun()


if study["status"] != "open":
    st.warning("This study is closed: it accepts no new labels.")
    _queue_panel()
    st.stop()

item = open_next(store, study_id, annotator)
if item is None:
    st.success(f"All {queue.total} items done. Thank you!")
    _queue_panel()
    st.stop()

# time per item: a clock per opened item (falls back to the stored opening time after a refresh)
clock = st.session_state.get("ann-clock")
if not clock or clock[0] != item.assignment_id:
    st.session_state["ann-clock"] = (item.assignment_id, time.time())


def _seconds(assignment_id: int) -> float:
    aid, t0 = st.session_state.get("ann-clock", (None, None))
    if aid == assignment_id and t0 is not None:
        return max(0.0, time.time() - float(t0))
    opened = get_assignment(store, assignment_id).get("opened_at")
    if not opened:
        return 0.0
    return max(0.0, (datetime.now(UTC) - datetime.fromisoformat(str(opened))).total_seconds())


st.subheader(f"Item {item.position + 1} of {queue.total}")
view = item_view(store, item.assignment_id)
item_cards(view)

if view.role == "label":
    keyboard_shortcuts()
    st.caption("Shortcuts: number keys pick a label · Enter saves (outside text fields).")
    label_glossary(view)
    reopened = bool(view.my_labels) and not missing_labels(store, item.assignment_id)
    if reopened:
        st.info(
            "You labelled this item before and reopened it: change a label, or save as it is "
            "to confirm your labels unchanged.",
            icon=":material/replay:",
        )
    given = label_form(view)
    if given is not None:
        if not given and reopened:
            if guarded(confirm_item, store, item.assignment_id) is not None:
                st.session_state["ann-flash"] = f"Confirmed item {item.ref} unchanged."
                st.rerun()
        elif not given:
            st.warning("Nothing new to save: choose a label first.")
        else:
            seconds = _seconds(item.assignment_id)
            saved = 0
            for i, (kind, value, turn) in enumerate(given):
                # the item's time goes on its first label only (throughput sums per item)
                ok = guarded(
                    label_item,
                    store,
                    item.assignment_id,
                    kind,
                    value,
                    turn=turn,
                    seconds=seconds if i == 0 else None,
                )
                if ok is None:
                    break
                saved += 1
            if saved == len(given):
                st.session_state["ann-flash"] = f"Saved {saved} label(s) on item {item.ref}."
                st.rerun()
    if view.my_labels:
        st.markdown("**My labels on this item**")
        labels_table(view.my_labels, with_annotator=False)
        missing = [k for k in item.labels_required if k not in item.labels_done]
        if missing:
            st.caption("Still needed before the item counts as done: " + ", ".join(missing))
    if view.other_labels:
        st.markdown("**Other annotators' labels** (study is not blind)")
        labels_table(view.other_labels, with_annotator=True)
else:
    role = "the customer" if view.role == "play_user" else "the agent"
    st.info(
        f"This item is played, not labelled: you play {role} on the study's sample. It counts "
        "as done when the episode ends."
    )
    link(
        str(view.role),
        f"Play this item as {role}",
        {"assignment": str(item.assignment_id)},
        icon=":material/theater_comedy:" if view.role == "play_user" else ":material/joystick:",
    )

if st.button("Skip this item", key="ann-skip"):
    guarded(set_assignment_status, store, item.assignment_id, "skipped")
    st.session_state["ann-flash"] = f"Skipped item {item.ref}."
    st.rerun()

_queue_panel()
