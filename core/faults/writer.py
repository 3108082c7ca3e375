"""Writers turn (true intent, fault plans) into the opening request text.

The :class:`TemplateWriter` is offline and deterministic per (seed, variant): it phrases each
condition with the world's own ``phrase`` hook and applies the project-written surface
strategies of ``data/faults/requests.yaml`` and the off-topic pools of
``data/faults/offtopic.yaml`` (see :mod:`core.faults.surface` and docs/REQUESTS.md).
The LLM writer lives in :mod:`core.faults.llm`.
Writers never see the answer set, only the conditions and the plan.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.faults.cue_lexicon import LEXICON, Lexicon
from core.faults.plan import FaultPlan
from core.faults.surface import (
    SURFACES,
    Surfaces,
    goal_of,
    label_of,
    rewrite,
    situation_of,
    unavailable_of,
    value_words,
)
from core.graph.hosts.base import HostAdapter
from core.model.intent import Intent
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


WHOLE_MESSAGE = frozenset({FaultType.CONTEXTUAL_IRRELEVANCE, FaultType.INDIRECT_INTENT})
"""Faults that act on the whole message rather than one slot."""

CONNECTORS = (
    "Anyway,",
    "But that's not why I'm writing.",
    "Okay, enough about that.",
    "Sorry, back to why I'm here.",
    "Anyway, on to the reason I'm writing.",
)


ADDRESS_PARTS = ("address1", "address2", "city", "state", "zip", "country")
"""τ² address arguments, in the order a customer says an address."""


def merge_clauses(
    adapter: HostAdapter, intent: Intent, order: Sequence[str], clause: dict[str, str]
) -> dict[str, str]:
    """Say an untouched address (or an origin and destination) as one customer clause.

    ``the street address is 1 Elm St, the second address line is Suite 2, the city is …``
    becomes ``the address is 1 Elm St, Suite 2, Portland, OR 97176, USA``. Only parts whose
    clause is still the world's own phrasing are merged (a faulty part keeps its own clause).

    Returns:
        slot → merged clause for the first merged slot of each group, and ``"#" + slot`` →
        ``"x"`` for the other slots folded into it.
    """
    out: dict[str, str] = {}
    if adapter.host_class != "service":
        return out
    smap = intent.slot_map()
    by_req: dict[str, dict[str, str]] = {}
    for s in order:
        parts = s.split(":")
        if len(parts) == 4 and parts[0] == "arg":
            by_req.setdefault(f"{parts[1]}:{parts[2]}", {})[parts[3]] = s

    def untouched(slot: str) -> bool:
        return clause[slot] == adapter.phrase(smap[slot])

    for args in by_req.values():
        addr = [args[a] for a in ADDRESS_PARTS if a in args]
        if len(addr) >= 3 and all(untouched(x) for x in addr):
            vals = {a: adapter.decoded(smap[args[a]].value) for a in ADDRESS_PARTS if a in args}
            if all(isinstance(v, str) for v in vals.values()):
                st_zip = " ".join(str(vals[a]) for a in ("state", "zip") if vals.get(a))
                seq = [vals.get("address1"), vals.get("address2"), vals.get("city"), st_zip]
                text = ", ".join(str(v) for v in [*seq, vals.get("country")] if v)
                out[addr[0]] = f"the address is {text}"
                for x in addr[1:]:
                    out["#" + x] = "x"
        trip = [args[a] for a in ("origin", "destination") if a in args]
        if len(trip) == 2 and all(untouched(x) for x in trip):
            src, dst = (value_words(adapter, smap[x]) for x in trip)
            out[trip[0]] = f"I'm flying from {src} to {dst}"
            out["#" + trip[1]] = "x"
    return out


class TemplateWriter:
    """Offline writer: project-written surface strategies, deterministic per variant and seed.

    Service hosts (τ²): an opener, one ask per operation in customer words (never the tool),
    the details as the world phrases them, a hedge. Shop hosts: a frame around the section
    and the wanted properties. Off-topic passages come from a per-host pool and are not
    reused within one intent graph (keyed by its root). With three or more faults the
    whole-message faults are applied in a second, transformation-only pass over the text
    the slot faults produced.
    """

    name = "template"

    def __init__(self, lexicon: Lexicon = LEXICON, surfaces: Surfaces = SURFACES) -> None:
        self.lex = lexicon
        self.sf = surfaces
        self._used: dict[str, set[int]] = {}

    # ------------------------------------------------------------------ passages
    def passage(self, adapter: HostAdapter, intent: Intent, rng: random.Random) -> str:
        """An off-topic passage not yet used for this graph root (pool restarts when empty)."""
        pool = self.sf.passages(adapter.benchmark)
        used = self._used.setdefault(intent.intent_id, set())
        if len(used) >= len(pool):
            used.clear()
        free = [i for i in range(len(pool)) if i not in used]
        i = free[rng.randrange(len(free))]
        used.add(i)
        if len(self._used) > 4096:
            self._used.clear()
        return pool[i]

    # ------------------------------------------------------------------ write
    def write(
        self,
        adapter: HostAdapter,
        intent: Intent,
        plans: Sequence[FaultPlan],
        *,
        variant: int,
        rng: random.Random,
    ) -> Written:
        """Render ``intent`` carrying ``plans`` (see the class docstring)."""
        two_pass = len(plans) >= 3
        surfaces: dict[int, str] = {}
        first = [(i, p) for i, p in enumerate(plans) if not (two_pass and p.fault in WHOLE_MESSAGE)]
        text = self._render(adapter, intent, first, variant, rng, surfaces)
        if two_pass:
            for i, p in enumerate(plans):
                if p.fault is FaultType.INDIRECT_INTENT:
                    text = self._unask_message(text)
                    surfaces[i] = ""
            for i, p in enumerate(plans):
                if p.fault is FaultType.CONTEXTUAL_IRRELEVANCE:
                    passage = self.passage(adapter, intent, rng)
                    text = self._prefix(passage, text, variant)
                    surfaces[i] = passage
        text = " ".join(text.split()).replace(" ,", ",").replace("..", ".").replace(" .", ".")
        return Written(text=text, surfaces=surfaces)

    def _prefix(self, passage: str, text: str, variant: int) -> str:
        con = _pick(CONNECTORS, variant)
        keep = text.startswith(("I ", "I'"))
        rest = text if keep or con.endswith(".") else text[:1].lower() + text[1:]
        if con.endswith(".") and not keep:
            rest = _cap(rest)
        return f"{passage} {con} {rest}"

    def _unask_message(self, text: str) -> str:
        out = rewrite(text, self.sf.data.service.whole_message_unask)
        out = re.sub(r"\s*,?\s*([.!?])", r"\1", out.replace("?", "."))
        return " ".join(_cap(s) for s in re.split(r"(?<=[.!])\s+", out) if s)

    def _render(
        self,
        adapter: HostAdapter,
        intent: Intent,
        plans: Sequence[tuple[int, FaultPlan]],
        variant: int,
        rng: random.Random,
        surfaces: dict[int, str],
    ) -> str:
        service = adapter.host_class == "service"
        shop_t = self.sf.data.shop
        clause: dict[str, str] = {c.slot: adapter.phrase(c) for c in intent.conditions}
        order = [c.slot for c in intent.conditions]
        if len(order) > 2:
            k = variant % len(order)
            order = order[k:] + order[:k]
        trailing: list[str] = []
        dangling: list[str] = []
        tail_sentences: list[str] = []
        extra_requests: list[tuple[str, list[str], int]] = []
        capability: dict[str, str] = {}
        passage = ""
        oblique = False
        smap = intent.slot_map()
        for i, p in plans:
            kind = p.mask_kind
            cond = smap.get(p.target) if p.target else None
            label = label_of(adapter, cond, self.sf) if cond is not None else ""
            if kind == "substituted" and cond is not None and p.stated_value is not None:
                clause[cond.slot] = adapter.phrase(
                    cond.model_copy(update={"value": p.stated_value})
                )
                surfaces[i] = clause[cond.slot]
            elif kind == "presupposed" and cond is not None and p.stated_value is not None:
                alt = cond.model_copy(update={"value": p.stated_value})
                doubted, fallback = value_words(adapter, cond), value_words(adapter, alt)
                if service:
                    clause[cond.slot] = ""
                    sentence = _pick(self.sf.data.presuppositions, variant).format(
                        doubted=doubted,
                        unavailable=unavailable_of(cond, variant, self.sf),
                        fallback=fallback,
                    )
                else:
                    clause[cond.slot] = adapter.phrase(alt)
                    sentence = _pick(shop_t.presupposition, variant).format(
                        doubted=doubted, fallback=fallback
                    )
                    sentence = _cap(sentence) + "."
                tail_sentences.append(_cap(sentence))
                surfaces[i] = _cap(sentence)
            elif kind == "withheld" and cond is not None:
                clause[cond.slot] = ""
                surfaces[i] = ""
            elif kind == "marked" and cond is not None:
                if service:
                    clause[cond.slot] = p.surface
                else:
                    tpls = shop_t.vague if p.sub_kind == "vague" else shop_t.referential
                    clause[cond.slot] = _pick(tpls, variant).format(marker=p.surface, label=label)
                surfaces[i] = clause[cond.slot]
            elif kind == "ambiguous" and cond is not None and p.sub_kind == "two_way":
                clause[cond.slot] = self._two_way_say(p.surface, label, service, variant)
                surfaces[i] = clause[cond.slot]
            elif kind == "ambiguous" and cond is not None and p.sub_kind == "polysemous":
                clause[cond.slot] = _pick(shop_t.lexical, variant).format(
                    token=p.surface, label=label
                )
                surfaces[i] = clause[cond.slot]
            elif kind == "ambiguous" and cond is not None:
                phrase = clause[cond.slot]
                clause[cond.slot] = ""
                if service and not p.surface:
                    trailing.append(phrase)
                    surfaces[i] = phrase
                else:
                    companion = p.surface or rng.choice(shop_t.companions)
                    tpls = self.sf.data.service.syntactic if service else shop_t.syntactic
                    tpl = _pick(tpls, variant)
                    frag = tpl.split("{rest}", 1)[1].format(companion=companion, phrase=phrase)
                    (dangling if service else trailing).append(frag.lstrip(", "))
                    surfaces[i] = frag.lstrip(", ")
            elif kind == "extra":
                if service:
                    req = adapter.request_of(p.extra[0].slot) or ""
                    extra_requests.append((req, [adapter.phrase(c) for c in p.extra], i))
                else:
                    extra = _join([adapter.phrase(c) for c in p.extra])
                    frag = _pick(shop_t.extra, variant).split("{body}", 1)[1].format(extra=extra)
                    frag = _cap(frag.lstrip(",;. "))
                    tail_sentences.append(frag + ".")
                    surfaces[i] = frag
            elif kind == "capability" and p.target is not None:
                if service:
                    capability[adapter.request_of(p.target) or ""] = p.surface
                elif cond is not None:
                    clause[cond.slot] = _pick(shop_t.capability, variant).format(
                        phrase=clause[cond.slot], capability=p.surface
                    )
                surfaces[i] = p.surface
            elif p.fault is FaultType.CONTEXTUAL_IRRELEVANCE:
                passage = self.passage(adapter, intent, rng)
                surfaces[i] = passage
            elif p.fault is FaultType.INDIRECT_INTENT:
                oblique = True
                surfaces[i] = ""
        if service:
            text = self._service(
                adapter,
                intent,
                order,
                clause,
                trailing,
                dangling,
                extra_requests,
                capability,
                oblique,
                variant,
                surfaces,
            )
        else:
            text = self._shop(adapter, intent, order, clause, trailing, oblique, variant)
        for s in tail_sentences:
            text = text.rstrip() + " " + s
        if service and not oblique:
            text += _pick(self.sf.data.service.hedges, variant)
        if passage:
            text = self._prefix(passage, text, variant)
        return text

    def _two_way_say(self, word: str, label: str, service: bool, variant: int) -> str:
        for tw in self.sf.data.two_way:
            if tw.word == word and service:
                return tw.say
        return _pick(self.sf.data.shop.lexical, variant).format(token=word, label=label)

    def _service(
        self,
        adapter: HostAdapter,
        intent: Intent,
        order: list[str],
        clause: dict[str, str],
        trailing: list[str],
        dangling: list[str],
        extra_requests: list[tuple[str, list[str], int]],
        capability: dict[str, str],
        oblique: bool,
        variant: int,
        surfaces: dict[int, str],
    ) -> str:
        t = self.sf.data.service
        groups: dict[str, list[str]] = {}
        merged = merge_clauses(adapter, intent, order, clause)
        for s in order:
            req = adapter.request_of(s) or ""
            groups.setdefault(req, [])
            if s in merged:
                groups[req].append(merged[s])
            elif clause[s] and not merged.get("#" + s):
                groups[req].append(clause[s])
        reqs = sorted(groups, key=lambda r: (r.split(":")[0].zfill(4), r))
        sentences: list[str] = []
        opener = _pick(t.openers, variant + len(reqs))
        for j, r in enumerate(reqs):
            args = groups[r]
            if j == len(reqs) - 1 and trailing:
                args = args + trailing
            body = _join(args)
            if j == len(reqs) - 1 and dangling:
                body = ", ".join([body, *dangling]) if body else ", ".join(dangling)
            if oblique:
                sentences.append(situation_of(adapter, r, variant + j, self.sf))
                if body:
                    sentences.append(_cap(rewrite(body, self.sf.data.situation_rewrites)) + ".")
                continue
            goal = goal_of(adapter, r, variant + j, self.sf)
            if r in capability:
                ask = _pick(t.capability, variant).format(capability=capability[r], goal=goal)
            elif j == 0:
                ask = _pick(t.asks, variant).format(goal=goal)
            else:
                ask = _pick(t.then_asks, variant + j).format(goal=goal)
            sentences.append(ask)
            if body:
                sentences.append(
                    _pick(t.details, variant + j).format(body=body, body_cap=_cap(body))
                )
        for req, phrases, i in extra_requests:
            goal = goal_of(adapter, req, variant + 1, self.sf)
            extra = [_pick(t.then_asks, variant).format(goal=goal), _cap(_join(phrases)) + "."]
            sentences += extra
            surfaces[i] = " ".join(extra)
        text = " ".join(s for s in sentences if s)
        if opener and not oblique:
            keep = text.startswith(("I ", "I'"))
            text = f"{opener} {text if keep else text[:1].lower() + text[1:]}"
        return text

    def _shop(
        self,
        adapter: HostAdapter,
        intent: Intent,
        order: list[str],
        clause: dict[str, str],
        trailing: list[str],
        oblique: bool,
        variant: int,
    ) -> str:
        t = self.sf.data.shop
        body = _join([clause[s] for s in order if clause[s]])
        if trailing:
            body = body + ", " + ", ".join(trailing)
        topic = adapter.topic(intent)
        frames = t.situations if oblique else t.frames
        return _pick(frames, variant).format(topic=topic, body=body, body_cap=_cap(body))
