"""What a study item shows: the transcript box and the item cards (episodes, a session, a sample).

UI only: every value comes from ``core.studio.study_service``'s view models (built from
allow-lists). Transcript and instruction texts are rendered inert.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.studio.plainwords import plain_outcome
from core.studio.study_service import ItemView, TranscriptLine
from pages.common.tool_view import call_view, full_tool_result
from pages.common.ui import plain

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
