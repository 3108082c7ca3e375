"""The Inspect page's turn cards, turn navigation and side-by-side comparison (UI only).

Everything shown comes from :mod:`core.studio.timeline` records; tool calls and results use the
shared renderers of :mod:`pages.common.tool_view`; outcomes and verdicts read in plain words
(:mod:`core.studio.plainwords`). Text from people, agents and hosts is inert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from core.studio.choices import method_label
from core.studio.markdown import md_escape
from core.studio.plainwords import plain_reason, plain_status
from core.studio.timeline import TurnRecord, align_turns, turn_records
from core.studio.toolcalls import describe_call
from pages.common.tool_view import call_view, full_tool_result


def state_lines(r: TurnRecord) -> list[str]:
    lines = [f"intent {r.intent_id} · patience {r.patience_before} → {r.patience_after}"]
    if r.asked_slots:
        lines.append("asked about: " + ", ".join(r.asked_slots))
    for d in r.disclosures:
        value = "" if d.get("value") is None else f" = {d['value']}"
        lines.append(f"disclosed {d['slot']}{value} ({d['how']})")
    for s in r.shifts:
        if s["event"] == "fired":
            lines.append(f"shift fired: {s['operator']} — {s['delta']} ({s['trigger']})")
        elif s["event"] == "due":
            lines.append(f"shift due at patience {s['threshold']:g}")
        else:
            lines.append(f"shift skipped ({s['reason']})")
    for v in r.verdicts:
        verdict = "accepted" if v["accepted"] else "rejected"
        lines.append(f"proposal {verdict}: {v['reason']} (via {v['via']})")
    for c in r.charges:
        lines.append(
            f"patience −{c['cost']:g} for {c['reason']} ({c['before']:g} → {c['after']:g})"
        )
    return lines


def turn_card(r: TurnRecord, hit: bool, selected: bool, turns: Sequence[int] = ()) -> int | None:
    """One turn as a card; the shown (linked) card carries previous / next turn buttons.

    Returns:
        The turn its navigation asks for (None: stay).
    """
    go = None
    with st.container(border=True, key=f"turn-{r.turn}"):
        kind = {"tool": "tool call", "question": "message", "proposal": "final answer"}.get(
            r.action_kind, r.action_kind or "start"
        )
        head = st.container(horizontal=True, vertical_alignment="center")
        head.markdown(
            f"**Turn {r.turn}** · {kind}"
            + (" · :material/search: match" if hit else "")
            + (" · :material/arrow_back: linked" if selected else "")
        )
        left, right = st.columns([3, 2])
        with left:
            if r.tool is not None:
                call_view(r.tool, r.tool_args)
            elif r.action_text:
                st.caption("Agent")
                st.text(r.action_text)
            for obs in r.observations:
                with st.expander(
                    f"Result of {obs['tool']} · {'ok' if obs['ok'] else 'failed'}",
                    icon=":material/output:",
                    expanded=selected,
                ):
                    full_tool_result(str(obs["text"]))
            if r.reply_text is not None:
                st.caption(f"User ({r.reply_kind})")
                st.text(r.reply_text)
            for note in r.notes:
                st.caption(md_escape(note))
        with right:
            st.text("\n".join(state_lines(r)))
        if selected and turns:
            go = turn_nav(list(turns), r.turn, where="card")
    return go


def turn_nav(turns: list[int], current: int | None, *, where: str = "top") -> int | None:
    """Previous / next turn buttons; returns the turn to go to (None: stay).

    Args:
        turns: The episode's turns, in order.
        current: The turn shown (``?turn=``), if any.
        where: ``top`` (above the cards) or ``card`` (inside the shown card): a key suffix.
    """
    if not turns:
        return None
    nav = st.container(horizontal=True, vertical_alignment="center", key=f"insp-turn-nav-{where}")
    at = turns.index(current) if current in turns else None
    before = turns[at - 1] if at is not None and at > 0 else None
    if at is None:
        after: int | None = turns[0]
    else:
        after = turns[at + 1] if at + 1 < len(turns) else None
    go = None
    if nav.button(
        "Previous turn",
        icon=":material/navigate_before:",
        key=f"insp-turn-prev-{where}",
        disabled=before is None,
    ):
        go = before
    nav.caption(f"Turn {current} of {turns[-1]}" if current in turns else f"{len(turns)} turns")
    if nav.button(
        "Next turn",
        icon=":material/navigate_next:",
        key=f"insp-turn-next-{where}",
        disabled=after is None,
    ):
        go = after
    return go


def compare_view(
    store: Any,
    this: tuple[Any, dict[str, Any]],
    that: tuple[Any, dict[str, Any]],
    records: Sequence[TurnRecord],
) -> None:
    """Two episodes of one benchmark side by side: a header per column, then turn by turn.

    Args:
        store: The store.
        this: (header, index row) of the shown episode.
        that: (header, index row) of the episode compared with it.
        records: The shown episode's turn records.
    """
    hl, hr = st.columns(2)
    for col, (h, rr), side in ((hl, this, "This episode"), (hr, that, "Compared with")):
        with col.container(
            border=True, key=f"insp-compare-head-{'left' if col is hl else 'right'}"
        ):
            st.markdown(f"**{side}: {h.episode_id}**")
            st.caption(
                f"{method_label(h.method)} · persona {h.persona_id} · seed {h.seed} · "
                f"{plain_status(rr['outcome'], rr['status'])}"
            )
    other_records = turn_records(store.events(that[0].episode_id))
    for left_rec, right_rec in align_turns(list(records), other_records):
        lc, rc = st.columns(2)
        for col, rec in ((lc, left_rec), (rc, right_rec)):
            with col:
                if rec is None:
                    st.caption("—")
                    continue
                st.markdown(f"**Turn {rec.turn}** · patience {rec.patience_after}")
                if rec.tool is not None:
                    st.text(describe_call(rec.tool, rec.tool_args).summary)
                else:
                    st.text(rec.action_text or "")
                if rec.reply_text:
                    st.text("user: " + rec.reply_text)
                for v in rec.verdicts:
                    verdict = "accepted" if v["accepted"] else "rejected"
                    why = plain_reason(v["reason"], accepted=v["accepted"])
                    st.caption(f"verdict: {verdict} — {md_escape(why)}")
