"""Play as user: an annotator role-plays a persona against an agent (symbolic or LLM).

The page keeps only the episode id. Each rerun lets the agent act until it waits for the user
(``core.studio.roleplay.advance``: the agent is rebuilt from the header by replaying its past
turns, and every action is stored before anything is shown), then shows the user view: persona card,
the current private intent, shift banners, the patience meter, the chat and the verdicts.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.paths import default_store_path
from core.studio import roleplay as play
from core.studio.environment import env_name, settings
from core.studio.markdown import md_escape
from core.studio.play_survey import save_play_survey
from pages.common.auth import current_user
from pages.common.play import conversation, remember_episode, setup_controls
from pages.common.store import get_store
from pages.common.ui import guarded
from pages.common.widgets import patience_meter

KEY = "play_user_episode"
MODEL_ENV = env_name("play_model")
SYMBOLIC = "symbolic"


@st.cache_resource(show_spinner=False)
def _client(spec: str, cache: str) -> Any:
    from pathlib import Path

    from core.studio.providers import play_client

    return play_client(spec, Path(cache))


store = get_store()
user = current_user()
assert user is not None  # app.py routes anonymous visitors to the sign-in page
st.title("Play as user")

eid = st.session_state.get(KEY)
if eid is None:
    from_url = st.query_params.get("episode")
    if from_url and play.playable(store, from_url, "user"):
        eid = from_url
        st.session_state[KEY] = eid

if eid is None:
    st.caption(
        "You role-play a customer. You see your persona and your private goal; the agent sees "
        "only your opening request. Answer its questions in character and tick what each "
        "message discloses. Your goal may change silently — a banner tells you when."
    )
    setup = setup_controls("play_user", store)
    c1, c2 = st.columns(2)
    method = c1.selectbox(
        "Agent method (symbolic ladder)", play.USER_PLAY_METHODS, key="play_user_method"
    )
    model = settings().play_model.strip()
    kinds = [SYMBOLIC, model] if model else [SYMBOLIC]
    agent_kind = c2.selectbox(
        "Agent", kinds, key="play_user_agent", help=f"Set {MODEL_ENV} to offer an LLM agent."
    )
    if setup is not None and st.button("Start episode", type="primary", key="play_user_start"):
        started = guarded(
            play.start_user_play,
            store,
            benchmark=setup.benchmark,
            sample_id=setup.sample_id,
            persona=setup.persona,
            seed=setup.seed,
            method=str(method),
            model=None if agent_kind == SYMBOLIC else str(agent_kind),
            player=user.name if user else None,
        )
        if started is not None:
            remember_episode(KEY, started)
            st.rerun()
    st.stop()

header = guarded(store.header, eid)
if header is None:
    remember_episode(KEY, None)
    st.stop()
client = None
if header.agent != SYMBOLIC:
    client = guarded(_client, header.agent, str(default_store_path()))
    if client is None:
        st.stop()
with st.spinner("The agent is working…"):
    if guarded(play.advance, store, eid, client=client) is None:
        st.stop()
pv = play.user_play_view(store, eid)
uv = pv.user

top = st.container(horizontal=True, vertical_alignment="center")
top.caption(f"Episode {eid} · {header.benchmark} · agent {pv.method} ({pv.agent})")
if top.button("New episode", key="play_user_new"):
    remember_episode(KEY, None)
    st.rerun()

for banner in pv.shifts:
    st.warning(f"Your goal has changed (turn {banner.turn}): {md_escape(banner.text)}", icon="🔀")

side, main = st.columns([2, 3])
with side:
    with st.container(border=True, key="play_user_persona"):
        st.subheader(f"You are {md_escape(uv.persona.name)}")
        st.text(uv.persona.bio)
        if uv.persona.traits:
            st.caption("Traits: " + md_escape(", ".join(uv.persona.traits)))
    patience_meter(uv.patience, uv.budget)
    st.subheader("What you want now")
    for line in uv.intent:
        marks = []
        if line.hidden:
            marks.append("not in your request")
        if line.known:
            marks.append("agent knows")
        suffix = f"  ({', '.join(marks)})" if marks else ""
        st.text(f"• {line.phrase}{suffix}")
    if uv.context:
        st.caption("Facts about you")
        for fact, value in uv.context.items():
            st.text(f"{fact}: {value}")
with main:
    st.subheader("Conversation")
    with st.chat_message("user"):
        st.caption("your opening request")
        st.text(uv.query)
    notes: dict[int, list[tuple[str, str]]] = {}
    for v in pv.verdicts:
        verdict = "accepted" if v.accepted else "rejected"
        notes.setdefault(v.turn, []).append(
            ("success" if v.accepted else "error", f"Proposal {verdict} by execution: {v.reason}")
        )
    conversation(uv.transcript, notes=notes, observations="hidden")

awaiting = uv.pending_question is not None and not uv.ended
if awaiting:
    with main:
        st.markdown("**Tick what your reply tells the agent:**")
        n = len(uv.transcript)
        boxes = {}
        for line in uv.intent:
            asked = " — asked" if line.slot in uv.pending_asked else ""
            boxes[line.slot] = st.checkbox(
                md_escape(f"{line.label}: {line.phrase}{asked}"),
                key=f"play_user_disclose_{n}_{line.slot}",
            )
    text = st.chat_input("Reply to the agent", key="play_user_reply")
    if text:
        disclosed = [slot for slot, ticked in boxes.items() if ticked]
        if guarded(play.reply, store, eid, text, disclosed, client=client) is not None:
            st.rerun()
elif uv.ended:
    outcome = uv.outcome.value if uv.outcome else "ended"
    st.info(f"Episode over: {outcome} ({pv.reason or 'no reason recorded'}).")
    if st.session_state.get("play_user_survey_done") == eid:
        st.success("Thank you — your survey is saved.")
    else:
        with st.form("play_user_survey"):
            st.subheader("How was it?")
            understood = st.slider(
                "The agent understood what I wanted", 1, 5, 3, key="play_user_s_understood"
            )
            questions = st.slider(
                "The agent's questions were worth my patience", 1, 5, 3, key="play_user_s_questions"
            )
            adapted = st.radio(
                "When my goal changed, the agent adapted",
                ["yes", "partly", "no", "my goal did not change"],
                key="play_user_s_adapted",
                horizontal=True,
            )
            realism = st.slider("I could stay in character", 1, 5, 3, key="play_user_s_realism")
            comment = st.text_area("Anything else?", key="play_user_s_comment")
            if st.form_submit_button("Save survey", type="primary"):
                saved = guarded(
                    save_play_survey,
                    store,
                    annotator=user.name,
                    episode_id=eid,
                    answers={
                        "understood": understood,
                        "questions_worth_it": questions,
                        "adapted": adapted,
                        "in_character": realism,
                        "comment": comment,
                        "outcome": outcome,
                        "shifts": len(pv.shifts),
                    },
                )
                if saved is not None:
                    st.session_state["play_user_survey_done"] = eid
                    st.rerun()
else:
    st.info("The agent is acting…")
