"""The label form of a study item: its glossary, the keyboard-friendly form and a labels table.

UI only: choices and earlier labels come from ``core.studio.study_service``'s item view; the
Annotate page stores what the form returns with one engine call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core.studio.glossary import choice_title, glossary
from core.studio.markdown import md_escape
from core.studio.study_service import SEVERITIES, WHO_VALUES, ItemView, ShownLabel

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
