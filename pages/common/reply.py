"""The Play as user reply box: type, see what the agent will learn, correct it, send.

UI only: the reading comes from ``core.studio.reply_check.check_reply`` and the reply is sent
through ``send_reply`` (which reads the words again on the server). The reading shows in plain
words as soon as the text is committed (leaving the box, Ctrl+Enter or "Check"); corrections are
explicit and listed; a contradiction of the private goal is asked about once before sending.
"""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from core.studio.markdown import md_escape
from core.studio.reply_check import ReplyCheck, check_reply, send_reply
from pages.common.play import label_md
from pages.common.ui import guarded


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def _reading(check: ReplyCheck, n: int) -> tuple[list[str], list[str]]:
    """Show the reading and the correction boxes; return (added, removed)."""
    added: list[str] = []
    removed: list[str] = []
    with st.container(border=True, key="play_user_reading"):
        st.markdown("**What the agent will learn from your words**")
        if check.learns:
            for line in check.learns:
                said = f"   (from “{line.said}”)" if line.said else ""
                st.text(f"• {line.label}: {line.phrase}{said}")
        else:
            st.text(check.summary)
        st.caption(f"Your reply reads as {check.act_plain}.")
        if check.declined:
            st.caption("You don't say: " + ", ".join(check.declined) + ".")
        for c in check.contradictions:
            st.warning(
                md_escape(f"You wrote “{c.said}” — but your goal is: {c.goal} ({c.label})."),
                icon=":material/warning:",
            )
        if check.fallback:
            st.caption(
                f"The model reader failed ({check.detail[:120]}); the offline reader read it."
            )
        with st.expander("Not what you meant? Correct the reading", expanded=False):
            st.caption(
                "Tick what your reply really tells the agent. Your corrections are recorded "
                "next to the reading (they never replace your words)."
            )
            tag = _digest(check.text)
            for line in check.requirements:
                asked = " — asked" if line.asked else ""
                ticked = st.checkbox(
                    label_md(f"{line.label}: {line.phrase}{asked}"),
                    value=line.read,
                    key=f"play_user_fix_{n}_{tag}_{line.slot}",
                )
                if ticked and not line.read:
                    added.append(line.slot)
                elif line.read and not ticked:
                    removed.append(line.slot)
        if added or removed:
            names = {x.slot: x.label for x in check.requirements}
            parts = [f"+ {names[s]}" for s in added] + [f"− {names[s]}" for s in removed]
            st.info("Your corrections: " + ", ".join(parts) + ".")
    return added, removed


def reply_box(
    store: Any,
    episode_id: str,
    n: int,
    reaction: bool,
    *,
    reader: str,
    client: Any,
    answers: int | None = None,
) -> None:
    """The reply box of turn ``n`` (reruns the page after a reply is sent).

    ``answers`` is the prompt this tab showed: a reply from a stale tab is refused.
    """
    key = f"play_user_draft_{n}"
    text = st.text_area(
        "Your reaction to the proposal" if reaction else "Your reply to the agent",
        key=key,
        placeholder="Type your answer in your own words…",
        height=90,
    )
    row = st.container(horizontal=True)
    row.button("Check what the agent will learn", key=f"play_user_check_{n}")
    send = row.button("Send reply", type="primary", key=f"play_user_send_{n}")
    if not text.strip():
        if send:
            st.warning("Type your reply first.")
        return
    check = guarded(check_reply, store, episode_id, text, reader=reader)
    if check is None:
        return
    added, removed = _reading(check, n)
    confirm_key = f"play_user_confirm_{n}"
    asked_for = st.session_state.get(confirm_key)
    deliberate: bool | None = None
    if check.contradictions and asked_for == _digest(text):
        with st.container(border=True, key="play_user_deliberate"):
            st.markdown(
                "**Your reply says something other than your goal.** Is that deliberate "
                "(your character would say it)?"
            )
            c1, c2 = st.columns(2)
            if c1.button("Yes, it's deliberate — send it", key=f"play_user_deliberate_{n}"):
                deliberate = True
            if c2.button("No — let me change my reply", key=f"play_user_redo_{n}"):
                st.session_state.pop(confirm_key, None)
                st.rerun()
        if deliberate is None:
            return
    elif not send:
        return
    if check.contradictions and deliberate is None:
        st.session_state[confirm_key] = _digest(text)
        st.rerun()
    sent = guarded(
        send_reply,
        store,
        episode_id,
        text,
        added=added,
        removed=removed,
        deliberate=deliberate,
        reader=reader,
        client=client,
        answers=answers,
    )
    if sent is not None:
        st.session_state.pop(confirm_key, None)
        st.rerun()
