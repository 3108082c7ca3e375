"""The LLM voice: phrases reply plans through :mod:`core.llm`.

The model is shown only what code decided to disclose (the facts to say) plus private
instructions tagged ``[PRIVATE]``. Every reply is checked against what it may say:

* it must not echo its prompt — a ``[PRIVATE]`` tag or line, a prompt label (``Say:``,
  ``Rules:`` …), or eight words in a row from the persona description or the private
  instructions (:func:`echo_problem`);
* it must not contradict the executable verdict (sound accepting on a rejection or rejecting
  on an acceptance).

A reply that fails is regenerated once with the problem as a constraint, then replaced by a
fixed template line; every repair is returned for recording (``voice_rejected``,
``voice_regenerate``, ``voice_fallback``). What the reply then discloses is read from its
words by the engine (:func:`core.engine.rules.say`), with the same reader as a person's.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template
from typing import Any, Protocol

from core.model.persona import Persona
from core.paths import PROMPTS_DIR
from core.protocol.user import ReplyPlan
from core.protocol.voices import VoiceOutput, VoiceRepair
from core.protocol.voices.template import TemplateVoice

_APPROVING = re.compile(
    r"^\W*(yes|yeah|yep|perfect|great|excellent|wonderful|that's it|that is it|thanks|"
    r"thank you|looks good|sounds good|exactly)\b",
    re.IGNORECASE,
)
_REJECTING = re.compile(
    r"(^\W*(no|nope|nah)\b)|\b(not right|not what|wrong|isn't it|is not it|not it)\b",
    re.IGNORECASE,
)
_TASKS = {
    "answer": "answer the question with the facts below, nothing else",
    "context": "give the account details below",
    "decline": "politely avoid answering; give no facts",
    "already_asked": "say you already answered that; give no new facts",
    "confusion": "say you do not understand what is being asked; give no facts",
    "rejection": "say the proposal is not what you wanted",
    "acceptance": "confirm warmly that this is what you wanted",
    "mute": "say nothing",
}
_NOTE_TASKS = {
    "confirm_yes": "say yes, the assistant may go ahead (add only the facts below, if any)",
    "confirm_no": "say no, it is not what you want; give no facts",
    "no_requirement": "say you have no preference about that; give no facts",
    "nothing_else": "say that is everything you need; give no facts",
}
MAX_CHARS = 600

ECHO_WORDS = 8
"""Words in a row shared with the persona description or a private line that make an echo."""

_LABELS = re.compile(
    r"(\[\s*private|private\s*\]|^\s*(say|rules|who you are|your manner|write your reply)\s*:|"
    r"what your reply must do|the assistant's last message was|write your reply now)",
    re.IGNORECASE | re.MULTILINE,
)
_WORD = re.compile(r"[a-z0-9']+")


def _grams(text: str, n: int) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def echo_problem(text: str, private: list[str], n: int = ECHO_WORDS) -> str | None:
    """What makes ``text`` an echo of its prompt, or None.

    Args:
        text: The voice's reply.
        private: Prompt texts the customer must never repeat (the persona description, the
            private instruction lines).
        n: Words in a row that count as repeating.

    >>> echo_problem("[PRIVATE] Say: nothing", [])
    'a private tag or prompt label'
    >>> echo_problem("I want it in blue, size nine.", ["Prefers blue things above all else"])
    """
    if _LABELS.search(text):
        return "a private tag or prompt label"
    said = _grams(text, n)
    for source in private:
        if said & _grams(source, n):
            return f"{n} words in a row from the prompt"
    return None


class _Model(Protocol):
    def complete(self, messages: list[dict[str, Any]], **params: Any) -> Any: ...


def contradicts(plan: ReplyPlan, text: str) -> bool:
    """Return whether ``text`` contradicts the verdict the plan carries."""
    if plan.kind == "rejection":
        return bool(_APPROVING.search(text)) and not _REJECTING.search(text)
    if plan.kind == "acceptance":
        return bool(_REJECTING.search(text))
    return False


def _verdict_line(plan: ReplyPlan) -> str:
    if plan.kind == "rejection":
        what = "; ".join(plan.problems) or ", ".join(f"the {x}" for x in plan.hinted_labels)
        hint = f" What is off: {what}." if what else " Do not say what is off."
        return "The proposal does NOT satisfy you." + hint
    if plan.kind == "acceptance":
        return "The proposal satisfies you."
    if plan.note == "confirm_no":
        what = ", ".join(f"the {x}" for x in plan.hinted_labels)
        return "What the assistant describes is NOT what you want." + (
            f" Say only which part is wrong: {what} (never the right value)."
            if what
            else " Do not say what is wrong."
        )
    return "Keep to the facts listed."


class LLMVoice:
    """Phrases plans with a chat model (``complete(messages) -> response with .text``)."""

    def __init__(self, model: _Model, name: str, folder: Path = PROMPTS_DIR) -> None:
        self.model = model
        self.name = name
        self.folder = folder
        self._fallback = TemplateVoice()

    @classmethod
    def from_spec(cls, spec: str) -> LLMVoice:
        """Build a voice for a litellm model spec (responses cached in the store file)."""
        from core.llm import make_client
        from core.paths import default_store_path

        return cls(make_client(spec, cache_path=default_store_path(), role="voice"), name=spec)

    def _tpl(self, name: str) -> Template:
        return Template((self.folder / name).read_text(encoding="utf-8"))

    def messages(self, plan: ReplyPlan, persona: Persona) -> list[dict[str, Any]]:
        """Return the prompt for ``plan`` (only the plan's facts appear untagged)."""
        system = self._tpl("user_system.md").substitute(
            bio=persona.bio, traits=", ".join(persona.traits) or "natural"
        )
        facts = "\n".join(f"- {f.phrase}" for f in plan.facts) or "- (nothing)"
        user = self._tpl("user_reply.md").substitute(
            question=plan.question or "(a proposal: the assistant says it has finished)",
            task=_NOTE_TASKS.get(plan.note) or _TASKS[plan.kind],
            facts=facts,
            verdict=_verdict_line(plan),
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _ask(self, msgs: list[dict[str, Any]]) -> str:
        resp = self.model.complete(msgs)
        return " ".join(str(getattr(resp, "text", resp)).split())[:MAX_CHARS]

    def _private(self, msgs: list[dict[str, Any]], persona: Persona) -> list[str]:
        """What the reply must never repeat: the description and the private lines."""
        lines = [persona.bio]
        for m in msgs:
            for line in str(m.get("content") or "").splitlines():
                if "[PRIVATE]" in line:
                    lines.append(line.replace("[PRIVATE]", ""))
        return [x for x in lines if x.strip()]

    def _problem(self, plan: ReplyPlan, text: str, private: list[str]) -> tuple[str, str] | None:
        """(repair target, what is wrong) for a reply that may not be said, else None."""
        echo = echo_problem(text, private)
        if echo is not None:
            return "voice_rejected", f"echoed its prompt: {echo}"
        if contradicts(plan, text):
            return "voice_regenerate", "reply contradicted the verdict"
        return None

    def say(self, plan: ReplyPlan, persona: Persona, rng_key: str) -> VoiceOutput:
        """Phrase ``plan``; regenerate once on an echo or contradiction, then fall back."""
        msgs = self.messages(plan, persona)
        private = self._private(msgs, persona)
        text = self._ask(msgs)
        problem = self._problem(plan, text, private)
        if problem is None:
            return VoiceOutput(text=text)
        target, detail = problem
        if target == "voice_rejected":
            fix = self._tpl("user_echo_repair.md").substitute(previous=text, problem=detail)
        else:
            fix = self._tpl("user_repair.md").substitute(previous=text, verdict=_verdict_line(plan))
        again = self._ask(
            [*msgs, {"role": "assistant", "content": text}, {"role": "user", "content": fix}]
        )
        repairs = [VoiceRepair(target, detail, text, again)]
        still = self._problem(plan, again, private)
        if still is None:
            return VoiceOutput(text=again, repairs=tuple(repairs))
        fixed = self._fallback.say(plan, persona, rng_key).text
        repairs.append(
            VoiceRepair(
                "voice_fallback", f"regenerated reply still failed: {still[1]}", again, fixed
            )
        )
        return VoiceOutput(text=fixed, repairs=tuple(repairs), fallback=True)
