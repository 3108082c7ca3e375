"""The LLM reply reader: a model reads a user's reply into the same reading as the offline one.

The prompt (``data/prompts/user_read.md``) lists the current intent's slot ids with plain labels
and the user's values, and asks for ``{"act", "disclosures", "contradictions"}``. The answer is
checked against the intent's slot ids (values always come from the intent, never from the
model); an invalid answer — or a model failure — falls back to the offline reader, and the
reading says so (``fallback``, ``detail``, ``raw``), so the caller can record it. Clients come
from the project's one LLM door (:func:`core.llm.make_client`, role ``interpreter``: the same
family as the question interpreter); answers are cached there and in a per-process memo. The
client, prompt, memo and safe ask are :mod:`core.protocol.llm_reading` (shared with the
question interpreter).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.envs.base import HostWorld
from core.model.cache import LockedLRU
from core.model.intent import Intent
from core.protocol.llm_reading import RAW_CHARS, ModelReader, answer_object, slot_lines
from core.protocol.reply_reader import (
    REPLY_ACTS,
    Contradiction,
    Disclosed,
    ReplyReading,
    read_offline,
)

__all__ = ["RAW_CHARS", "LLMReader", "reader_for", "validate"]


def validate(raw: str, intent: Intent) -> tuple[ReplyReading | None, str]:
    """Parse and check a model answer; return (reading, "") or (None, what is wrong)."""
    data, problem = answer_object(raw)
    if data is None:
        return None, problem
    act = data.get("act")
    if act not in REPLY_ACTS:
        return None, f"unknown act {act!r}"
    conds = {c.slot: c for c in intent.conditions}
    disc = data.get("disclosures") or []
    if not isinstance(disc, list):
        return None, "disclosures must be a list of slot ids"
    slots: list[str] = []
    for item in disc:
        slot = item.get("slot") if isinstance(item, dict) else item
        if not isinstance(slot, str) or slot not in conds:
            return None, f"disclosures name a slot that is not a requirement: {slot!r}"
        slots.append(slot)
    contra = data.get("contradictions") or []
    if not isinstance(contra, list):
        return None, "contradictions must be a list"
    said: dict[str, str] = {}
    for item in contra:
        if not isinstance(item, dict) or item.get("slot") not in conds:
            return None, f"contradictions name a slot that is not a requirement: {item!r}"
        said[str(item["slot"])] = str(item.get("said") or "")[:200]
    order = list(conds)
    return (
        ReplyReading(
            act=act,
            disclosures=tuple(
                Disclosed(slot=s, value=conds[s].value)
                for s in order
                if s in slots and s not in said
            ),
            contradictions=tuple(
                Contradiction(slot=s, said=said[s], goal=conds[s].value) for s in order if s in said
            ),
        ),
        "",
    )


class LLMReader(ModelReader[ReplyReading]):
    """Reads user replies with a chat model (``complete(messages) -> response.text``)."""

    def messages(
        self, text: str, intent: Intent, world: HostWorld, asked: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        """Return the structured prompt for ``text`` over ``intent``."""
        return self.prompt(
            "user_read.md",
            slots=slot_lines(intent, world),
            asked=", ".join(asked) or "(nothing in particular)",
            reply=text,
        )

    def read(
        self, text: str, intent: Intent, world: HostWorld, *, asked: Sequence[str] = ()
    ) -> ReplyReading:
        """Read ``text``; fall back to the offline reader on an invalid answer or an error."""
        key = (intent.intent_id, text, tuple(asked))
        got = self._memo.get(key)
        if got is not None:
            return got
        reading, problem, raw = self.ask(
            lambda: self.messages(text, intent, world, asked),
            lambda answer: validate(answer, intent),
        )
        offline = read_offline(text, intent, world, asked=asked)
        if reading is None:
            out = ReplyReading(
                act=offline.act,
                disclosures=offline.disclosures,
                contradictions=offline.contradictions,
                declined=offline.declined,
                source=self.name,
                fallback=True,
                detail=problem[:RAW_CHARS],
                raw=raw[:RAW_CHARS],
            )
        else:
            said = {d.slot for d in reading.disclosures} | {c.slot for c in reading.contradictions}
            declined = tuple(s for s in asked if s not in said) if reading.act == "decline" else ()
            out = ReplyReading(
                act=reading.act,
                disclosures=reading.disclosures,
                contradictions=reading.contradictions,
                declined=declined,
                source=self.name,
                raw=raw[:RAW_CHARS],
            )
        self._memo.put(key, out)
        return out


_READERS: LockedLRU[str, LLMReader] = LockedLRU(16)
"""Model spec → its reader (a bounded, locked process-wide memo)."""


def reader_for(spec: str) -> LLMReader:
    """Return the (process-wide) LLM reader of a model spec."""
    got = _READERS.get(spec)
    if got is None:
        got = LLMReader.from_spec(spec)
        _READERS.put(spec, got)  # module state, declared in docs/ARCHITECTURE.md
    return got
