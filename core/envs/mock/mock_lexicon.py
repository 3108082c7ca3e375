"""Slot lexicons and "what is unmet" problems of the mock shop."""

from __future__ import annotations

from collections.abc import Sequence

from core.envs.requirement_lexicon import (
    COLOR,
    MATERIAL,
    PRICE,
    SIZE,
    Family,
    Problem,
    SlotLexicon,
    words_of,
)
from core.model.intent import Condition, Intent

_FAMILY: dict[str, tuple[str, Family]] = {
    "color": ("color", COLOR),
    "size": ("size", SIZE),
    "material": ("material", MATERIAL),
    "price_upper": ("price", PRICE),
}
_VALUES: dict[str, tuple[str, ...]] = {
    "color": ("teal", "crimson", "ochre"),
    "size": ("small", "medium", "large"),
    "material": ("linen", "cotton", "wool", "ceramic", "enamel"),
}
_PROBLEM: dict[str, str] = {
    "color": "it's the wrong colour",
    "size": "it's the wrong size",
    "material": "it's not the material I want",
    "price_upper": "that's over my budget",
}


def slot_lexicon(condition: Condition, label: str) -> SlotLexicon:
    """Return the lexicon of one mock condition."""
    family, fam = _FAMILY.get(condition.slot, (condition.slot, Family(label, (label,))))
    value = str(condition.value).lower()
    number = float(condition.value) if condition.slot == "price_upper" else None
    pool = _VALUES.get(condition.slot, ()) + tuple(fam.values)
    return SlotLexicon(
        slot=condition.slot,
        label=label,
        family=family,
        cues=words_of(fam.cues),
        values=(value,) if number is None else (),
        alternatives=tuple(v for v in words_of(pool) if v != value) if number is None else (),
        number=number,
        op=condition.op,
        weak=fam.weak,
    )


def families() -> tuple[SlotLexicon, ...]:
    """Return the mock world's slot families."""
    return tuple(
        SlotLexicon(slot="", label=fam.label, family=family, cues=fam.cues, weak=fam.weak)
        for family, fam in _FAMILY.values()
    )


def problems(unmet: Sequence[str], intent: Intent, wrong_type: bool) -> list[Problem]:
    """Phrase the unmet slots of a purchase (and a wrong product type) in plain words."""
    if wrong_type:
        return [Problem(slots=(), text="that's not the kind of product I'm after")]
    return [Problem(slots=(s,), text=_PROBLEM.get(s, f"the {s} isn't right")) for s in unmet]
