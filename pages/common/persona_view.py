"""The persona card and the current goal on the play-as-user page (UI only).

Both render :class:`core.studio.persona_card.PersonaCard`: the customer the world knows (or
"the customer" when the world has no profile), the persona's manner, the world's profile facts,
and the current goal with a "not in your request" marker recomputed after every shift. Every
text from the world or the persona file is escaped or inert.
"""

from __future__ import annotations

import streamlit as st

from core.studio.markdown import md_escape
from core.studio.persona_card import PersonaCard


def persona_box(card: PersonaCard, key: str) -> None:
    """Who the person plays: name (and age) from the world, manner from the persona."""
    with st.container(border=True, key=key):
        st.subheader(md_escape(card.heading))
        if card.name is None:
            st.caption("This shop knows no name for its customers: you are an anonymous shopper.")
        st.markdown(":material/theater_comedy: **How you behave**")
        st.text(f"Persona: {card.persona}\n" + "\n".join(card.manner))
        if card.traits:
            st.caption("Style: " + md_escape(", ".join(card.traits)))
        if card.facts:
            st.markdown(":material/badge: **Facts about you**")
            st.text("\n".join(f"{k.replace('_', ' ')}: {v}" for k, v in card.facts.items()))


def goal_lines(card: PersonaCard) -> None:
    """What the person wants now, each line marked against the opening request."""
    st.subheader("What you want now")
    for line in card.goal:
        marks = []
        if not line.in_request:
            marks.append("not in your request")
            if line.told:
                marks.append("you told the agent")
        suffix = f"  ({' · '.join(marks)})" if marks else ""
        st.text(f"• {line.phrase}{suffix}")
    if card.goal:
        st.caption("Lines marked “not in your request” are what the agent can only learn from you.")
