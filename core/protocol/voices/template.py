"""The offline template voice: project-written phrasings per persona style.

Phrasings live in ``data/voices/<style>.yaml`` (see its README); a seeded draw picks among the
variants, so an episode always says the same thing on replay.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.model.bounds import load_yaml
from core.model.persona import Persona
from core.paths import DATA_DIR
from core.protocol.rng import draw, pick
from core.protocol.user import ReplyPlan
from core.protocol.voices import VoiceOutput

VOICES_DIR = DATA_DIR / "voices"
LINE_KINDS = (
    "answer",
    "joiner",
    "volunteer",
    "decline",
    "already_asked",
    "again",
    "confusion",
    "context",
    "rejection_plain",
    "rejection_hint",
    "acceptance",
    "forced_final",
    "mute",
    "confirm_yes",
    "confirm_no",
    "confirm_no_plain",
    "no_requirement",
    "nothing_else",
)


def _read(path: Path) -> dict[str, list[str]]:
    raw: Any = load_yaml(path, what="voice file")
    if not isinstance(raw, dict):
        raise ConfigError("a voice file must be a mapping", file=path)
    out: dict[str, list[str]] = {}
    for k, v in raw.items():
        if k not in LINE_KINDS:
            raise ConfigError(f"unknown line kind {k!r}", file=path, field=str(k))
        if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
            raise ConfigError("must be a non-empty list of strings", file=path, field=str(k))
        out[k] = v
    return out


@lru_cache(maxsize=64)
def load_style(style: str, folder: Path = VOICES_DIR) -> dict[str, tuple[str, ...]]:
    """Return the phrasings of ``style`` (missing kinds and files fall back to ``default``)."""
    base = _read(folder / "default.yaml")
    missing = [k for k in LINE_KINDS if k not in base]
    if missing:
        raise ConfigError(f"default voice lacks {missing}", file=folder / "default.yaml")
    path = folder / f"{style}.yaml"
    if path.is_file():
        base.update(_read(path))
    return {k: tuple(v) for k, v in base.items()}


def _cap(s: str) -> str:
    s = s.strip()
    return s[:1].upper() + s[1:] if s else s


_SENTENCE_START = re.compile(r"(?<=[.!?] )([a-z])(?![a-z']*[A-Z])")
"""A lowercase word after a sentence's end: a fact phrase ("my zip code is …") placed there."""


def _sentences(text: str) -> str:
    """Capitalise each sentence a template line or a fact phrase begins in lowercase.

    Words with a capital inside ("iPhone") are left as they are.

    >>> _sentences("No. the color isn't right. my zip code is 30251. iPhone cases.")
    "No. The color isn't right. My zip code is 30251. iPhone cases."
    """
    return _SENTENCE_START.sub(lambda m: m.group(1).upper(), text)


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


class TemplateVoice:
    """Phrases reply plans with the persona's style file (offline, deterministic)."""

    name = "template"

    def __init__(self, folder: Path = VOICES_DIR) -> None:
        self.folder = folder

    def line(self, kind: str, persona: Persona, rng_key: str, counter: int) -> str:
        """Return one phrasing of ``kind`` chosen by the seeded draw ``counter``."""
        lines = load_style(persona.voice_style, self.folder)[kind]
        return pick(lines, draw(rng_key, f"voice:{kind}", counter))

    def say(self, plan: ReplyPlan, persona: Persona, rng_key: str) -> VoiceOutput:
        """Phrase ``plan`` (never adds facts)."""
        c = plan.turn * 16

        def ln(kind: str, k: int = 0) -> str:
            return self.line(kind, persona, rng_key, c + k)

        answers = [f.phrase for f in plan.facts if f.how == "answer"]
        if plan.note == "confirm_no" and plan.hinted_labels and not answers:
            problems = [f"the {x} isn't right" for x in plan.hinted_labels]
            text = ln("rejection_hint").format(problems=_join(problems))
        elif plan.note in ("confirm_yes", "no_requirement", "nothing_else") or (
            plan.note == "confirm_no" and (plan.kind == "decline" or not answers)
        ):
            kind = "confirm_no_plain" if plan.note == "confirm_no" else plan.note
            text = ln(kind)
            for i, f in enumerate(x for x in plan.facts if x.how == "volunteer"):
                text += " " + _cap(ln("volunteer", 2 + i).format(fact=f.phrase))
        elif plan.note == "confirm_no":
            text = ln("confirm_no").format(facts=ln("joiner", 1).join(answers))
        elif plan.kind == "answer":
            text = ln("answer").format(facts=ln("joiner", 1).join(answers))
            for i, f in enumerate(x for x in plan.facts if x.how == "volunteer"):
                text += " " + _cap(ln("volunteer", 2 + i).format(fact=f.phrase))
        elif plan.kind == "context":
            text = " ".join(
                ln("context", i).format(fact=f.phrase) for i, f in enumerate(plan.facts)
            )
        elif plan.kind == "already_asked":
            agains = load_style(persona.voice_style, self.folder)["again"]
            again = agains[min(max(plan.times_asked - 2, 0), len(agains) - 1)]
            text = " ".join(ln("already_asked").format(again=again).split())
        elif plan.kind == "rejection":
            problems = list(plan.problems) or [f"the {x} isn't right" for x in plan.hinted_labels]
            if problems:
                text = ln("rejection_hint").format(problems=_join(problems))
            else:
                text = ln("rejection_plain")
        elif plan.kind in ("decline", "confusion", "acceptance", "mute"):
            text = ln(plan.kind)
        else:  # pragma: no cover - ReplyKind is closed
            raise ValueError(plan.kind)
        return VoiceOutput(text=_sentences(_cap(text)))


class MuteVoice(TemplateVoice):
    """The L0 floor's user: every reply is the mute line and discloses nothing."""

    name = "mute"

    def say(self, plan: ReplyPlan, persona: Persona, rng_key: str) -> VoiceOutput:
        """Return the mute line."""
        return VoiceOutput(text=self.line("mute", persona, rng_key, plan.turn))
