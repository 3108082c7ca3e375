"""The LLM reply reader: a model reads a user's reply into the same reading as the offline one.

The prompt (``data/prompts/user_read.md``) lists the current intent's slot ids with plain labels
and the user's values, and asks for ``{"act", "disclosures", "contradictions"}``. The answer is
checked against the intent's slot ids (values always come from the intent, never from the
model); an invalid answer — or a model failure — falls back to the offline reader, and the
reading says so (``fallback``, ``detail``, ``raw``), so the caller can record it. Clients come
from the project's one LLM door (:func:`core.llm.make_client`, role ``interpreter``: the same
family as the question interpreter); answers are cached there and in a per-process memo.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any, Protocol

from core.envs.base import HostWorld
from core.model.intent import Intent
from core.paths import PROMPTS_DIR
from core.protocol.hooks import slot_label
from core.protocol.reply_reader import (
    REPLY_ACTS,
    Contradiction,
    Disclosed,
    ReplyReading,
    read_offline,
)

RAW_CHARS = 2000
"""How much of a model's answer a reading keeps."""
_JSON = re.compile(r"\{.*\}", re.S)


class _Model(Protocol):
    def complete(self, messages: list[dict[str, Any]], **params: Any) -> Any: ...


def validate(raw: str, intent: Intent) -> tuple[ReplyReading | None, str]:
    """Parse and check a model answer; return (reading, "") or (None, what is wrong)."""
    m = _JSON.search(raw or "")
    if m is None:
        return None, "no JSON object in the answer"
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg}"
    if not isinstance(data, dict):
        return None, "the answer is not an object"
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


class LLMReader:
    """Reads user replies with a chat model (``complete(messages) -> response.text``)."""

    def __init__(self, model: _Model, name: str, folder: Path = PROMPTS_DIR) -> None:
        self.model = model
        self.name = name
        self.folder = folder
        self._memo: OrderedDict[tuple[str, str, tuple[str, ...]], ReplyReading] = OrderedDict()

    @classmethod
    def from_spec(cls, spec: str) -> LLMReader:
        """Build a reader for a model spec (responses cached in the store file)."""
        from core.llm import make_client
        from core.paths import default_store_path

        return cls(
            make_client(spec, cache_path=default_store_path(), role="interpreter"), name=spec
        )

    def messages(
        self, text: str, intent: Intent, world: HostWorld, asked: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        """Return the structured prompt for ``text`` over ``intent``."""
        lines = [
            f"- {c.slot}: {slot_label(world, c)} = {world.phrase(c)}" for c in intent.conditions
        ]
        tpl = Template((self.folder / "user_read.md").read_text(encoding="utf-8"))
        body = tpl.substitute(
            slots="\n".join(lines) or "- (none)",
            asked=", ".join(asked) or "(nothing in particular)",
            reply=text,
        )
        return [{"role": "user", "content": body}]

    def read(
        self, text: str, intent: Intent, world: HostWorld, *, asked: Sequence[str] = ()
    ) -> ReplyReading:
        """Read ``text``; fall back to the offline reader on an invalid answer or an error."""
        key = (intent.intent_id, text, tuple(asked))
        got = self._memo.get(key)
        if got is not None:
            return got
        raw = ""
        try:
            resp = self.model.complete(self.messages(text, intent, world, asked), temperature=0.0)
            raw = str(getattr(resp, "text", resp))
            reading, problem = validate(raw, intent)
        except Exception as exc:  # noqa: BLE001 - a failing model falls back, never crashes
            reading, problem = None, f"{type(exc).__name__}: {exc}"
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
        self._memo[key] = out
        while len(self._memo) > 4096:
            self._memo.popitem(last=False)
        return out


_READERS: dict[str, LLMReader] = {}


def reader_for(spec: str) -> LLMReader:
    """Return the (process-wide) LLM reader of a model spec."""
    got = _READERS.get(spec)
    if got is None:
        got = _READERS[spec] = LLMReader.from_spec(spec)
    return got
