"""Language-model judges: Identification (five shuffled persona cards) and Consistency.

Prompts are data files (``data/prompts/judge_identification.md`` and
``judge_consistency.md``, ``string.Template`` placeholders). Cards are shuffled per episode
with a seeded ``random.Random`` keyed by the episode id, so a rerun asks the same question and
is served from the response cache.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any, Protocol

from core.errors import ConfigError, LLMError
from core.grip.judges.base import (
    INVALID,
    JUDGE_ERROR,
    MAX_IDENT_TURNS,
    MAX_PAIR_TURNS,
    Judgment,
    PersonaCard,
    UserTurn,
)
from core.paths import PROMPTS_DIR

LETTERS = "ABCDE"
IDENT_PROMPT = "judge_identification.md"
PAIR_PROMPT = "judge_consistency.md"
JUDGE_SEED = 20260811
"""Seed of the card shuffles (the reference's Identification seed)."""


class _Completer(Protocol):
    def complete(self, messages: Sequence[Any], **kw: Any) -> Any: ...


def load_prompt(name: str, folder: Path | None = None) -> Template:
    """Load a judge prompt template from ``data/prompts/``."""
    path = (folder or PROMPTS_DIR) / name
    if not path.is_file():
        raise ConfigError("judge prompt not found", file=path)
    return Template(path.read_text(encoding="utf-8"))


def _render_turns(turns: Sequence[UserTurn], limit: int) -> str:
    shown = [t.text.strip() for t in turns if t.text.strip()][:limit]
    return "\n".join(f"{i + 1}. {t}" for i, t in enumerate(shown)) or "(no messages)"


def shuffled_cards(
    cards: Sequence[PersonaCard], episode_id: str, seed: int = JUDGE_SEED
) -> list[PersonaCard]:
    """The cards in the order shown for ``episode_id`` (deterministic)."""
    order = list(cards)
    random.Random(f"{seed}:{episode_id}").shuffle(order)
    return order


def parse_letter(text: str, n: int = 5) -> int | None:
    """Index of the chosen card in a reply (``Answer: C`` preferred; else a lone letter)."""
    letters = LETTERS[:n]
    m = re.search(rf"answer\s*[:=-]?\s*\(?([{letters}])\b", text, flags=re.IGNORECASE)
    if m is None:
        found = re.findall(rf"\b([{letters}])\b", text)
        if len(set(found)) != 1:
            return None
        return letters.index(found[0])
    return letters.index(m.group(1).upper())


def parse_same(text: str) -> str:
    """``SAME`` / ``DIFFERENT`` from a reply (the ``Answer:`` line wins; else the last word)."""
    m = re.search(r"answer\s*[:=-]?\s*\**\s*(SAME|DIFFERENT)\b", text, flags=re.IGNORECASE)
    if m:
        return m.group(1).upper()
    found = re.findall(r"\b(SAME|DIFFERENT)\b", text.upper())
    return found[-1] if found else INVALID


class LLMJudge:
    """One model acting as a role-realism judge.

    Args:
        name: Name stored with its judgments (the model spec string).
        client: Anything with ``complete(messages) -> response`` with a ``.text``
            (:class:`core.llm.LLMClient`, :class:`core.llm.ScriptedLLM`).
        seed: Seed of the card shuffles.
    """

    def __init__(self, name: str, client: _Completer, *, seed: int = JUDGE_SEED) -> None:
        self.name = name
        self.client = client
        self.seed = seed
        self._ident = load_prompt(IDENT_PROMPT)
        self._pair = load_prompt(PAIR_PROMPT)

    def _ask(self, prompt: str) -> tuple[str, str | None]:
        """The reply text, or ``("", error)`` when the model call failed.

        A failed call is an *error*, not an answer: it is never parsed as ``invalid``.
        """
        try:
            resp = self.client.complete([{"role": "user", "content": prompt}])
        except LLMError as exc:
            return "", str(exc)
        return str(getattr(resp, "text", "") or ""), None

    def identify(
        self, items: Sequence[tuple[str, Sequence[UserTurn]]], cards: Sequence[PersonaCard]
    ) -> list[Judgment]:
        """Identification: one call per episode, cards shuffled per episode."""
        out: list[Judgment] = []
        for eid, turns in items:
            order = shuffled_cards(cards, eid, self.seed)
            card_text = "\n".join(f"{LETTERS[i]}. {c.text}" for i, c in enumerate(order))
            prompt = self._ident.safe_substitute(
                turns=_render_turns(turns, MAX_IDENT_TURNS), cards=card_text
            )
            text, error = self._ask(prompt)
            if error is not None:
                out.append(Judgment(self.name, "identification", eid, JUDGE_ERROR, error))
                continue
            idx = parse_letter(text, len(order))
            value = order[idx].persona_id if idx is not None else INVALID
            raw = json.dumps({"reply": text, "cards": [c.persona_id for c in order]})
            out.append(Judgment(self.name, "identification", eid, value, raw))
        return out

    def compare(
        self, items: Sequence[tuple[str, Sequence[UserTurn], Sequence[UserTurn]]]
    ) -> list[Judgment]:
        """Consistency: one call per pair."""
        out: list[Judgment] = []
        for pid, ta, tb in items:
            prompt = self._pair.safe_substitute(
                turns_a=_render_turns(ta, MAX_PAIR_TURNS), turns_b=_render_turns(tb, MAX_PAIR_TURNS)
            )
            text, error = self._ask(prompt)
            value = JUDGE_ERROR if error is not None else parse_same(text)
            out.append(Judgment(self.name, "consistency", pid, value, error or text))
        return out


def llm_pair(specs: str, cache_path: Path | None = None) -> list[LLMJudge]:
    """Build the two LLM judges of ``--judges MODEL_A,MODEL_B``.

    Raises:
        ConfigError: Unless exactly two model specs are given (names the ``--judges`` field).
    """
    from core.llm import make_client
    from core.llm.models import role_entry, role_label

    parts = [p.strip() for p in specs.split(",") if p.strip()]
    if parts == ["models"]:
        entries = [role_entry("judges", 0), role_entry("judges", 1)]
        first, second = entries
        if first is not None and second is not None:
            # each judge with its own entry (two entries may name the same model)
            names = [first.label, second.label]
            if names[0] == names[1]:
                names = [f"{names[0]}#1", f"{names[1]}#2"]
            return [
                LLMJudge(name, make_client(entry, cache_path=cache_path, role="judge"))
                for name, entry in zip(names, (first, second), strict=True)
            ]
        parts = [p for p in (role_label("judges", 0), role_label("judges", 1)) if p]
    if len(parts) != 2:
        raise ConfigError(
            f"expected two model specs MODEL_A,MODEL_B, got {len(parts)}",
            file="command line",
            field="--judges",
        )
    return [LLMJudge(p, make_client(p, cache_path=cache_path, role="judge")) for p in parts]
