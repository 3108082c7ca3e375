"""What the simulated user's two LLM readers share: a client, a prompt, a memo, a safe ask.

The question interpreter (:mod:`core.protocol.interpret_llm`, an agent's message → a question
act) and the reply reader (:mod:`core.protocol.reply_llm`, a user's reply → disclosures) both
send one prompt built from a template in ``data/prompts`` that lists the intent's slot ids with
plain labels and the user's values, expect one JSON object back, check it against the intent,
and fall back to their offline reading when the answer is invalid or the model fails. This
module holds that scaffolding once; each reader keeps only its prompt fields, its validation
and how it merges the model's answer with the offline reading.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable
from pathlib import Path
from string import Template
from typing import Any, Generic, Protocol, Self, TypeVar

from core.envs.base import HostWorld
from core.model.cache import LockedLRU
from core.model.intent import Intent
from core.paths import PROMPTS_DIR

RAW_CHARS = 2000
"""How much of a model's answer (and of a problem's description) a recorded reading keeps."""

MEMO_SIZE = 4096
"""Readings kept per reader (per model spec)."""

_JSON = re.compile(r"\{.*\}", re.S)

T = TypeVar("T")
"""What a reader's memo holds (its reading)."""
R = TypeVar("R")
"""What a validation returns."""


class ChatModel(Protocol):
    """Any client with ``complete(messages, **params)`` returning a response (or its text)."""

    def complete(self, messages: list[dict[str, Any]], **params: Any) -> Any:
        """Answer ``messages`` (a response with ``.text``, or the text itself)."""
        ...


def answer_object(raw: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in a model's answer; (None, what is wrong) when there is none."""
    m = _JSON.search(raw or "")
    if m is None:
        return None, "no JSON object in the answer"
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg}"
    if not isinstance(data, dict):
        return None, "the answer is not an object"
    return data, ""


def slot_lines(intent: Intent, world: HostWorld) -> str:
    """The intent's requirements as prompt lines: ``- slot id: label = value``."""
    lines = [f"- {c.slot}: {world.slot_label(c)} = {world.phrase(c)}" for c in intent.conditions]
    return "\n".join(lines) or "- (none)"


class ModelReader(Generic[T]):
    """Base of an LLM reader: the model, its name, the prompt folder and a bounded memo."""

    def __init__(self, model: ChatModel, name: str, folder: Path = PROMPTS_DIR) -> None:
        self.model = model
        self.name = name
        self.folder = folder
        self._memo: LockedLRU[Hashable, T] = LockedLRU(MEMO_SIZE)

    @classmethod
    def from_spec(cls, spec: str) -> Self:
        """Build a reader for a model spec (role ``interpreter``; answers cached in the store)."""
        from core.llm import make_client
        from core.paths import default_store_path

        return cls(
            make_client(spec, cache_path=default_store_path(), role="interpreter"), name=spec
        )

    def prompt(self, template: str, **fields: str) -> list[dict[str, Any]]:
        """One user message: ``template`` (a file in the prompt folder) with ``fields`` filled."""
        tpl = Template((self.folder / template).read_text(encoding="utf-8"))
        return [{"role": "user", "content": tpl.substitute(**fields)}]

    def ask(
        self,
        messages: Callable[[], list[dict[str, Any]]],
        validate: Callable[[str], tuple[R | None, str]],
    ) -> tuple[R | None, str, str]:
        """Build the prompt, send it at temperature 0 and validate the answer.

        Args:
            messages: Builds the prompt (a world that cannot phrase a value is a problem too).
            validate: Checks the raw answer: (the answer, "") or (None, what is wrong).

        Returns:
            (the validated answer or None, what is wrong ("" when valid), the raw answer). A
            failing model is a problem, never an exception.
        """
        raw = ""
        try:
            resp = self.model.complete(messages(), temperature=0.0)
            raw = str(getattr(resp, "text", resp))
            got, problem = validate(raw)
        except Exception as exc:  # noqa: BLE001 - a failing model falls back, never crashes
            got, problem = None, f"{type(exc).__name__}: {exc}"
        return got, problem, raw
