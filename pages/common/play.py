"""Widgets of the role-play pages: set-up controls, conversation, shop renderer, tool forms.

UI only: every widget either renders a view model from ``core`` or returns what the person
chose (an :class:`~core.envs.base.EnvAction`, set-up values); the pages pass that to one
``core`` call. Text that comes from people, agents or host data is rendered inert
(``st.text`` / ``st.code``) or escaped before it reaches markdown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from core.model.actions import EnvOp
from core.model.episode import TranscriptEntry
from core.model.world import EnvAction, ToolSpec
from core.studio.choices import load_personas, offered_benchmarks
from core.studio.links import link_id, link_int
from core.studio.markdown import md_escape
from core.studio.plays import Access, open_play
from core.studio.roleplay import PLAY_BENCHMARKS, arg_fields, build_args, sample_choices
from pages.common.tool_view import call_view, full_tool_result
from pages.common.ui import guarded

RANDOM = "(random)"
_AVATAR = {"user": "user", "agent": "assistant", "environment": ":material/build:"}


_PAIRED = "*_~`$"


def label_md(text: str) -> str:
    """Make text safe as a widget label while escaping as little as possible.

    Widget labels are markdown, and their ``aria-label`` carries the raw string, so every
    needless backslash is read out by screen readers ("user\\_id"). Only what can form markup
    is escaped: a backslash before punctuation, the pairable marks ``* _ ~ ` $`` when they occur
    more than once, a ``[`` that starts a link, a leading ``#``/``>``/``-``/``+`` and
    ``:word:`` emoji codes.
    """
    out = []
    counts = {c: text.count(c) for c in _PAIRED}
    for i, c in enumerate(text):
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if c == "\\" and nxt and not nxt.isalnum() and not nxt.isspace():
            out.append("\\\\")
        elif c in _PAIRED and counts[c] > 1:
            out.append("\\" + c)
        elif c == "[" and "](" in text[i:]:
            out.append("\\[")
        elif i == 0 and c in "#>-+":
            out.append("\\" + c)
        else:
            out.append(c)
    return re.sub(r":(\w+):", r"\\:\1:", "".join(out))


# ------------------------------------------------------------------------------ set-up
@dataclass(frozen=True)
class Setup:
    """What the person chose in the set-up controls."""

    benchmark: str
    sample_id: str | None
    persona: str
    seed: int


def seed_from_query(prefix: str) -> None:
    """Pre-fill the set-up widgets from ``?benchmark=…&sample=…&persona=…&seed=…`` once."""
    qp = st.query_params
    bench = link_id(qp.get("benchmark"))
    if (
        bench in offered_benchmarks(PLAY_BENCHMARKS)
        and f"{prefix}_benchmark" not in st.session_state
    ):
        st.session_state[f"{prefix}_benchmark"] = bench
        sample = link_id(qp.get("sample"))
        if sample:
            st.session_state[f"{prefix}_sample_{bench}"] = sample
    persona = link_id(qp.get("persona"))
    if persona and f"{prefix}_persona" not in st.session_state:
        st.session_state[f"{prefix}_persona"] = persona
    seed = link_int(qp.get("seed"), hi=2**31 - 1)
    if seed is not None and f"{prefix}_seed" not in st.session_state:
        st.session_state[f"{prefix}_seed"] = seed


@st.cache_data(ttl=5, show_spinner=False)
def _sample_ids(
    _store: Any, store_key: str, benchmark: str, person: str | None, role: str, strict: bool
) -> list[str]:
    return [
        c.sample_id
        for c in sample_choices(
            _store,
            benchmark,
            person=person,
            role="agent" if role == "agent" else "user",
            strict=strict,
        )
    ]


@st.cache_data(show_spinner=False)
def persona_ids() -> list[str]:
    """The ids of the bundled personas."""
    return sorted(load_personas())


def setup_controls(
    prefix: str, store: Any, *, person: str | None = None, strict: bool = False
) -> Setup | None:
    """Benchmark, blind sample, persona and seed pickers (None when no sample exists).

    The sample picker shows opaque sample ids only (never fault types, masks or requests), and
    never a sample the blind rule hides from ``person`` in this page's seat.
    """
    seed_from_query(prefix)
    c1, c2, c3, c4 = st.columns([2, 3, 2, 1])
    offered = offered_benchmarks(PLAY_BENCHMARKS)
    if st.session_state.get(f"{prefix}_benchmark") not in (None, *offered):
        st.session_state.pop(f"{prefix}_benchmark")
    benchmark = c1.selectbox("Benchmark", offered, key=f"{prefix}_benchmark")
    role = "agent" if prefix.endswith("agent") else "user"
    ids = (
        guarded(
            _sample_ids, store, str(getattr(store, "path", "")), benchmark, person, role, strict
        )
        or []
    )
    if not ids:
        st.info(f"No {benchmark} samples: load the bundled data from Home (`driftbench init`).")
        return None
    options = [RANDOM, *ids]
    skey = f"{prefix}_sample_{benchmark}"
    raw_sample = st.query_params.get("sample")
    linked = link_id(raw_sample)
    if raw_sample and linked is None:
        st.warning("No such sample: the link's sample id is not valid.")
    if linked and linked not in ids and person is not None and hasattr(store, "conn"):
        from core.studio.blind import hidden_refusal

        seat = "agent" if role == "agent" else "user"
        why = hidden_refusal(store, person, linked, seat, strict=strict)
        if why is not None:  # a deep link to a hidden sample: say why, never fall back
            st.error(f"Sample {md_escape(linked)} is not offered to you. {why}")
            return None
    if linked and linked not in ids and link_id(st.query_params.get("benchmark")) == benchmark:
        st.warning(f"No sample {md_escape(linked)} in {benchmark}: pick one below.")
    if st.session_state.get(skey) not in (None, *options):
        st.session_state.pop(skey)
    sample = c2.selectbox(
        "Sample (opaque id)", options, key=skey, help="Random draws a sample from the seed."
    )
    personas = persona_ids()
    if st.session_state.get(f"{prefix}_persona") not in (None, *personas):
        st.session_state.pop(f"{prefix}_persona")
    persona = c3.selectbox("Persona", personas, key=f"{prefix}_persona")
    seed = c4.number_input("Seed", min_value=0, value=0, step=1, key=f"{prefix}_seed")
    return Setup(
        benchmark=benchmark,
        sample_id=None if sample == RANDOM else str(sample),
        persona=str(persona),
        seed=int(seed),
    )


def resolve_episode(
    store: Any, state_key: str, role: str, person: str, *, allow_unowned: bool
) -> str | None:
    """The episode this page plays: from the session, or from ``?episode=`` if it is yours.

    Anyone else's episode (or a discarded, expired or foreign one) is refused with a clear
    sentence and a way to start a new episode; the page then stops.
    """
    eid = st.session_state.get(state_key)
    raw = st.query_params.get("episode")
    from_url = link_id(raw)
    if raw and from_url is None:
        st.error("No such episode: the link's episode id is not valid.")
        st.stop()
    wanted = from_url if from_url and from_url != eid else eid
    if wanted is None:
        return None
    access: Access = open_play(store, wanted, role, person, allow_unowned=allow_unowned)  # type: ignore[arg-type]
    if not access.ok:
        st.error(access.reason)
        if st.button("Start a new episode", key=f"{state_key}_refused_new"):
            remember_episode(state_key, None)
            st.rerun()
        st.stop()
    st.session_state[state_key] = wanted
    return str(wanted)


def start_study_item(
    state_key: str, prefix: str, item: Any, start: Any, store: Any, player: str, **extra: Any
) -> None:
    """The study item's start button: play the assigned sample, then open the new episode.

    Args:
        state_key: Session key of the page's episode id.
        prefix: The page's widget-key prefix.
        item: The study assignment (``core.studio.plays.assigned_play``).
        start: The role's start service (``roleplay.start_user_play`` / ``start_agent_play``).
        store: The store.
        player: Who plays it.
        **extra: Role-specific start arguments (the agent's patience condition).
    """
    if item.note:
        st.caption(item.note)
    if not st.button("Start this study item", type="primary", key=f"{prefix}_start_item"):
        return
    started = guarded(
        start,
        store,
        benchmark=item.benchmark,
        sample_id=item.sample_id,
        persona=item.persona or "rational",
        seed=item.assignment_id,
        player=player,
        strict=True,
        study_id=item.study_id,
        assignment_id=item.assignment_id,
        **extra,
    )
    if started is not None:
        if "assignment" in st.query_params:
            del st.query_params["assignment"]
        remember_episode(state_key, started)
        st.rerun()


def play_controls(
    top: Any, store: Any, state_key: str, prefix: str, episode_id: str, *, ended: bool, player: str
) -> None:
    """The episode bar's "New episode" and (for the owner of an unfinished play) "Discard"."""
    from core.studio.plays import discard_play, play_owner

    if top.button("New episode", key=f"{prefix}_new"):
        remember_episode(state_key, None)
        st.rerun()
    owner = play_owner(store, episode_id)
    if ended or owner is None or owner.annotator_id != player:
        return
    confirm = f"{prefix}_confirm_discard"
    if top.button("Discard this episode", key=f"{prefix}_discard"):
        st.session_state[confirm] = episode_id
    if st.session_state.get(confirm) != episode_id:
        return
    st.warning("Discard this unfinished episode? It will not be offered for resuming again.")
    d1, d2 = st.columns([1, 5])
    if d1.button("Discard", type="primary", key=f"{prefix}_discard_yes"):
        if guarded(discard_play, store, episode_id, player, why="discarded"):
            st.session_state.pop(confirm, None)
            remember_episode(state_key, None)
            st.rerun()
    if d2.button("Keep playing", key=f"{prefix}_discard_no"):
        st.session_state.pop(confirm, None)
        st.rerun()


def remember_episode(state_key: str, episode_id: str | None) -> None:
    """Keep the episode id in session state and in the URL (so a refresh resumes it)."""
    if episode_id is None:
        st.session_state.pop(state_key, None)
        if "episode" in st.query_params:
            del st.query_params["episode"]
        return
    st.session_state[state_key] = episode_id
    st.query_params["episode"] = episode_id


# ------------------------------------------------------------------------- conversation
def conversation(
    entries: Sequence[TranscriptEntry],
    *,
    notes: dict[int, list[tuple[str, str]]] | None = None,
    observations: str = "expander",
) -> None:
    """Render a transcript inertly, grouped by turn, with optional notes after a turn.

    Args:
        entries: Transcript entries.
        notes: ``turn -> [(kind, text)]`` shown after that turn (kind: success/error/warning);
            the text is escaped.
        observations: ``expander`` (tool results folded) or ``hidden`` (only the call shown).
    """
    notes = notes or {}
    shown_notes: set[int] = set()
    last_turn = None
    for e in entries:
        if last_turn is not None and e.turn != last_turn:
            _notes(notes, last_turn, shown_notes)
        last_turn = e.turn
        if e.role == "environment":
            if observations == "hidden":
                continue
            with st.expander(f"turn {e.turn} · result", expanded=False, icon=":material/output:"):
                tool_result(e.text)
            continue
        with st.chat_message(_AVATAR.get(e.role, e.role)):
            st.caption(f"turn {e.turn} · {e.role}")
            if e.role == "agent" and isinstance(e.action, EnvOp):
                tool_call(e.action.action)
            else:
                st.text(e.text)
    if last_turn is not None:
        _notes(notes, last_turn, shown_notes)
    for turn in sorted(set(notes) - shown_notes):
        _notes(notes, turn, shown_notes)


def tool_call(action: EnvAction) -> None:
    """A tool call as a title and ``name: value`` lines (inert text)."""
    call_view(action.tool, action.args)


def tool_result(text: str) -> None:
    """A tool result in full: readable fields and tables, copyable ids and a JSON view."""
    full_tool_result(text)


def _notes(notes: dict[int, list[tuple[str, str]]], turn: int, shown: set[int]) -> None:
    if turn in shown:
        return
    shown.add(turn)
    for kind, text in notes.get(turn, []):
        getattr(st, kind, st.info)(md_escape(text))


# ---------------------------------------------------------------------------- tool forms
def tool_form(tools: Sequence[ToolSpec], key: str, *, disabled: bool = False) -> EnvAction | None:
    """A tool picker with typed fields from the tool's JSON schema; returns the call, if any."""
    if not tools:
        return None
    by_name = {t.name: t for t in tools}
    name = st.selectbox(
        "Tool",
        list(by_name),
        key=f"{key}_tool",
        format_func=lambda n: f"{n} ({by_name[n].kind})",
        disabled=disabled,
    )
    tool = by_name[str(name)]
    st.caption(md_escape(tool.description))
    values: dict[str, Any] = {}
    with st.form(f"{key}_form_{tool.name}"):
        for f in arg_fields(tool):
            k = f"{key}_arg_{tool.name}_{f.name}"
            label = label_md(f"{f.name}{' (required)' if f.required else ''}")
            helptext = f.description or None
            if f.kind == "string":
                values[f.name] = st.text_input(label, key=k, help=helptext)
            elif f.kind == "integer":
                values[f.name] = st.number_input(label, value=None, step=1, key=k, help=helptext)
            elif f.kind == "number":
                values[f.name] = st.number_input(label, value=None, key=k, help=helptext)
            elif f.kind == "boolean":
                values[f.name] = st.selectbox(label, ["", "true", "false"], key=k, help=helptext)
            elif f.kind == "list":
                values[f.name] = st.text_area(f"{label} (one per line)", key=k, help=helptext)
            else:
                values[f.name] = st.text_area(
                    f"{label} (JSON)", key=k, help=helptext, placeholder=f.example
                )
        submitted = st.form_submit_button("Call tool", type="primary", disabled=disabled)
    if not submitted:
        return None
    args = guarded(build_args, tool, values)
    return None if args is None else EnvAction(tool=tool.name, args=args)
