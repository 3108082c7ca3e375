"""A3's LLM lesson book: lessons distilled by reflection over its own finished episodes.

Lifecycle (one run unit = one run × benchmark × persona × seed): the book starts empty; the
runner plays A3's episodes in deterministic generations; after each generation the agent model
reflects over *redacted, agent-observable digests* of that generation's episodes and rewrites
the book. Every proposed lesson is validated: known fields only, length caps, no digits, no id
markers, no tool names, no entity names from the benchmark's data, and no 5-gram overlap with
text seen in the run. At most :data:`MAX_LESSONS` lessons are kept. Nothing is persisted across
runs, personas, seeds or benchmarks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import Field, ValidationError

from core.agents.prompts import fill, load_prompt
from core.errors import LLMError
from core.llm.retry import ProviderUnavailable
from core.llm.types import ChatModel
from core.model.base import Strict
from core.model.episode import AgentView
from core.model.events import AgentActed, Event, ProposalJudged, UserReplied

MAX_LESSONS = 8
"""Cap on the number of lessons in a book."""

_ID_MARKER = re.compile(r"(#\w|\b[A-Z]{1,3}\d|\b[a-z]+_[a-z_]+\b|\bid\b|@)")
_WORD = re.compile(r"[a-z]+")


class Lesson(Strict):
    """One validated lesson."""

    when: str = Field(max_length=280)
    do: str = Field(max_length=200)
    avoid: str = Field(default="", max_length=200)
    evidence: int = Field(default=1, ge=1)
    confidence: float = Field(default=0.5, gt=0.0, le=1.0)


def _ngrams(text: str, n: int = 5) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def redact(text: str, banned: Iterable[str] = ()) -> str:
    """Replace digits, id-like tokens and ``banned`` strings in ``text``."""
    out = re.sub(r"\d", "#", text)
    out = re.sub(r"#\S+", "<id>", out)
    for b in sorted({b for b in banned if len(b) >= 3}, key=len, reverse=True):
        out = re.sub(re.escape(b), "<name>", out, flags=re.I)
    return out


_REPLY_CREDIT = {
    "answer": "answered",
    "decline": "declined",
    "already_asked": "already answered before",
    "confusion": "not understood",
    "context": "answered",
    "mute": "no reply",
}


def credit_labels(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Credit labels of a finished episode, computed by code from its events.

    Only what the agent could observe is labelled — how each question was received (answered,
    declined, already answered, not understood) with the number of facts it drew, and whether
    each final answer was accepted — never a hidden value, slot id or silent shift. The
    reflection then judges what happened, not only the strategy it reads in the transcript.
    """
    out: list[dict[str, Any]] = []
    pending: dict[str, Any] | None = None
    for ev in events:
        if isinstance(ev, AgentActed) and ev.action.kind == "ask" and not ev.forced_final:
            pending = {"turn": ev.turn, "question": "no reply"}
            out.append(pending)
        elif isinstance(ev, UserReplied) and pending is not None:
            pending["question"] = _REPLY_CREDIT.get(ev.reply_kind, ev.reply_kind)
            pending["facts"] = sum(1 for d in ev.disclosures if d.value is not None)
            pending = None
        elif isinstance(ev, ProposalJudged):
            out.append(
                {
                    "turn": ev.turn,
                    "final_answer": "accepted" if ev.accepted else "rejected",
                    "via": "operation" if ev.via == "operation" else "answer",
                }
            )
    return out


def digest(
    view: AgentView,
    banned: Iterable[str] = (),
    *,
    credit: Sequence[dict[str, Any]] = (),
    is_proposal: Callable[[Any], bool] | None = None,
) -> dict[str, Any]:
    """An agent-observable, redacted digest of a finished episode (no sample id, no query).

    Args:
        view: The final agent view.
        banned: Entity names to redact.
        credit: Credit labels computed by code (:func:`credit_labels`).
        is_proposal: Whether an environment action is a proposal (WebShop's Buy Now), which
            digests as a final answer, not as an operation.
    """
    turns: list[dict[str, str]] = []
    for e in view.transcript:
        if e.role == "agent" and e.action is not None:
            if e.action.kind == "ask":
                turns.append({"asked": redact(e.action.text, banned)[:200]})
            elif e.action.kind == "env":
                final = is_proposal is not None and is_proposal(e.action.action)
                turns.append({"did": "final answer (by operation)" if final else "operation"})
            elif e.action.kind == "propose":
                turns.append({"did": "final answer"})
            else:
                turns.append({"did": "malformed"})
        elif e.role == "user":
            turns.append({"user": redact(e.text, banned)[:200]})
    asks = sum(1 for t in turns if "asked" in t)
    return {
        "outcome": view.outcome.value if view.outcome else "unknown",
        "questions": asks,
        "turns": turns[-24:],
        "credit": list(credit)[-24:],
    }


class LessonBook:
    """A validated, capped lesson book for one run unit.

    Args:
        banned_words: Entity names and tool names that must never appear in a lesson.
        seen_texts: Texts seen in the run (queries, replies) — 5-gram overlap is rejected.
    """

    def __init__(self, banned_words: Iterable[str] = (), seen_texts: Iterable[str] = ()) -> None:
        self.lessons: list[Lesson] = []
        self.generation = 0
        self.banned = {w.lower() for w in banned_words if len(w) >= 3}
        self.seen: set[tuple[str, ...]] = set()
        for t in seen_texts:
            self.seen |= _ngrams(t)
        self.rejected: list[tuple[str, str]] = []
        self.last_rejected: list[tuple[str, str]] = []

    def add_seen(self, texts: Iterable[str]) -> None:
        """Remember texts seen in the run (for the overlap check)."""
        for t in texts:
            self.seen |= _ngrams(t)

    def validate(self, obj: Any) -> Lesson | None:
        """Return the lesson if ``obj`` passes every check (else record why, return None)."""
        try:
            lesson = Lesson.model_validate(obj)
        except ValidationError as exc:
            self.rejected.append(("schema", str(exc.errors()[0].get("msg"))))
            return None
        text = " ".join((lesson.when, lesson.do, lesson.avoid))
        low = text.lower()
        if re.search(r"\d", text):
            self.rejected.append(("digits", text[:80]))
            return None
        if _ID_MARKER.search(text):
            self.rejected.append(("id_marker", text[:80]))
            return None
        for b in self.banned:
            if re.search(rf"\b{re.escape(b)}\b", low):
                self.rejected.append(("entity", b))
                return None
        if _ngrams(text) & self.seen:
            self.rejected.append(("overlap", text[:80]))
            return None
        return lesson

    def update(self, proposed: Sequence[Any]) -> int:
        """Replace the book with the valid proposed lessons (capped, deduplicated).

        Returns:
            Number of lessons kept.
        """
        kept: list[Lesson] = []
        seen_text: set[str] = set()
        for obj in proposed:
            lesson = self.validate(obj)
            if lesson is None:
                continue
            key = (lesson.when + "|" + lesson.do).lower()
            if key in seen_text:
                continue
            seen_text.add(key)
            kept.append(lesson)
        kept.sort(key=lambda x: -x.confidence)
        self.lessons = kept[:MAX_LESSONS]
        self.generation += 1
        return len(self.lessons)

    def reflect(self, client: ChatModel, digests: Sequence[dict[str, Any]]) -> int:
        """Ask the model to rewrite the book from ``digests``; keep the old book on bad JSON."""
        prompt = fill(
            load_prompt("A3_reflect"),
            cap=str(MAX_LESSONS),
            book=json.dumps([x.model_dump() for x in self.lessons], ensure_ascii=False),
            digests=json.dumps(list(digests), ensure_ascii=False),
        )
        before = len(self.rejected)
        try:
            resp = client.complete([{"role": "user", "content": prompt}], namespace="a3-reflect")
        except ProviderUnavailable:
            raise  # the sweep pauses; the next run reflects again
        except LLMError as exc:  # the old book stays; the failure is recorded, never a crash
            self.rejected.append(("model_error", str(exc)[:200]))
            self.last_rejected = self.rejected[before:]
            self.generation += 1
            return len(self.lessons)
        m = re.search(r"\{.*\}", resp.text, re.S)
        try:
            obj = json.loads(m.group(0)) if m else None
        except json.JSONDecodeError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("lessons"), list):
            self.rejected.append(("parse", resp.text[:200]))
            self.last_rejected = self.rejected[before:]
            self.generation += 1
            return len(self.lessons)
        kept = self.update(obj["lessons"])
        self.last_rejected = self.rejected[before:]
        return kept

    def render(self) -> str:
        """The prompt block ('' while the book is empty)."""
        if not self.lessons:
            return ""
        items = "\n".join(
            f"- When {x.when}: {x.do}" + (f" Avoid: {x.avoid}" if x.avoid else "")
            for x in self.lessons
        )
        return fill(load_prompt("A3_lessons"), items=items)

    def snapshot(self) -> list[dict[str, Any]]:
        """JSON-ready lessons."""
        return [x.model_dump() for x in self.lessons]

    def event(self, generation_size: int, episodes_seen: int) -> dict[str, Any]:
        """The fields of the ``lesson_book`` event recording this book."""
        return {
            "book": "lessons",
            "generation": self.generation,
            "generation_size": generation_size,
            "episodes_seen": episodes_seen,
            "lessons": tuple(self.snapshot()),
            **({"rejected": tuple(self.last_rejected)} if self.last_rejected else {}),
        }
