"""Writers turn (true intent, fault plans) into the opening request text.

The :class:`TemplateWriter` is offline and deterministic per (seed, variant): it phrases each
condition with the world's own ``phrase`` hook and applies project-written fragments from
``data/faults/templates.yaml``. The LLM writer lives in :mod:`core.faults.llm`.
Writers never see the answer set, only the conditions and the plan.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.faults.lexicon import LEXICON, Lexicon
from core.faults.plan import FaultPlan
from core.graph.hosts.base import HostAdapter
from core.model.intent import Condition, Intent
from core.model.sample import FaultType


@dataclass
class Written:
    """A rendered request plus the words carrying each component."""

    text: str
    surfaces: dict[int, str] = field(default_factory=dict)


class Writer(Protocol):
    """Anything that renders a request for a plan."""

    name: str

    def write(
        self,
        adapter: HostAdapter,
        intent: Intent,
        plans: Sequence[FaultPlan],
        *,
        variant: int,
        rng: random.Random,
    ) -> Written:
        """Render the opening request carrying exactly ``plans``."""
        ...


def _join(parts: list[str]) -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _pick(options: Sequence[str], variant: int) -> str:
    return options[variant % len(options)]


def request_lead(request: str) -> str:
    """Readable lead of a τ² request id ``<i>:<tool>`` ('update reservation flights')."""
    tool = request.split(":", 1)[-1]
    return tool.replace("_", " ")


class TemplateWriter:
    """Offline writer: project-written phrasing variants, deterministic per variant and seed."""

    name = "template"

    def __init__(self, lexicon: Lexicon = LEXICON) -> None:
        self.lex = lexicon

    def write(
        self,
        adapter: HostAdapter,
        intent: Intent,
        plans: Sequence[FaultPlan],
        *,
        variant: int,
        rng: random.Random,
    ) -> Written:
        """Render ``intent`` carrying ``plans`` (see module docstring)."""
        t = self.lex.host(adapter.host_class)
        surfaces: dict[int, str] = {}
        clause: dict[str, str] = {c.slot: adapter.phrase(c) for c in intent.conditions}
        order = [c.slot for c in intent.conditions]
        trailing: list[str] = []
        leads: dict[str, str] = {}
        tail_sentences: list[str] = []
        prefix = ""
        oblique = False
        for i, p in enumerate(plans):
            kind = p.mask_kind
            tgt = p.target
            cond = intent.slot_map().get(tgt) if tgt else None
            label = adapter.slot_label(cond) if cond is not None else ""
            if kind == "substituted" and cond is not None and p.stated_value is not None:
                clause[cond.slot] = adapter.phrase(
                    cond.model_copy(update={"value": p.stated_value})
                )
                surfaces[i] = clause[cond.slot]
            elif kind == "presupposed" and cond is not None and p.stated_value is not None:
                fallback = adapter.phrase(cond.model_copy(update={"value": p.stated_value}))
                doubted = adapter.phrase(cond)
                clause[cond.slot] = fallback
                tpl = _pick(t.presupposition, variant)
                frag = tpl.split("{rest_with_fallback}", 1)[1]
                sentence = frag.format(doubted=doubted, fallback=fallback).lstrip(",. ")
                tail_sentences.append(sentence)
                surfaces[i] = sentence
            elif kind == "withheld" and cond is not None:
                clause[cond.slot] = ""
                surfaces[i] = ""
            elif kind == "marked" and cond is not None:
                tpls = t.vague if p.sub_kind == "vague" else t.referential
                clause[cond.slot] = _pick(tpls, variant).format(marker=p.surface, label=label)
                surfaces[i] = clause[cond.slot]
            elif kind == "ambiguous" and cond is not None and p.sub_kind == "polysemous":
                clause[cond.slot] = _pick(t.lexical, variant).format(token=p.surface, label=label)
                surfaces[i] = clause[cond.slot]
            elif kind == "ambiguous" and cond is not None:
                phrase = clause[cond.slot]
                clause[cond.slot] = ""
                if adapter.host_class == "service":
                    trailing.append(phrase)
                    surfaces[i] = phrase
                else:
                    companion = p.surface or rng.choice(self.lex.companions(adapter.host_class))
                    tpl = _pick(t.syntactic, variant)
                    frag = tpl.split("{rest}", 1)[1].format(companion=companion, phrase=phrase)
                    trailing.append(frag.lstrip(", "))
                    surfaces[i] = frag.lstrip(", ")
            elif kind == "extra":
                if adapter.host_class == "service":
                    extra = self._body(
                        adapter,
                        [c.slot for c in p.extra],
                        {c.slot: adapter.phrase(c) for c in p.extra},
                        {},
                    )
                else:
                    extra = _join([adapter.phrase(c) for c in p.extra])
                tpl = _pick(t.extra, variant)
                frag = tpl.split("{body}", 1)[1].format(extra=extra).lstrip(",;. ")
                tail_sentences.append(frag)
                surfaces[i] = frag
            elif kind == "capability" and tgt is not None:
                req = adapter.request_of(tgt) or ""
                tpl = _pick(t.capability or self.lex.templates.service.capability, variant)
                leads[req] = tpl.format(tool=p.surface, lead=request_lead(req))
                surfaces[i] = p.surface
            elif kind == "noise" and p.fault is FaultType.CONTEXTUAL_IRRELEVANCE:
                prefix = _pick(self.lex.templates.offtopic, variant + rng.randrange(97))
                surfaces[i] = prefix
            elif kind == "noise" and p.fault is FaultType.INDIRECT_INTENT:
                oblique = True
                surfaces[i] = ""
        if oblique:
            clause = {k: self._unask(v) for k, v in clause.items()}
        body = self._body(adapter, order, clause, leads)
        if trailing:
            if adapter.host_class == "service":
                body = body + ", " + _join(trailing)
            else:
                body = body + ", " + ", ".join(trailing)
        for s in tail_sentences:
            body = body.rstrip(". ") + ". " + _cap(s)
        topic = adapter.topic(intent)
        frames = t.indirect if oblique else t.request
        text = _pick(frames, variant).format(topic=topic, body=body, body_cap=_cap(body))
        if prefix:
            keep = text.startswith(("I ", "I'"))
            text = prefix + " Anyway, " + (text if keep else text[:1].lower() + text[1:])
        text = " ".join(text.split()).replace(" ,", ",").replace("..", ".")
        return Written(text=text, surfaces=surfaces)

    def _unask(self, phrase: str) -> str:
        """Rewrite request wording inside a phrase (indirect intent states no request)."""
        rewrites = self.lex.templates.indirect_rewrites
        out = phrase
        for src in sorted(rewrites, key=len, reverse=True):
            pattern = r"(?<![a-z0-9])" + re.escape(src) + r"(?![a-z0-9])"
            out = re.sub(pattern, rewrites[src], out, flags=re.IGNORECASE)
        return " ".join(out.split())

    def _body(
        self,
        adapter: HostAdapter,
        order: list[str],
        clause: dict[str, str],
        leads: dict[str, str],
    ) -> str:
        if adapter.host_class != "service":
            return _join([clause[s] for s in order])
        groups: dict[str, list[str]] = {}
        for s in order:
            req = adapter.request_of(s) or ""
            groups.setdefault(req, [])
            if clause[s]:
                groups[req].append(clause[s])
        parts = []
        for req in sorted(groups):
            lead = leads.get(req) or request_lead(req) if req else ""
            args = _join(groups[req])
            if req.startswith("also"):
                # an "also:" bundle: its phrase already names the whole extra request
                parts.append(args)
            else:
                parts.append(f"{lead}: {args}" if args else lead)
        return "; then ".join(p for p in parts if p)


def condition_phrases(adapter: HostAdapter, conds: Sequence[Condition]) -> list[str]:
    """Phrase conditions with the world's hook (helper for prompts and reports)."""
    return [adapter.phrase(c) for c in conds]
