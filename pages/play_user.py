"""Play as user: an annotator role-plays a persona against an agent (symbolic or LLM).

The page keeps only the episode id. Each rerun lets the agent act until it waits for the user
(``core.studio.roleplay.advance``: the agent is rebuilt from the header by replaying its past
turns, and every action is stored before anything is shown), then shows the user view: persona
card, the current private intent, shift banners, the patience meter, the chat and the verdicts
in plain words. An episode opens only for the person who plays it (or whose study assignment it
fulfils); a study item (``?assignment=``) fixes the sample, and a sample the person plays (or is
assigned) as the agent never opens here.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.paths import default_store_path
from core.studio import roleplay as play
from core.studio.agent_replay import describe_action as describe
from core.studio.blind import blind_play
from core.studio.choices import method_label
from core.studio.env import env_name, settings
from core.studio.links import link_int
from core.studio.persona_card import persona_card
from core.studio.plainwords import plain_outcome, plain_termination
from core.studio.play_survey import save_play_survey, stored_survey, survey_lines
from core.studio.plays import assigned_play, complete_assignment, play_owner
from core.studio.providers import studio_agents
from pages.common.auth import auth_mode, current_user
from pages.common.persona_view import goal_lines, persona_box
from pages.common.play import (
    conversation,
    md_escape,
    play_controls,
    remember_episode,
    resolve_episode,
    setup_controls,
    start_study_item,
)
from pages.common.reply import reply_box
from pages.common.store import get_store
from pages.common.ui import guarded
from pages.common.widgets import patience_meter

KEY = "play_user_episode"
MODEL_ENV = env_name("play_model")
SYMBOLIC = "symbolic"
LIKERT = [1, 2, 3, 4, 5]


@st.cache_resource(show_spinner=False)
def _client(spec: str, cache: str) -> Any:
    from pathlib import Path

    from core.studio.providers import play_client

    return play_client(spec, Path(cache))


store = get_store()
user = current_user()
if user is None:  # app.py routes anonymous visitors to the sign-in page; signed out meanwhile
    st.info("You are signed out.")
    st.stop()
strict = user.role == "annotator"
st.title("Play as user")

eid = resolve_episode(store, KEY, "user", user.name, allow_unowned=auth_mode() == "none")

if eid is None:
    raw_assignment = st.query_params.get("assignment")
    assignment = link_int(raw_assignment)
    if raw_assignment and assignment is None:
        st.error("No such study item: the link's assignment number is not valid.")
        st.stop()
    if assignment is not None:
        item = guarded(assigned_play, store, assignment, user.name, "user")
        if item is None:
            st.stop()
        if item.episode_id is not None:
            remember_episode(KEY, item.episode_id)
            st.rerun()
        st.info(
            "A study item: the study fixes your sample"
            + (f" and persona ({item.persona})" if item.persona else "")
            + ". You role-play the customer; type every message yourself."
        )
        start_study_item(
            KEY, "play_user", item, play.start_user_play, store, user.name, **item.start_args()
        )
        st.stop()
    st.caption(
        "You role-play a customer. You see your persona and your private goal; the agent sees "
        "only your opening request. Answer its questions in character, in your own words; "
        "before you send, the page shows what the agent will learn from them. Your goal may "
        "change silently — a banner tells you when."
    )
    setup = setup_controls("play_user", store, person=user.name, strict=strict)
    c1, c2 = st.columns(2)
    method = c1.selectbox(
        "Agent method (symbolic ladder)",
        play.USER_PLAY_METHODS,
        format_func=method_label,
        key="play_user_method",
    )
    kinds = [SYMBOLIC, *studio_agents()]
    agent_kind = c2.selectbox(
        "Agent",
        kinds,
        key="play_user_agent",
        help=f"Set {MODEL_ENV} or DRIFTBENCH_MODELS (e.g. `driftbench models local`) to offer "
        "an LLM agent.",
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
            player=user.name,
            strict=strict,
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
reader = settings().play_interpreter.strip() or "offline"
with st.status("The agent is working…", expanded=client is not None) as progress:
    done = guarded(
        play.advance, store, eid, client=client, on_action=lambda a: progress.write(describe(a))
    )
    if done is None:
        progress.update(label="Something went wrong.", state="error", expanded=False)
        st.stop()
    ended = "The episode is over." if done.ended else "The agent is waiting for you."
    progress.update(label=ended, state="complete", expanded=False)
pv = play.user_play_view(store, eid)
uv = pv.user
owner = play_owner(store, eid)

top = st.container(horizontal=True, vertical_alignment="center")
facing = (
    "agent not named (blind study)"
    if blind_play(store, eid)
    else f"agent {method_label(pv.method)} ({pv.agent})"
)
top.caption(f"Episode {eid} · {header.benchmark} · {facing}")
play_controls(top, store, KEY, "play_user", eid, ended=uv.ended, player=user.name)

for banner in pv.shifts:
    st.warning(
        f"Your goal has changed (turn {banner.turn}): {md_escape(banner.text)}",
        icon=":material/alt_route:",
    )

side, main = st.columns([2, 3])
with side:
    card = guarded(persona_card, store, eid)
    if card is not None:
        persona_box(card, "play_user_persona")
    patience_meter(uv.patience, uv.budget)
    if card is not None:
        goal_lines(card)
with main:
    st.subheader("Conversation")
    with st.chat_message("user"):
        st.caption("your opening request")
        st.text(uv.query)
    notes: dict[int, list[tuple[str, str]]] = {}
    for v in pv.verdicts:
        verdict = "accepted" if v.accepted else "not accepted"
        notes.setdefault(v.turn, []).append(
            ("success" if v.accepted else "error", f"Proposal {verdict}: {v.plain}")
        )
    conversation(uv.transcript, notes=notes, observations="hidden")

# the prompt this tab showed on its last run: a reply answers that one (a stale tab is refused)
shown = st.session_state.get("play_user_prompt")
answers = shown[1] if isinstance(shown, tuple) and shown[0] == eid else None
st.session_state["play_user_prompt"] = (eid, uv.pending_prompt)
awaiting = (uv.pending_question is not None or uv.pending_reaction) and not uv.ended
if awaiting:
    with main:
        if uv.pending_reaction:
            with st.container(border=True, key="play_user_reaction"):
                st.markdown(
                    "**The agent's proposal was not accepted.** Tell the agent, in your own words."
                )
                if uv.unmet:
                    st.caption("What is still not right (only you see this):")
                    for problem in uv.unmet:
                        st.text(f"• {problem}")
                else:
                    st.caption(
                        "The shop cannot say exactly what is wrong; compare it with your goal."
                    )
    n = len(uv.transcript)
    with main:
        reply_box(store, eid, n, uv.pending_reaction, reader=reader, client=client, answers=answers)
    simulate = main.button(
        "Let the simulator answer this one",
        key=f"play_user_simulate_{n}",
        help="The simulated user writes this reply for you, under your persona's rules; it is "
        "recorded as the simulator's, not yours.",
    )
    if simulate and guarded(play.let_simulator_reply, store, eid, client=client, answers=answers):
        st.rerun()
elif uv.ended:
    complete_assignment(store, eid)
    outcome = uv.outcome.value if uv.outcome else "ended"
    st.info(f"Episode over: {plain_outcome(outcome)} — {plain_termination(pv.reason)}.")
    stored = stored_survey(store, annotator=user.name, episode_id=eid)
    if stored is not None:
        st.success("Thank you — your survey is saved.")
        with st.container(border=True, key="play_user_survey_stored"):
            st.caption("Your answers (saved once; they can no longer be changed)")
            st.text(survey_lines(stored))
    else:
        shifted = bool(pv.shifts)
        with st.form("play_user_survey"):
            st.subheader("How was it?")
            st.caption("1 = not at all · 5 = completely. Every question starts unanswered.")
            understood = st.radio(
                "The agent understood what I wanted",
                LIKERT,
                index=None,
                horizontal=True,
                key="play_user_s_understood",
            )
            questions = st.radio(
                "The agent's questions were worth my patience",
                LIKERT,
                index=None,
                horizontal=True,
                key="play_user_s_questions",
            )
            adapted = None
            if shifted:
                adapted = st.radio(
                    "When my goal changed, the agent adapted",
                    ["yes", "partly", "no"],
                    index=None,
                    key="play_user_s_adapted",
                    horizontal=True,
                )
            realism = st.radio(
                "I could stay in character",
                LIKERT,
                index=None,
                horizontal=True,
                key="play_user_s_realism",
            )
            comment = st.text_area("Anything else?", key="play_user_s_comment")
            submitted = st.form_submit_button("Save survey", type="primary")
        if submitted:
            missing = [
                name
                for name, v in (
                    ("understood", understood),
                    ("questions", questions),
                    ("in character", realism),
                    *((("adapted", adapted),) if shifted else ()),
                )
                if v is None
            ]
            if missing:
                st.warning("Please answer every question first: " + ", ".join(missing) + ".")
            else:
                value: dict[str, Any] = {
                    "understood": understood,
                    "questions_worth_it": questions,
                    "in_character": realism,
                    "comment": comment,
                    "outcome": outcome,
                    "shifts": len(pv.shifts),
                }
                if shifted:
                    value["adapted"] = adapted
                saved = guarded(
                    save_play_survey,
                    store,
                    annotator=user.name,
                    episode_id=eid,
                    answers=value,
                    study_id=owner.study_id if owner else None,
                )
                if saved is not None:
                    st.rerun()
else:
    st.info("The agent is acting…")
