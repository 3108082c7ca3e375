"""Which slots a free-text message is about (keyword matching over slot words)."""

from __future__ import annotations

from core.envs.base import HostWorld
from core.model.intent import Intent
from core.protocol.hooks import content_words, slot_words


def slots_asked(text: str, intent: Intent, world: HostWorld) -> list[str]:
    """Return the slots of ``intent`` whose words occur in ``text`` (intent order).

    Args:
        text: The agent's message.
        intent: The intent whose slots are candidates (the user's current intent).
        world: The host world (supplies slot words).

    Returns:
        Matched slot names, without duplicates.
    """
    words = content_words(text)
    out: list[str] = []
    for cond in intent.conditions:
        if cond.slot not in out and words & slot_words(world, cond):
            out.append(cond.slot)
    return out
