"""The LLM question interpreter: a model maps an agent message to the same question acts.

The prompt (``data/prompts/user_interpret.md``) lists the current intent's slot ids with plain
labels and the user's values, and asks for one JSON object ``{"act", "slots", "confirm",
"wrong"}``. The answer is validated against the intent's slot ids; an invalid answer — or a
model failure — falls back to the offline interpreter. Either way the caller records a
``question_read`` event (:class:`Verdict` carries its fields). Answers are cached: the client's
response cache (the store file) across runs, and an in-process memo per (model, intent, text).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any, Protocol

from core.envs.base import HostWorld
from core.model.intent import Intent
from core.paths import PROMPTS_DIR
from core.protocol.interpret import ACTS, QuestionAct, interpret

RAW_CHARS = 2000
"""How much of a model's answer a ``question_read`` event keeps."""
_JSON = re.compile(r"\{.*\}", re.S)


class _Model(Protocol):
    def complete(self, messages: list[dict[str, Any]], **params: Any) -> Any: ...


@dataclass(frozen=True)
class Verdict:
    """One LLM reading: the act used and what a ``question_read`` event records."""

    act: QuestionAct
    valid: bool
    fallback: bool
    detail: str
    raw: str


def validate(raw: str, intent: Intent) -> tuple[QuestionAct | None, str]:
    """Parse and check a model answer; return (act, "") or (None, what is wrong)."""
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
    if act not in ACTS:
        return None, f"unknown act {act!r}"
    ids = [c.slot for c in intent.conditions]
    out: dict[str, tuple[str, ...]] = {}
    for key in ("slots", "wrong"):
        got = data.get(key) or []
        if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            return None, f"{key} must be a list of slot ids"
        bad = [x for x in got if x not in ids]
        if bad:
            return None, f"{key} names slots that are not requirements: {bad}"
        out[key] = tuple(s for s in ids if s in got)
    confirm = data.get("confirm")
    if act == "confirm" and not isinstance(confirm, bool):
        return None, "a confirmation needs confirm true or false"
    if act != "confirm":
        confirm, out["wrong"] = None, ()
    if act in ("open", "offtopic"):
        out["slots"] = ()
    return (
        QuestionAct(
            act=act,
            slots=out["slots"],
            confirm=confirm,
            wrong=out["wrong"] if confirm is False else (),
        ),
        "",
    )


class LLMInterpreter:
    """Reads agent messages with a chat model (``complete(messages) -> response.text``)."""

    def __init__(self, model: _Model, name: str, folder: Path = PROMPTS_DIR) -> None:
        self.model = model
        self.name = name
        self.folder = folder
        self._memo: OrderedDict[tuple[str, str], Verdict] = OrderedDict()

    @classmethod
    def from_spec(cls, spec: str) -> LLMInterpreter:
        """Build an interpreter for a model spec (responses cached in the store file)."""
        from core.llm import make_client
        from core.paths import default_store_path

        return cls(
            make_client(spec, cache_path=default_store_path(), role="interpreter"), name=spec
        )

    def messages(self, text: str, intent: Intent, world: HostWorld) -> list[dict[str, Any]]:
        """Return the structured prompt for ``text`` over ``intent``."""
        lines = [
            f"- {c.slot}: {world.slot_label(c)} = {world.phrase(c)}" for c in intent.conditions
        ]
        tpl = Template((self.folder / "user_interpret.md").read_text(encoding="utf-8"))
        body = tpl.substitute(
            slots="\n".join(lines) or "- (none)",
            context=", ".join(sorted(intent.context)) or "(none)",
            message=text,
        )
        return [{"role": "user", "content": body}]

    def read(self, text: str, intent: Intent, world: HostWorld) -> Verdict:
        """Read ``text``; fall back to the offline interpreter on an invalid answer or error."""
        key = (intent.intent_id, text)
        got = self._memo.get(key)
        if got is not None:
            return got
        raw = ""
        try:
            resp = self.model.complete(self.messages(text, intent, world), temperature=0.0)
            raw = str(getattr(resp, "text", resp))
            act, problem = validate(raw, intent)
        except Exception as exc:  # noqa: BLE001 - a failing model falls back, never crashes
            act, problem = None, f"{type(exc).__name__}: {exc}"
        if act is None:
            off = interpret(text, intent, world)
            verdict = Verdict(act=off, valid=False, fallback=True, detail=problem, raw=raw)
        else:
            offline = interpret(text, intent, world)
            act = QuestionAct(
                act=act.act,
                slots=act.slots,
                confirm=act.confirm,
                wrong=act.wrong,
                context=offline.context if act.act == "slots" else (),
                topics=offline.topics if act.act == "slots" and not act.slots else (),
                source=self.name,
            )
            verdict = Verdict(act=act, valid=True, fallback=False, detail="", raw=raw)
        self._memo[key] = verdict
        while len(self._memo) > 4096:
            self._memo.popitem(last=False)
        return verdict


_INTERPRETERS: dict[str, LLMInterpreter] = {}


def interpreter_for(spec: str) -> LLMInterpreter:
    """Return the (process-wide) LLM interpreter of a model spec."""
    got = _INTERPRETERS.get(spec)
    if got is None:
        got = _INTERPRETERS[spec] = LLMInterpreter.from_spec(spec)
    return got
