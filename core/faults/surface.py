"""Customer wording: surface strategies, labels, goals and off-topic pools (``data/faults``).

The offline writer never shows a tool name or a slot / field id. Everything a request says
about an operation or a field comes from here: the customer noun of an argument
(:func:`label_of`), the customer wording of an operation (:func:`goal_of`, :func:`situation_of`)
and the value itself in customer words (:func:`value_words`). Files are validated on load
(ConfigError naming file and field).
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import pydantic_error_to_config_error
from core.graph.hosts.base import HostAdapter, contains_atom
from core.model.base import Strict
from core.model.bounds import load_yaml
from core.model.intent import Condition
from core.paths import DATA_DIR

FAULTS_DIR = DATA_DIR / "faults"


class _Service(Strict):
    openers: tuple[str, ...]
    asks: tuple[str, ...]
    then_asks: tuple[str, ...]
    details: tuple[str, ...]
    hedges: tuple[str, ...]
    syntactic: tuple[str, ...]
    companions: dict[str, tuple[str, ...]]
    capability: tuple[str, ...]
    whole_message_unask: dict[str, str]


class _Shop(Strict):
    frames: tuple[str, ...]
    situations: tuple[str, ...]
    capability: tuple[str, ...]
    capabilities: tuple[str, ...]
    companions: tuple[str, ...]
    syntactic: tuple[str, ...]
    presupposition: tuple[str, ...]
    extra: tuple[str, ...]
    referential: tuple[str, ...]
    vague: tuple[str, ...]
    lexical: tuple[str, ...]


class TwoWay(Strict):
    """A real two-way word: both senses are values of one slot."""

    word: str
    senses: tuple[tuple[str, ...], tuple[str, ...]]
    raw: tuple[str, str] | None = None
    say: str


class _Requests(Strict):
    service: _Service
    shop: _Shop
    labels: dict[str, str]
    unavailable: dict[str, tuple[str, ...]]
    presuppositions: tuple[str, ...]
    vague: dict[str, tuple[str, ...]]
    deictic: dict[str, tuple[str, ...]]
    two_way: tuple[TwoWay, ...]
    goals: dict[str, tuple[str, ...]]
    situations: dict[str, tuple[str, ...]]
    situation_rewrites: dict[str, str]
    capabilities: dict[str, tuple[str, ...]]


class _Offtopic(Strict):
    shop: tuple[str, ...]
    retail: tuple[str, ...]
    airline: tuple[str, ...]
    generic: tuple[str, ...]


def _load(path: Path, model: type[Strict]) -> Any:
    raw = load_yaml(path)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise pydantic_error_to_config_error(exc, path) from exc


class Surfaces:
    """Loaded surface data (lazy; one instance per directory)."""

    def __init__(self, directory: Path = FAULTS_DIR) -> None:
        self.directory = directory

    @cached_property
    def data(self) -> _Requests:
        """``requests.yaml``."""
        out: _Requests = _load(self.directory / "requests.yaml", _Requests)
        return out

    @cached_property
    def offtopic(self) -> _Offtopic:
        """``offtopic.yaml``."""
        out: _Offtopic = _load(self.directory / "offtopic.yaml", _Offtopic)
        return out

    def passages(self, benchmark: str) -> tuple[str, ...]:
        """Off-topic passages of a host family."""
        fam = host_family(benchmark)
        return getattr(self.offtopic, fam, self.offtopic.generic) or self.offtopic.generic


SURFACES = Surfaces()
"""The bundled surface data."""


def host_family(benchmark: str) -> str:
    """``webshop`` → ``shop``; ``tau2_retail`` → ``retail``; ``tau2_airline`` → ``airline``."""
    if "shop" in benchmark:
        return "shop"
    for fam in ("retail", "airline"):
        if fam in benchmark:
            return fam
    return "generic"


def arg_of(slot: str) -> str:
    """The argument (field) a τ² slot names (``arg:0:tool:order_id`` → ``order_id``)."""
    return slot.split(":")[-1]


def tool_of_request(request: str) -> str:
    """The tool a request id ``<i>:<tool>`` names."""
    return request.split(":", 1)[-1]


def pick(options: tuple[str, ...] | list[str], variant: int) -> str:
    """The ``variant``-th option, cycling."""
    return options[variant % len(options)] if options else ""


def label_of(adapter: HostAdapter, cond: Condition, s: Surfaces = SURFACES) -> str:
    """Customer noun of a condition's slot (never the field id)."""
    if adapter.host_class != "service":
        return adapter.slot_label(cond)
    return s.data.labels.get(arg_of(cond.slot), "that detail")


def goal_of(adapter: HostAdapter, request: str, variant: int, s: Surfaces = SURFACES) -> str:
    """Customer wording of an operation (``change the shipping address on an order``)."""
    goals = s.data.goals
    return pick(goals.get(tool_of_request(request)) or goals["_default"], variant)


def situation_of(adapter: HostAdapter, request: str, variant: int, s: Surfaces = SURFACES) -> str:
    """A situation that implies an operation without asking for it (indirect intent)."""
    sits = s.data.situations
    return pick(sits.get(tool_of_request(request)) or sits["_default"], variant)


def covers(text: str, atoms: list[str]) -> bool:
    """Whether every atom occurs in ``text`` as a whole word sequence."""
    return all(contains_atom(text, a) for a in atoms)


_LEAD_WORDS = {"are", "is", "should", "be", "it's", "about", "i'm", "please", "use", "i", "want"}
_NOUN_FIRST = {"order_id", "reservation_id", "flights"}


def value_words(adapter: HostAdapter, cond: Condition) -> str:
    """The value of a condition in customer words, without its clause frame.

    Leading words every phrase of the slot shares are dropped (``it's about my order #W1`` →
    ``my order #W1``; ``please use my visa credit card ending in 6594`` → ``my visa credit
    card ending in 6594``; ``I'm flying from Denver (DEN)`` → ``Denver (DEN)``). Falls back to
    the whole phrase when the short form would lose one of the value's atoms.
    """
    phrase = adapter.phrase(cond)
    atoms = adapter.atoms(cond)
    frame = adapter._frame(cond)  # noqa: SLF001 - the adapter's own frame words
    words = phrase.split()
    i = 0
    lead = frame | _LEAD_WORDS
    while i < len(words) - 1 and words[i].lower().strip(".,;:") in lead:
        i += 1
    rest = " ".join(words[i:])
    prev = words[i - 1].lower() if i > 0 else ""
    arg = arg_of(cond.slot)
    if adapter.host_class == "service" and arg in _NOUN_FIRST:
        noun = label_of(adapter, cond)
        rest = f"the {noun} {rest}" if arg == "flights" else f"my {noun} {rest}"
    elif prev in ("my", "the"):
        rest = f"{prev} {rest}"
    return rest if covers(rest, atoms) else phrase


def premise_ok(adapter: HostAdapter, cond: Condition, s: Surfaces = SURFACES) -> bool:
    """Whether a false presupposition about this slot makes sense ("X isn't possible").

    Service hosts: only arguments with an 'unavailable' wording (an order that can't be
    changed, a card that was declined, sold-out flights); shop hosts: any but the price.
    """
    if adapter.host_class != "service":
        return cond.slot != "price_upper"
    return arg_of(cond.slot) in s.data.unavailable


def unavailable_of(cond: Condition, variant: int, s: Surfaces = SURFACES) -> str:
    """Why a presupposed value is said to be impossible."""
    un = s.data.unavailable
    return pick(un.get(arg_of(cond.slot)) or un["_default"], variant)


def vague_of(adapter: HostAdapter, cond: Condition, s: Surfaces = SURFACES) -> tuple[str, ...]:
    """Vague wordings available for a τ² argument (empty = not vague-able)."""
    return s.data.vague.get(arg_of(cond.slot), ())


def deictic_of(adapter: HostAdapter, cond: Condition, variant: int, s: Surfaces = SURFACES) -> str:
    """A deictic reference to a slot ('the card from before')."""
    d = s.data.deictic
    tpl = pick(d.get(arg_of(cond.slot)) or d["_default"], variant)
    return tpl.format(label=label_of(adapter, cond, s))


def capabilities_of(benchmark: str, s: Surfaces = SURFACES) -> tuple[str, ...]:
    """Capabilities the host lacks, in customer words."""
    fam = host_family(benchmark)
    if fam == "shop":
        return s.data.shop.capabilities
    return s.data.capabilities.get(fam) or s.data.capabilities["_default"]


def companions_of(benchmark: str, s: Surfaces = SURFACES) -> tuple[str, ...]:
    """Companion things a trailing detail could attach to (syntactic ambiguity)."""
    fam = host_family(benchmark)
    if fam == "shop":
        return s.data.shop.companions
    c = s.data.service.companions
    return c.get(fam) or c["_default"]


def rewrite(text: str, rewrites: dict[str, str]) -> str:
    """Apply case-insensitive whole-word rewrites, longest source first."""
    out = text
    for src in sorted(rewrites, key=len, reverse=True):
        pattern = r"(?<![a-z0-9])" + re.escape(src) + r"(?![a-z0-9])"
        out = re.sub(pattern, rewrites[src], out, flags=re.IGNORECASE)
    return " ".join(out.split())


def forbidden_terms(adapter: HostAdapter, intent_slots: list[str] | None = None) -> list[str]:
    """Tool names (identifier and spaced form) and field ids a request must never contain.

    Single-word tool names (``think``, ``search``, ``click``) are ordinary words and are not
    listed; multi-word ones are listed in both forms (``cancel_pending_order`` and
    ``cancel pending order``). Field ids are listed in identifier form when they are not
    plain words (``address1``, ``item_ids``); slot ids (``arg:0:…``, ``option:0``) always.
    """
    out: set[str] = set()
    for t in adapter.tool_names():
        if "_" in t:
            out.add(t.lower())
            out.add(t.lower().replace("_", " "))
    for slot in intent_slots or []:
        if ":" in slot and not slot.startswith("attr:"):
            out.add(slot.lower())
        elif "_" in slot:
            out.add(slot.lower())  # price_upper
        if slot.startswith(("arg:", "also:")):
            f = arg_of(slot).lower()
            if "_" in f or any(ch.isdigit() for ch in f):
                out.add(f)
    return sorted(out)


def leaks(text: str, terms: list[str]) -> str | None:
    """The first forbidden term in ``text`` (whole-word match), or None."""
    low = text.lower()
    for t in terms:
        if re.search(r"(?<![a-z0-9_])" + re.escape(t) + r"(?![a-z0-9_])", low):
            return t
    return None
