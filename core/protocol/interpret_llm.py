"""The LLM question interpreter: a model maps an agent message to the same question acts.

The prompt (``data/prompts/user_interpret.md``) lists the current intent's slot ids with plain
labels and the user's values, and asks for one JSON object ``{"act", "slots", "confirm",
"wrong"}``. The answer is validated against the intent's slot ids; an invalid answer — or a
model failure — falls back to the offline interpreter. Either way the caller records a
``question_read`` event (:class:`Verdict` carries its fields). Answers are cached: the client's
response cache (the store file) across runs, and an in-process memo per (model, intent, text).
The client, prompt, memo and safe ask are :mod:`core.protocol.llm_reading` (shared with the reply
reader).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.envs.base import HostWorld
from core.model.cache import LockedLRU
from core.model.intent import Intent
from core.protocol.interpret import ACTS, QuestionAct, interpret
from core.protocol.llm_reading import RAW_CHARS, ModelReader, answer_object, slot_lines

__all__ = ["RAW_CHARS", "LLMInterpreter", "Verdict", "interpreter_for", "validate"]


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
    data, problem = answer_object(raw)
    if data is None:
        return None, problem
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


class LLMInterpreter(ModelReader[Verdict]):
    """Reads agent messages with a chat model (``complete(messages) -> response.text``)."""

    def messages(self, text: str, intent: Intent, world: HostWorld) -> list[dict[str, Any]]:
        """Return the structured prompt for ``text`` over ``intent``."""
        return self.prompt(
            "user_interpret.md",
            slots=slot_lines(intent, world),
            context=", ".join(sorted(intent.context)) or "(none)",
            message=text,
        )

    def read(self, text: str, intent: Intent, world: HostWorld) -> Verdict:
        """Read ``text``; fall back to the offline interpreter on an invalid answer or error."""
        key = (intent.intent_id, text)
        got = self._memo.get(key)
        if got is not None:
            return got
        act, problem, raw = self.ask(
            lambda: self.messages(text, intent, world), lambda answer: validate(answer, intent)
        )
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
        self._memo.put(key, verdict)
        return verdict


_INTERPRETERS: LockedLRU[str, LLMInterpreter] = LockedLRU(16)
"""Model spec → its interpreter (a bounded, locked process-wide memo)."""


def interpreter_for(spec: str) -> LLMInterpreter:
    """Return the (process-wide) LLM interpreter of a model spec."""
    got = _INTERPRETERS.get(spec)
    if got is None:
        got = LLMInterpreter.from_spec(spec)
        _INTERPRETERS.put(spec, got)  # module state, declared in docs/ARCHITECTURE.md
    return got
