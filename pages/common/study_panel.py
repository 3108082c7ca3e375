"""The Data page's study tab: the studies table, "New study", and managing one study.

UI only: lists, progress and the blind rule's reasons come from ``core.studio``; the forms that
create a study are in :mod:`pages.common.study_forms`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from core.studio.accounts import known_accounts
from core.studio.blind import why_hidden
from core.studio.store_access import Store
from core.studio.study_display import fmt_percent
from core.studio.study_service import (
    add_annotator,
    assign_study,
    get_study,
    list_annotators,
    list_studies,
    set_study_status,
    study_progress,
)
from pages.common.study_forms import KIND_NAMES, create_form, play_form
from pages.common.ui import guarded


def _manage(store: Store, rows: list[dict[str, Any]]) -> None:
    names = [r["name"] for r in rows]
    name = st.selectbox("Study", names, key="stu-manage")
    if name is None:
        return
    study = guarded(get_study, store, name)
    if study is None:
        return
    spec = study.spec
    st.caption(
        f"{study.study_id} · {study.status} · overlap {spec.overlap} · "
        f"{'blind' if spec.blind else 'not blind'} · labels: {', '.join(spec.label_kinds)}"
    )
    progress = study_progress(store, study.study_id)
    if progress:
        st.dataframe(
            pd.DataFrame(progress).assign(progress=lambda d: d["progress"].map(fmt_percent)),
            hide_index=True,
        )
    c1, c2 = st.columns([3, 1])
    with c1.form("stu-add", enter_to_submit=True):
        more = st.multiselect(
            "Add annotators (accounts)", known_accounts(store), key="stu-add-annotators"
        )
        add = st.form_submit_button("Add and assign")
    if add and more:
        members = [a.annotator_id for a in list_annotators(store, study.study_id)]
        everyone = list(dict.fromkeys([*members, *more]))
        known = {a.annotator_id for a in list_annotators(store)}
        for ann in more:
            if ann not in known:
                guarded(add_annotator, store, ann)
        made = guarded(assign_study, store, study.study_id, everyone, overlap=spec.overlap)
        if made is not None:
            per = ", ".join(f"{a}: {n}" for a, n in made.items())
            st.session_state["stu-flash"] = f"Assigned. Items per annotator: {per}."
            st.rerun()
    flip = "closed" if study.status == "open" else "open"
    if c2.button(f"Mark {flip}", key="stu-status-go"):
        guarded(set_study_status, store, study.study_id, flip)
        st.rerun()
    _why_hidden(store)


def _why_hidden(store: Store) -> None:
    """Admins: why is a sample hidden from a person (the blind rule, reason by reason)?"""
    with st.container(border=True, key="stu-why"):
        st.markdown("**Why is a sample hidden from someone?**")
        c1, c2 = st.columns(2)
        who = c1.selectbox("Person", known_accounts(store), index=None, key="stu-why-who")
        sample = c2.text_input("Sample id", key="stu-why-sample").strip()
        if who and sample:
            reasons = why_hidden(store, who, sample)
            if not reasons:
                st.caption(f"Nothing hides {sample} from {who}.")
            for r in reasons:
                via = f" (study item #{r.assignment_id} on {r.via_sample})" if r.via_sample else ""
                st.text(f"• {r.text}{via}")


def study_setup_panel(store: Store) -> None:
    """Create studies over episodes, episode pairs or sessions; enrol and assign annotators.

    Called from a tab of the Data page (researcher+).
    """
    rows = list_studies(store)
    st.subheader("Studies")
    if flash := st.session_state.pop("stu-flash", None):
        st.success(flash)
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True)
    else:
        st.caption("No studies yet.")
    with st.expander("New study", expanded=not rows):
        kind = st.radio(
            "Kind of study",
            ["label", "play_user", "play_agent"],
            format_func=KIND_NAMES.get,
            horizontal=True,
            key="stu-kind",
        )
        if kind == "label":
            create_form(store)
        else:
            play_form(store, str(kind))
    if rows:
        st.subheader("Manage a study")
        _manage(store, rows)
