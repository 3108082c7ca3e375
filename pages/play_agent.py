"""Play as agent: a person is the agent against the simulated user.

Blind by construction: after set-up this page holds only the episode id and reads the episode
through ``core.studio.roleplay.agent_play_view`` (the allow-listed agent view model). It never
reads the researcher view, the sample body or the header's config; the sample picker shows
opaque ids. An episode opens only for the person who plays it (or whose study assignment it
fulfils), and a sample the person plays (or is assigned) as the user never opens here. Once the
episode has ended, a debrief shows the hidden intent, the shifts and where they fired, and the
episode's GRIP metrics.
"""

from __future__ import annotations

import streamlit as st

from core.model.actions import Ask, EnvOp, Propose
from core.model.world import EnvAction
from core.studio import roleplay as play
from core.studio.blind import debrief_for
from core.studio.env import env_name, settings
from core.studio.links import link_int
from core.studio.markdown import md_escape
from core.studio.plainwords import plain_outcome
from core.studio.plays import assigned_play, complete_assignment
from pages.common.auth import auth_mode, current_user
from pages.common.play import (
    conversation,
    play_controls,
    remember_episode,
    resolve_episode,
    setup_controls,
    start_study_item,
    tool_form,
    tool_result,
)
from pages.common.shop_view import shop
from pages.common.store import get_store
from pages.common.ui import guarded

KEY = "play_agent_episode"

store = get_store()
user = current_user()
if user is None:  # app.py routes anonymous visitors to the sign-in page; signed out meanwhile
    st.info("You are signed out.")
    st.stop()
strict = user.role == "annotator"
st.title("Play as agent")

eid = resolve_episode(store, KEY, "agent", user.name, allow_unowned=auth_mode() == "none")

raw_assignment = st.query_params.get("assignment")
assignment = link_int(raw_assignment)
if eid is None and raw_assignment and assignment is None:
    st.error("No such study item: the link's assignment number is not valid.")
    st.stop()
if eid is None and assignment is not None:
    item = guarded(assigned_play, store, assignment, user.name, "agent")
    if item is None:
        st.stop()
    if item.episode_id is not None:
        remember_episode(KEY, item.episode_id)
        st.rerun()
    st.info(
        "A study item: the study fixes the sample and condition. You are the agent; the "
        "customer's goal stays hidden until the episode ends."
    )
    start_study_item(
        KEY,
        "play_agent",
        item,
        play.start_agent_play,
        store,
        user.name,
        **item.start_args(),
    )
    st.stop()

if eid is None:
    st.caption(
        "You are the agent. The simulated user opens with a request that may be faulty, "
        "answers your messages and may silently change their mind. Work the host's tools, "
        "message the user, and give your final answer."
    )
    setup = setup_controls("play_agent", store, person=user.name, strict=strict)
    show_patience = st.checkbox(
        "Study condition: show me the user's patience meter",
        key="play_agent_show_patience",
    )
    readers = ["offline", *([m] if (m := settings().play_interpreter.strip()) else [])]
    interpreter = st.selectbox(
        "How the simulated user reads your messages",
        readers,
        key="play_agent_interpreter",
        help=f"offline = the built-in question interpreter; set {env_name('play_interpreter')} "
        "to offer a model.",
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
            player=user.name,
            strict=strict,
            interpreter=str(interpreter),
        )
        if started is not None:
            remember_episode(KEY, started)
            st.rerun()
    st.stop()

view = guarded(play.agent_play_view, store, eid)
if view is None:
    remember_episode(KEY, None)
    st.stop()

# the turn this tab showed on its last run: an action is made on that view (a stale tab is refused)
shown = st.session_state.get("play_agent_turn")
acts_on = shown[1] if isinstance(shown, tuple) and shown[0] == eid else None
st.session_state["play_agent_turn"] = (eid, view.turn)

top = st.container(horizontal=True, vertical_alignment="center")
top.caption(f"Episode {eid} · {view.benchmark}")
play_controls(top, store, KEY, "play_agent", eid, ended=view.ended, player=user.name)

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
    complete_assignment(store, eid)
    outcome = view.outcome.value if view.outcome else "ended"
    if outcome == "SUCCESS":
        st.success(f"Episode over: {plain_outcome(outcome)} — the user accepted your answer.")
    else:
        st.error(f"Episode over: {plain_outcome(outcome)}.")
    debrief = guarded(debrief_for, store, eid, user.name)
    if debrief is not None:
        with st.container(border=True, key="play_agent_debrief"):
            st.subheader("Debrief: what you could not see")
            st.caption(f"{debrief.outcome} — {debrief.ending}.")
            d1, d2 = st.columns(2)
            with d1:
                st.markdown("**What the customer really wanted at the start**")
                st.text("\n".join(f"• {w}" for w in debrief.wanted_at_start) or "—")
                if debrief.shifts:
                    st.markdown("**…and at the end**")
                    st.text("\n".join(f"• {w}" for w in debrief.wanted_at_end) or "—")
            with d2:
                st.markdown("**Silent shifts**")
                if debrief.shifts:
                    for sh in debrief.shifts:
                        st.text(f"turn {sh.turn} · {sh.operator} ({sh.trigger}): {sh.change}")
                else:
                    st.text("None fired: the goal never changed.")
            st.markdown("**This episode's GRIP metrics** (— = not defined for this episode)")
            st.dataframe(
                [m.model_dump() for m in debrief.metrics],
                hide_index=True,
                column_config={"meaning": "counted over"},
            )
elif view.forced_final:
    st.warning("The user wants your final answer now.")
    if view.format_hint:
        st.text(view.format_hint)

action: EnvOp | Ask | Propose | None = None
# the tools (the shop, the tool forms and their results) are the agent's workspace: the wider column
left, right = st.columns([2, 3])
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
            with st.container(border=True, key="play_agent_last_result"):
                st.markdown(f":material/output: **Last result** (turn {last.turn})")
                tool_result(last.text)
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
    if guarded(play.agent_play_step, store, eid, action, acts_on=acts_on) is not None:
        st.rerun()
