"""Play as agent: a researcher is the agent against the simulated user.

Blind by construction: after set-up this page holds only the episode id and reads the episode
through ``core.studio.roleplay.agent_play_view`` (the allow-listed agent view model). It never
reads the researcher view, the sample body or the header's config; the sample picker shows
opaque ids.
"""

from __future__ import annotations

import streamlit as st

from core.model.actions import Ask, EnvOp, Propose
from core.model.world import EnvAction
from core.studio import roleplay as play
from core.studio.markdown import md_escape
from pages.common.auth import current_user
from pages.common.play import (
    conversation,
    remember_episode,
    setup_controls,
    shop,
    tool_form,
)
from pages.common.store import get_store
from pages.common.ui import guarded

KEY = "play_agent_episode"

store = get_store()
user = current_user()
st.title("Play as agent")

eid = st.session_state.get(KEY)
if eid is None:
    from_url = st.query_params.get("episode")
    if from_url and play.playable(store, from_url, "agent"):
        eid = from_url
        st.session_state[KEY] = eid

if eid is None:
    st.caption(
        "You are the agent. The simulated user opens with a request that may be faulty, "
        "answers your messages and may silently change their mind. Work the host's tools, "
        "message the user, and give your final answer."
    )
    setup = setup_controls("play_agent", store)
    show_patience = st.checkbox(
        "Study condition: show me the user's patience meter",
        key="play_agent_show_patience",
    )
    if setup is not None and st.button("Start episode", type="primary", key="play_agent_start"):
        started = guarded(
            play.start_agent_play,
            store,
            benchmark=setup.benchmark,
            sample_id=setup.sample_id,
            persona=setup.persona,
            seed=setup.seed,
            show_patience=show_patience,
            player=user.name if user else None,
        )
        if started is not None:
            remember_episode(KEY, started)
            st.rerun()
    st.stop()

view = guarded(play.agent_play_view, store, eid)
if view is None:
    remember_episode(KEY, None)
    st.stop()

top = st.container(horizontal=True, vertical_alignment="center")
top.caption(f"Episode {eid} · {view.benchmark}")
if top.button("New episode", key="play_agent_new"):
    remember_episode(KEY, None)
    st.rerun()

m1, m2, m3 = st.columns(3)
m1.metric("Turn", view.turn)
m2.metric("Turns left", view.turns_left)
if view.patience is not None:
    m3.metric("User's patience", f"{view.patience:g}")
    if view.costs:
        st.caption(
            "Costs: " + ", ".join(f"{k.replace('_', ' ')} {v:g}" for k, v in view.costs.items())
        )

if view.ended:
    outcome = view.outcome.value if view.outcome else "ended"
    if outcome == "SUCCESS":
        st.success(f"Episode over: {outcome}: the user accepted your answer.")
    else:
        st.error(f"Episode over: {outcome}.")
elif view.forced_final:
    st.warning("The user wants your final answer now.")
    if view.format_hint:
        st.text(view.format_hint)

action: EnvOp | Ask | Propose | None = None
left, right = st.columns([5, 4])
with left:
    st.subheader("Conversation")
    with st.chat_message("user"):
        st.caption("opening request")
        st.text(view.query)
    conversation(view.transcript)
with right:
    st.subheader("Tools")
    call: EnvAction | None = None
    if view.benchmark == "webshop":
        page = guarded(play.shop_page, view)
        if page is not None:
            with st.container(border=True, key="play_agent_shop"):
                call = shop(page, "play_agent_shop", disabled=view.ended)
    else:
        call = tool_form(view.tools, "play_agent_tools", disabled=view.ended)
        last = next((e for e in reversed(view.transcript) if e.role == "environment"), None)
        if last is not None:
            st.caption(f"Last result (turn {last.turn})")
            st.code(last.text, language="json", wrap_lines=True)
    if call is not None:
        action = EnvOp(action=call)
    st.subheader("Final answer")
    with st.form("play_agent_final_form", border=False):
        answer = st.text_input(
            "Your final answer",
            key="play_agent_final_text",
            placeholder="done" if view.benchmark != "webshop" else "my purchase",
            disabled=view.ended,
        )
        if st.form_submit_button("Give final answer", disabled=view.ended):
            action = Propose(text=answer.strip() or "done")
    if view.benchmark == "webshop":
        st.caption(md_escape("On WebShop, Buy Now is your proposal: it is judged at once."))

message = st.chat_input("Message the user", key="play_agent_message", disabled=view.ended)
if message and message.strip():
    action = Ask(text=message.strip())

if action is not None and not view.ended:
    if guarded(play.agent_play_step, store, eid, action) is not None:
        st.rerun()
