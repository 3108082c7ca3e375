"""How the simulated user reads an agent's message: the one entry point the engine calls.

Every path that drives an episode — sweeps, Watch live, both Play pages — goes through the
engine, and the engine reads each :class:`~core.model.actions.Ask` here: slots an agent declares
(symbolic agents) are taken as asked; any other message is read by the interpreter named in the
protocol config (``offline`` by default, or a model spec). The act decides the reply
(:func:`core.protocol.user.plan_answer`); LLM readings are recorded as ``question_read``
events.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.envs.base import HostWorld
from core.model.actions import Ask
from core.model.events import QuestionRead
from core.model.intent import Intent
from core.protocol.emit import Emitter
from core.protocol.interpret import OFFLINE, QuestionAct, interpret, restrict
from core.protocol.interpret_llm import RAW_CHARS, Verdict, interpreter_for


@dataclass(frozen=True)
class Reading:
    """The interpreter's reading of one message, plus what to record."""

    act: QuestionAct
    asked: tuple[str, ...]
    verdict: Verdict | None = None
    interpreter: str = OFFLINE


def _asked(act: QuestionAct) -> tuple[str, ...]:
    return act.slots if act.act in ("slots", "confirm") else ()


def read_message(
    text: str, intent: Intent, world: HostWorld, interpreter: str = OFFLINE
) -> Reading:
    """Read free text over ``intent`` with ``interpreter`` (``offline`` or a model spec)."""
    if interpreter == OFFLINE:
        act = interpret(text, intent, world)
        return Reading(act=act, asked=_asked(act))
    verdict = interpreter_for(interpreter).read(text, intent, world)
    act = restrict(verdict.act, intent)
    return Reading(act=act, asked=_asked(act), verdict=verdict, interpreter=interpreter)


def read_ask(action: Ask, intent: Intent, world: HostWorld, interpreter: str = OFFLINE) -> Reading:
    """Read an Ask: declared slots as asked, else the message through the interpreter."""
    if action.asks:
        slots = {c.slot for c in intent.conditions}
        declared = tuple(s for s in action.asks if s in slots)
        if declared:
            return Reading(act=QuestionAct(act="slots", slots=declared), asked=tuple(action.asks))
    return read_message(action.text, intent, world, interpreter)


def record(em: Emitter, reading: Reading) -> None:
    """Record an LLM reading as a ``question_read`` event (offline readings record nothing)."""
    v = reading.verdict
    if v is None:
        return
    em.emit(
        QuestionRead,
        interpreter=reading.interpreter,
        act=reading.act.act,
        slots=reading.act.slots,
        confirm=reading.act.confirm,
        valid=v.valid,
        fallback=v.fallback,
        detail=v.detail[:RAW_CHARS],
        raw=v.raw[:RAW_CHARS],
    )


def slots_asked(text: str, intent: Intent, world: HostWorld) -> list[str]:
    """Return the slots of ``intent`` that ``text`` asks about (offline interpreter).

    Args:
        text: The agent's message.
        intent: The intent whose slots are candidates (the user's current intent).
        world: The host world (supplies the slot lexicons).

    Returns:
        Slot names in intent order (a confirmation: the slots its description names).
    """
    return list(read_message(text, intent, world).asked)
