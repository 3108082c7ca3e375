"""The Data page's "New study" forms: a label study and a play study (play the user or the agent).

UI only: the forms collect what the person chose; the study is checked and created by
``core.studio.study_setup`` / ``core.studio.study_service`` (annotators must be accounts).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.studio.accounts import known_accounts
from core.studio.choices import method_label
from core.studio.plainwords import plain_status
from core.studio.roleplay import PLAY_BENCHMARKS, USER_PLAY_METHODS
from core.studio.store_access import Store
from core.studio.study_service import (
    APPLIES_TO,
    add_annotator,
    assign_study,
    check_annotators,
    create_study,
)
from core.studio.study_setup import create_study_from_form, pair_episodes, study_spec
from pages.common.ui import guarded

_TARGETS = {
    "Episodes": "episode",
    "Episode pairs (same sample first, never across benchmarks)": "episode_pair",
    "Imported sessions": "session",
}
_DEFAULT_KINDS = {
    "episode": ["persona_id"],
    "episode_pair": ["same_persona"],
    "session": ["fault_type", "shift_type", "intents"],
}


def _split_ids(text: str) -> list[str]:
    return [p.strip() for p in text.replace("\n", ",").split(",") if p.strip()]


def _create_and_assign(
    store: Store, spec: dict[str, Any], annotators: list[str], overlap: int
) -> dict[str, int]:
    check_annotators(annotators, known_accounts(store), file="study form")
    study = create_study(store, spec)
    for ann in annotators:
        add_annotator(store, ann)
    return assign_study(store, study.study_id, annotators, overlap=overlap) if annotators else {}


def _target_options(store: Store, target: str) -> dict[str, str]:
    if target == "session":
        from core.studio.study_service import session_rows

        return {
            r["session_id"]: f"{r['session_id']} · {r['n_user_turns']} user turns"
            for r in session_rows(store)
        }
    return {
        r["episode_id"]: f"{r['episode_id']} · {r['benchmark']} · {r['method']} · "
        f"{r['persona_id']} · {plain_status(r['outcome'], r['status'])}"
        for r in store.episode_rows(status="ended")
    }


def create_form(store: Store) -> None:
    choice = st.radio("Items to label", list(_TARGETS), horizontal=True, key="stu-target")
    target = _TARGETS[choice]
    options = _target_options(store, target)
    if not options:
        what = "imported sessions (Sessions page)" if target == "session" else "ended episodes"
        st.info(f"No {what} to build a study from yet.")
        return
    kinds = [k for k, applies in APPLIES_TO.items() if target in applies and k != "comment"]
    with st.form("stu-create", enter_to_submit=True):
        name = st.text_input("Study name", key="stu-name")
        description = st.text_area("Instructions for annotators", key="stu-desc")
        picked = st.multiselect(
            "Items",
            list(options),
            format_func=lambda i: options.get(i, i),
            key="stu-items",
        )
        first_n = st.number_input(
            "…or take the first N (0 = use the picks above)",
            min_value=0,
            max_value=len(options),
            value=0,
            step=1,
            key="stu-first-n",
        )
        label_kinds = st.multiselect(  # one widget per item kind: switching keeps each choice
            "Labels to ask for", kinds, default=_DEFAULT_KINDS[target], key=f"stu-kinds-{target}"
        )
        c1, c2, c3 = st.columns(3)
        overlap = c1.number_input(
            "Annotators per item (overlap k)",
            min_value=1,
            max_value=50,
            value=2,
            step=1,
            key="stu-overlap",
        )
        seed = c2.number_input("Assignment seed", value=0, step=1, key="stu-seed")
        blind = c3.checkbox("Blind (hide model, method, other labels)", True, key="stu-blind")
        who = st.multiselect("Annotators (accounts)", known_accounts(store), key="stu-annotators")
        go_ = st.form_submit_button("Create study", type="primary")
    if not go_:
        return
    items = list(options)[: int(first_n)] if first_n else picked
    spec: dict[str, Any] = {
        "name": name.strip(),
        "description": description,
        "label_kinds": label_kinds,
        "overlap": int(overlap),
        "blind": blind,
        "seed": int(seed),
    }
    if not label_kinds:
        st.error("Choose at least one label to ask for.")
        return
    if target == "episode":
        spec["episodes"] = items
    elif target == "session":
        spec["sessions"] = items
    else:
        pairs, left = pair_episodes(store, items)
        if left:
            st.warning(
                f"{len(left)} episode(s) had no partner on the same benchmark and are left out: "
                + ", ".join(left[:10])
            )
        if not pairs:
            st.error("No two picked episodes share a benchmark: nothing to pair.")
            return
        spec["episode_pairs"] = [list(p) for p in pairs]
    annotators = list(who)
    if guarded(study_spec, spec) is None:
        return
    made = guarded(_create_and_assign, store, spec, annotators, int(overlap))
    if made is not None:
        per = ", ".join(f"{a}: {n}" for a, n in made.items()) or "nobody yet"
        st.session_state["stu-flash"] = (
            f"Created study '{spec['name']}'. Items per annotator: {per}."
        )
        st.rerun()


KIND_NAMES = {
    "label": "Label episodes or sessions",
    "play_user": "Play as user",
    "play_agent": "Play as agent",
}


def play_form(store: Store, kind: str) -> None:
    """A play study: samples by filter and seeded draw, personas, the other seat, accounts."""
    from core.studio.choices import load_personas

    with st.form(f"stu-play-{kind}", enter_to_submit=False):
        name = st.text_input("Study name", key=f"stu-{kind}-name")
        description = st.text_area("Instructions for annotators", key=f"stu-{kind}-desc")
        c1, c2, c3 = st.columns(3)
        benchmark = c1.selectbox(
            "Benchmark", [b for b in PLAY_BENCHMARKS if b != "mock"], key=f"stu-{kind}-bench"
        )
        count = c2.number_input(
            "Samples (seeded draw)", min_value=1, value=3, step=1, key=f"stu-{kind}-count"
        )
        sample_seed = c3.number_input("Draw seed", value=0, step=1, key=f"stu-{kind}-sseed")
        c4, c5 = st.columns(2)
        source = c4.text_input("Only this source (optional)", key=f"stu-{kind}-source")
        ids = c5.text_input("Or these sample ids (comma-separated)", key=f"stu-{kind}-ids")
        personas = st.multiselect(
            "Personas (one condition each)",
            sorted(load_personas()),
            default=["rational"],
            key=f"stu-{kind}-personas",
        )
        extra: dict[str, Any] = {}
        if kind == "play_user":
            c6, c7 = st.columns(2)
            extra["agent"] = (
                c6.text_input(
                    "Agent on the other side ('symbolic' or a model spec)",
                    value="symbolic",
                    key=f"stu-{kind}-agent",
                ).strip()
                or "symbolic"
            )
            extra["method"] = c7.selectbox(
                "Agent method", USER_PLAY_METHODS, format_func=method_label, key=f"stu-{kind}-m"
            )
        else:
            c6, c7 = st.columns(2)
            extra["user_reader"] = (
                c6.text_input(
                    "Simulated user reads with ('offline' or a model spec)",
                    value="offline",
                    key=f"stu-{kind}-reader",
                ).strip()
                or "offline"
            )
            extra["patience_visible"] = c7.checkbox(
                "Show the patience meter", False, key=f"stu-{kind}-meter"
            )
        annotators = st.multiselect(
            "Annotators (accounts)", known_accounts(store), key=f"stu-{kind}-annotators"
        )
        c8, c9, c10 = st.columns(3)
        overlap = c8.number_input(
            "People per sample (overlap)", 1, 50, 1, step=1, key=f"stu-{kind}-overlap"
        )
        seed = c9.number_input("Assignment seed", value=0, step=1, key=f"stu-{kind}-seed")
        blind_ = c10.checkbox("Blind", True, key=f"stu-{kind}-blind")
        go_ = st.form_submit_button("Create study", type="primary")
    if not go_:
        return
    samples: dict[str, Any] = {"benchmark": benchmark, "seed": int(sample_seed)}
    if _split_ids(ids):
        samples["ids"] = _split_ids(ids)
    else:
        samples["count"] = int(count)
    if source.strip():
        samples["source"] = source.strip()
    data = {
        "name": name.strip(),
        "kind": kind,
        "description": description,
        "samples": samples,
        "personas": list(personas),
        "annotators": list(annotators),
        "overlap": int(overlap),
        "seed": int(seed),
        "blind": bool(blind_),
        **extra,
    }
    made = guarded(create_study_from_form, store, data)
    if made is not None:
        per = ", ".join(f"{a}: {n}" for a, n in made["per_annotator"].items())
        st.session_state["stu-flash"] = (
            f"Created study '{data['name']}': {made['items']} item(s), "
            f"{made['assignments']} assignment(s). Items per annotator: {per}."
        )
        st.rerun()
