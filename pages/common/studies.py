"""Human-study widgets: item cards, the label form, study figures and the study set-up panel.

UI only: every value comes from ``core.studies`` (view models built from allow-lists) and every
write goes through one engine call. Transcript and instruction texts are rendered inert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from core.studio.accounts import known_accounts
from core.studio.blind import why_hidden
from core.studio.choices import method_label
from core.studio.glossary import choice_title, glossary
from core.studio.markdown import md_escape
from core.studio.plainwords import plain_outcome, plain_status
from core.studio.roleplay import PLAY_BENCHMARKS, USER_PLAY_METHODS
from core.studio.store_access import Store
from core.studio.study_display import SESSION_MEASURES, fmt_percent
from core.studio.study_service import (
    APPLIES_TO,
    SEVERITIES,
    WHO_VALUES,
    ItemView,
    ShownLabel,
    TranscriptLine,
    add_annotator,
    assign_study,
    check_annotators,
    create_study,
    get_study,
    list_annotators,
    list_studies,
    set_study_status,
    study_progress,
)
from core.studio.study_setup import create_study_from_form, pair_episodes, study_spec
from pages.common.tool_view import call_view, full_tool_result
from pages.common.ui import guarded, plain

if TYPE_CHECKING:  # plotly is imported on use: the Annotate page never draws a figure
    import plotly.graph_objects as go

# (label kind, value, turn) as collected from the label form
LabelEntry = tuple[str, Any, int | None]

_KIND_TITLES = {
    "persona_id": "Which persona is the user playing?",
    "same_persona": "Same persona in A and B?",
    "realism": "How realistic is the user (1 = not at all, 5 = fully)?",
    "fault_type": "Communication fault in the user's request",
    "shift_type": "Intent shift",
    "who_broke": "Who broke the conversation (per turn, optional)",
    "intents": "The user's intents, one per line",
    "comment": "Comment (optional)",
}


_ICON = {
    "user": ":material/person:",
    "agent": ":material/smart_toy:",
    "environment": ":material/build:",
    "system": ":material/settings:",
}


def transcript_lines(lines: Sequence[TranscriptLine], *, height: int = 460) -> None:
    """Render transcript lines inert in a scrollable box that opens at the first line.

    Plain bordered rows, not chat messages: a fixed-height box holding chat messages sticks
    to its bottom, so the annotator would open every item at its last line. Tool calls read as
    on the Inspect page (a title and ``name: value`` lines); tool results are folded, in full.
    """
    with st.container(height=height):
        for line in lines:
            with st.container(border=True):
                st.caption(
                    f"{_ICON.get(line.role, _ICON['system'])} turn {line.turn} · {line.role}"
                )
                if line.tool is not None:
                    call_view(line.tool, line.args)
                elif line.role == "environment":
                    with st.expander("Tool result", icon=":material/output:"):
                        full_tool_result(line.text)
                else:
                    st.text(line.text)


def item_cards(view: ItemView) -> None:
    """Show what is being labelled: one or two episodes, a session, or a sample to play."""
    if view.instructions:
        with st.expander("Instructions", expanded=False):
            plain(view.instructions)
    if view.condition is not None:
        st.caption(f"Condition: {view.condition.label}")
    if view.episodes:
        cols = st.columns(len(view.episodes))
        for col, card in zip(cols, view.episodes, strict=True):
            with col:
                st.markdown(f"**Episode {card.ref if view.blind else 'details'}**")
                if not view.blind:
                    facts = {
                        "episode": card.episode_id,
                        "method": card.method,
                        "agent": card.agent,
                        "voice": card.user_voice,
                        "persona": card.persona_id,
                        "outcome": plain_outcome(card.outcome) if card.outcome else None,
                    }
                    st.caption(" · ".join(f"{k}: {v}" for k, v in facts.items() if v))
                st.caption(f"{card.benchmark} · {card.n_user_turns} user messages")
                transcript_lines(card.transcript)
    elif view.session is not None:
        s = view.session
        st.caption(f"Session {s.ref} · {s.n_tool_calls} tool calls")
        transcript_lines(s.transcript)
    elif view.sample_query is not None:
        st.markdown("**Opening request of the sample to play**")
        plain(view.sample_query)


def _latest(labels: Sequence[ShownLabel], kind: str) -> ShownLabel | None:
    mine = [lb for lb in labels if lb.label_kind == kind and lb.turn is None]
    return mine[-1] if mine else None


def _index(options: Sequence[Any], value: Any) -> int | None:
    return list(options).index(value) if value in options else None


def label_glossary(view: ItemView) -> None:
    """The glossary of the item's label choices: a plain description and an example each."""
    for kind in view.label_kinds:
        entries = glossary(kind)
        if not entries:
            continue
        name = "Fault glossary" if kind == "fault_type" else "Shift glossary"
        box = st.container(key=f"ann-glossary-{kind}")
        with box.expander(name, icon=":material/menu_book:", expanded=False):
            group = None
            for g in entries:
                if g.group and g.group != group:
                    group = g.group
                    st.markdown(f"**{md_escape(group)}**")
                st.markdown(f"**{md_escape(g.title)}** (`{g.value}`) — {md_escape(g.description)}")
                if g.example:
                    st.caption(f"Example: {md_escape(g.example)}")


def label_form(view: ItemView) -> list[LabelEntry] | None:
    """The keyboard-friendly label form of one item (Enter in a text field submits).

    Returns:
        The labels given, when the form was submitted this run; None otherwise.
    """
    aid = view.assignment_id
    mine = view.my_labels
    entries: list[LabelEntry] = []
    with st.form(key=f"ann-form-{aid}", enter_to_submit=True):
        for kind in view.label_kinds:
            key = f"ann-{aid}-{kind}"
            title = _KIND_TITLES.get(kind, kind)
            prev = _latest(mine, kind)
            choices = view.choices.get(kind)
            if kind in ("persona_id", "same_persona", "realism") and choices:
                value = st.radio(
                    title,
                    choices,
                    index=_index(choices, prev.value if prev else None),
                    horizontal=True,
                    key=key,
                )
                entries.append((kind, value, None))
            elif kind == "fault_type" and choices:
                # every choice in plain words with its description (the glossary has examples)
                words = {g.value: g for g in glossary(kind)}
                value = st.radio(
                    title,
                    choices,
                    index=_index(choices, prev.value if prev else None),
                    format_func=lambda v, k=kind: choice_title(k, v),
                    captions=[words[c].description if c in words else "" for c in choices],
                    key=key,
                )
                entries.append((kind, value, None))
            elif kind == "shift_type" and choices:
                c1, c2 = st.columns([3, 1])
                words = {g.value: g for g in glossary(kind)}
                value = c1.radio(
                    title,
                    choices,
                    index=_index(choices, prev.value if prev else None),
                    format_func=lambda v, k=kind: choice_title(k, v),
                    captions=[words[c].description if c in words else "" for c in choices],
                    key=key,
                )
                turn = c2.number_input(
                    "at turn", min_value=0, step=1, value=None, key=f"{key}-turn"
                )
                entries.append((kind, value, None if turn is None else int(turn)))
            elif kind == "who_broke":
                c1, c2, c3 = st.columns(3)
                turn = c1.number_input(title, min_value=0, step=1, value=None, key=f"{key}-turn")
                who = c2.selectbox("who", WHO_VALUES, index=None, key=f"{key}-who")
                sev = c3.selectbox("severity", SEVERITIES, index=None, key=f"{key}-severity")
                if turn is not None and who is not None:
                    value = {"who": who, "severity": None if who == "nobody" else sev}
                    entries.append((kind, value, int(turn)))
            elif kind == "intents":
                prev_text = "\n".join(prev.value) if prev and isinstance(prev.value, list) else ""
                text = st.text_area(title, value=prev_text, key=key)
                lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
                entries.append((kind, lines if lines else None, None))
        comment = st.text_input(_KIND_TITLES["comment"], key=f"ann-{aid}-comment")
        if comment.strip():
            entries.append(("comment", comment.strip(), None))
        submitted = st.form_submit_button("Save labels (Enter)", type="primary")
    if not submitted:
        return None
    given = [(k, v, t) for k, v, t in entries if v is not None]
    # re-submitting an unchanged prefilled label would only duplicate history
    return [
        (k, v, t)
        for k, v, t in given
        if not (t is None and (p := _latest(mine, k)) is not None and p.value == v)
    ]


def labels_table(labels: Sequence[ShownLabel], *, with_annotator: bool) -> None:
    """Show labels as a small table (values are stored JSON, shown as text)."""
    rows = [
        {
            **({"annotator": lb.annotator} if with_annotator else {}),
            "label": lb.label_kind,
            "value": choice_title(lb.label_kind, lb.value),
            "turn": "" if lb.turn is None else str(lb.turn),
            "at": lb.created_at[:19].replace("T", " "),
        }
        for lb in labels
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True)


# ---------------------------------------------------------------- figures


_LAYOUT: dict[str, Any] = {"margin": {"l": 10, "r": 10, "t": 40, "b": 10}, "height": 380}


def confusion_figure(matrix: pd.DataFrame, row_name: str, col_name: str) -> go.Figure:
    """A confusion matrix as an annotated plotly heatmap (rows: ``row_name``'s labels)."""
    import plotly.express as px

    fig = px.imshow(
        matrix.to_numpy(),
        x=[str(c) for c in matrix.columns],
        y=[str(i) for i in matrix.index],
        text_auto=True,
        color_continuous_scale="Blues",
        labels={"x": col_name, "y": row_name, "color": "units"},
        aspect="auto",
    )
    fig.update_layout(title=f"{row_name} (rows) vs {col_name} (columns)", **_LAYOUT)
    return fig


def sessions_box_figure(frame: pd.DataFrame) -> go.Figure:
    """Figure 7: misaligned vs matched clean sessions, platform score and tool calls (boxes)."""
    import plotly.express as px

    d = frame.assign(measure=frame["measure"].map(SESSION_MEASURES))
    fig = px.box(
        d,
        x="group",
        y="value",
        color="group",
        facet_col="measure",
        points="all",
        hover_data={"session_id": True, "pair": True},
        category_orders={"group": ["misaligned", "matched clean"]},
        color_discrete_map={"misaligned": "#d1495b", "matched clean": "#2e9e5b"},
    )
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_layout(showlegend=False, **_LAYOUT)
    return fig


def distribution_figure(frame: pd.DataFrame, kind: str) -> go.Figure:
    """Counts of one distribution (fault type / fault family / shift type) as bars."""
    import plotly.express as px

    d = frame[frame["kind"] == kind]
    fig = px.bar(d, x="label", y="count", labels={"label": kind, "count": "misaligned sessions"})
    fig.update_layout(title=f"{kind.capitalize()}s over misaligned sessions", **_LAYOUT)
    return fig


# ---------------------------------------------------------------- study set-up


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


def _create_form(store: Store) -> None:
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


_KIND_NAMES = {
    "label": "Label episodes or sessions",
    "play_user": "Play as user",
    "play_agent": "Play as agent",
}


def _play_form(store: Store, kind: str) -> None:
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
            format_func=_KIND_NAMES.get,
            horizontal=True,
            key="stu-kind",
        )
        if kind == "label":
            _create_form(store)
        else:
            _play_form(store, str(kind))
    if rows:
        st.subheader("Manage a study")
        _manage(store, rows)
