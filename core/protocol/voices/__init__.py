"""Voices phrase what the simulated user's code decided; they never decide anything.

* ``template`` — offline, project-written phrasing per persona style (``data/voices/``);
* ``mute`` — the L0 floor's user who never responds;
* any other spec — an LLM voice through :mod:`core.llm` (prompts in ``data/prompts/``);
* ``human`` — no voice object: the episode pauses for the person playing the user.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from core.model.persona import Persona
from core.protocol.user import ReplyPlan


@dataclass(frozen=True)
class VoiceRepair:
    """One repair an LLM voice needed (recorded as a ``repair`` event)."""

    target: str
    detail: str
    original: str
    replacement: str


@dataclass(frozen=True)
class VoiceOutput:
    """The phrased reply plus any repairs made on the way."""

    text: str
    repairs: tuple[VoiceRepair, ...] = field(default=())
    fallback: bool = False
    """The text is the fixed template line (its disclosures are the plan's, exactly)."""


class Voice(Protocol):
    """Phrases a :class:`ReplyPlan` in a persona's style.

    Attributes:
        name: The voice spec recorded on each reply (``template``, a model id …).
    """

    name: str

    def say(self, plan: ReplyPlan, persona: Persona, rng_key: str) -> VoiceOutput:
        """Phrase ``plan``; may raise LLMError (the orchestrator ends the episode as ERROR)."""
        ...


HUMAN = "human"
"""User-voice spec of a person playing the user."""

SIMULATOR_FOR_HUMAN = "simulator_for_human"
"""Voice name of a reply the simulated user wrote because the person asked it to ("let the
simulator answer this one"); recorded so analyses can tell it from the person's own words."""


def make_voice(spec: str) -> Voice | None:
    """Build the voice for ``spec`` (None for ``human``).

    Args:
        spec: ``template``, ``mute``, ``human`` or an LLM model spec.
    """
    if spec == HUMAN:
        return None
    from core.protocol.voices.template import MuteVoice, TemplateVoice

    if spec == "template":
        return TemplateVoice()
    if spec == "mute":
        return MuteVoice()
    from core.protocol.voices.llm import LLMVoice

    return LLMVoice.from_spec(spec)
