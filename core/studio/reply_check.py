"""The person's words are the data: read a typed reply, show it, take corrections, send it.

In Play as user a person answers the agent in their own words. Before the reply is sent the
page shows what the agent will learn from it, in plain words ("colour: navy"), as read by the
project's reply reader (:func:`core.protocol.reply_reader.read_reply`, the same reader
``driftbench user read`` uses). The person may correct that reading — add a requirement the
reader missed, remove one it misread — and a reply that states a value other than their
private goal is refused once until they say whether that is deliberate.

:func:`send_reply` reads the words again on the server (the page's preview is never trusted),
applies the corrections, and records a ``reply_read`` event (text, the reader's reading, the
corrections, the contradictions, whether they were deliberate, the final disclosures) just
before the ``user_reply`` whose disclosures are those final ones — so GRIP reads what the
person's words (and their explicit corrections) say, and a study can measure the reader
against people. Tick-boxes alone never decide what a reply discloses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from core.engine.eventlog import EventLog
from core.engine.live import load
from core.errors import ConfigError, ProtocolError
from core.model.base import Strict
from core.model.episode import UserView
from core.protocol import hooks
from core.protocol.reply_reader import OFFLINE, ReplyReading, read_reply
from core.studio.play_worlds import episode_loader

ACT_WORDS: dict[str, str] = {
    "answer": "an answer",
    "decline": "a decline (you don't say)",
    "confirm_yes": "a yes",
    "confirm_no": "a no",
    "other": "neither an answer nor a yes/no",
}
"""Each reply act in plain words."""


class LearnLine(Strict):
    """One requirement, as the page lists it for the reading and the corrections."""

    slot: str
    label: str = Field(description="Plain name of the requirement (colour, budget …).")
    phrase: str = Field(description="The goal in the user's words.")
    said: str = Field(default="", description="The words of the reply that state it.")
    read: bool = Field(default=False, description="The reader found it disclosed.")
    asked: bool = Field(default=False, description="The agent's last question asked it.")


class ContradictionLine(Strict):
    """A value the reply states that is not the person's goal."""

    slot: str
    label: str
    said: str
    goal: str = Field(description="The goal in the user's words.")


class ReplyCheck(Strict):
    """What the agent will learn from a typed reply (before it is sent)."""

    text: str
    reader: str
    act: str
    act_plain: str
    learns: tuple[LearnLine, ...] = ()
    contradictions: tuple[ContradictionLine, ...] = ()
    declined: tuple[str, ...] = Field(default=(), description="Labels of declined asks.")
    requirements: tuple[LearnLine, ...] = Field(
        default=(), description="Every current requirement (for corrections), reading marked."
    )
    fallback: bool = False
    detail: str = ""

    @property
    def summary(self) -> str:
        """The reading in one plain sentence."""
        if self.learns:
            parts = "; ".join(f"{x.label}: {x.phrase}" for x in self.learns)
            return f"The agent will learn — {parts}."
        return f"The agent learns none of your requirements from this ({self.act_plain})."


def _context(log: EventLog, episode_id: str) -> tuple[Any, Any]:
    live = load(log, episode_id, episode_loader(log, episode_id))
    if live.state.phase != "awaiting_user":
        raise ProtocolError(f"episode {episode_id} is not waiting for a user reply")
    return live, live.world


def _label(world: Any, cond: Any) -> str:
    try:
        return str(hooks.slot_lexicon(world, cond).label) or hooks.slot_label(world, cond)
    except Exception:  # noqa: BLE001 - a label is cosmetic; fall back to the slot's name
        return hooks.slot_label(world, cond)


def _reading(
    log: EventLog, episode_id: str, text: str, reader: str
) -> tuple[ReplyReading, Any, Any]:
    if not text.strip():
        raise ConfigError("the reply is empty", field="text")
    live, world = _context(log, episode_id)
    intent = live.state.current
    reading = read_reply(
        text, intent, world, asked=tuple(live.state.pending_asked), reader=reader or OFFLINE
    )
    return reading, live, world


def check_reply(log: EventLog, episode_id: str, text: str, *, reader: str = OFFLINE) -> ReplyCheck:
    """Read ``text`` as the reply to the agent's pending question (nothing is stored).

    Raises:
        ConfigError: The reply is empty.
        ProtocolError: The episode is not waiting for a user reply.
    """
    reading, live, world = _reading(log, episode_id, text, reader)
    intent = live.state.current
    asked = set(live.state.pending_asked)
    said = {d.slot: d.said for d in reading.disclosures}
    lines = tuple(
        LearnLine(
            slot=c.slot,
            label=_label(world, c),
            phrase=world.phrase(c),
            said=said.get(c.slot, ""),
            read=c.slot in said,
            asked=c.slot in asked,
        )
        for c in intent.conditions
    )
    conds = intent.slot_map()
    return ReplyCheck(
        text=text,
        reader=reading.source,
        act=reading.act,
        act_plain=ACT_WORDS[reading.act],
        learns=tuple(x for x in lines if x.read),
        contradictions=tuple(
            ContradictionLine(
                slot=c.slot,
                label=_label(world, conds[c.slot]),
                said=c.said,
                goal=world.phrase(conds[c.slot]),
            )
            for c in reading.contradictions
        ),
        declined=tuple(_label(world, conds[s]) for s in reading.declined),
        requirements=lines,
        fallback=reading.fallback,
        detail=reading.detail,
    )


def send_reply(
    log: EventLog,
    episode_id: str,
    text: str,
    *,
    added: Sequence[str] = (),
    removed: Sequence[str] = (),
    deliberate: bool | None = None,
    reader: str = OFFLINE,
    client: Any = None,
) -> UserView:
    """Read and record the person's reply, then let the agent act until it waits again.

    Args:
        log: The event log.
        episode_id: The episode.
        text: The person's words.
        added: Requirements the person says the reply discloses that the reader missed.
        removed: Requirements the reader read that the person says the reply does not disclose.
        deliberate: The answer to "your reply contradicts your goal — deliberate?"; required
            (True or False) when the reading has contradictions.
        reader: ``offline`` or a model spec.
        client: The agent's LLM client (None: symbolic).

    Raises:
        ConfigError: Empty reply; a correction names no current requirement; a contradiction
            not yet confirmed (``field='deliberate'``).
        ProtocolError: The episode is not waiting for a user reply.
    """
    from core.engine import episode
    from core.studio.roleplay import advance

    reading, live, _world = _reading(log, episode_id, text, reader)
    order = [c.slot for c in live.state.current.conditions]
    read = [d.slot for d in reading.disclosures]
    for name, group, allowed in (("added", added, order), ("removed", removed, read)):
        bad = [s for s in group if s not in allowed]
        if bad:
            raise ConfigError(
                f"{name} names requirements the reply cannot change: {bad}", field=name
            )
    if reading.contradictions and deliberate is None:
        raise ConfigError(
            "your reply states something other than your goal; say whether that is deliberate",
            field="deliberate",
        )
    final = [s for s in order if (s in read and s not in removed) or s in added]
    fields = {
        "text": text,
        "reader": reading.source,
        "act": reading.act,
        "read": tuple(read),
        "contradictions": tuple(
            {"slot": c.slot, "said": c.said, "goal": c.goal} for c in reading.contradictions
        ),
        "added": tuple(s for s in order if s in added and s not in read),
        "removed": tuple(s for s in order if s in removed),
        "final": tuple(final),
        "deliberate": deliberate if reading.contradictions else None,
        "fallback": reading.fallback,
        "detail": reading.detail[:2000],
        "declined": reading.declined,
    }
    episode.respond(
        log, episode_id, text, final, world_loader=episode_loader(log, episode_id), read=fields
    )
    return advance(log, episode_id, client=client)
