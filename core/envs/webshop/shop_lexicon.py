"""Slot lexicons and "what is unmet" problems of the shop.

Slots: ``attr:<a>`` (a required feature), ``option:<i>`` (an option value; its name — colour,
size, flavour, scent, pack … — comes from the catalogue) and ``price_upper`` (the budget).
Alternatives of an option are the other values the catalogue offers under the same option name,
so a confirmation naming a different colour reads as a wrong colour.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from core.envs.requirement_lexicon import (
    COLOR,
    COUNT,
    FEATURE,
    FLAVOR,
    MATERIAL,
    PRICE,
    SCENT,
    SIZE,
    STYLE,
    Family,
    Problem,
    SlotLexicon,
    words_of,
)
from core.envs.webshop.reward import get_reward
from core.model.intent import Condition, Intent

if TYPE_CHECKING:
    from core.envs.base import EnvSession
    from core.envs.webshop.world import WebShopWorld


def phrase_option(name: str, value: str) -> str:
    """The shop's phrasing of an option value (``in black``, ``in size 9``)."""
    from core.envs.webshop.world import phrase_option as _phrase

    return _phrase(name, value)


MODEL = Family(
    label="model",
    cues=(
        "model",
        "device",
        "phone",
        "which phone",
        "what phone",
        "compatible",
        "compatibility",
        "works with",
        "for which",
    ),
)
ROAST = Family(
    label="roast",
    cues=("roast", "roast level", "how dark", "how strong", "strength", "darkness", "blend"),
)
BRAND = Family(
    label="brand",
    cues=("brand", "manufacturer", "maker", "label", "company", "make"),
    weak=("make", "label", "company"),
)
CAPACITY = Family(
    label="capacity",
    cues=("capacity", "volume", "how much does it hold", "storage", "memory", "liters", "ounce"),
)

_BY_NAME: dict[str, tuple[str, Family]] = {
    "color": ("color", COLOR),
    "colour": ("color", COLOR),
    "color name": ("color", COLOR),
    "size": ("size", SIZE),
    "size name": ("size", SIZE),
    "flavor": ("flavor", FLAVOR),
    "flavor name": ("flavor", FLAVOR),
    "flavour": ("flavor", FLAVOR),
    "scent": ("scent", SCENT),
    "scent name": ("scent", SCENT),
    "pack": ("count", COUNT),
    "count": ("count", COUNT),
    "item package quantity": ("count", COUNT),
    "number of items": ("count", COUNT),
    "package quantity": ("count", COUNT),
    "style": ("style", STYLE),
    "style name": ("style", STYLE),
    "pattern": ("style", STYLE),
    "pattern name": ("style", STYLE),
    "design": ("style", STYLE),
    "material": ("material", MATERIAL),
    "material type": ("material", MATERIAL),
    "model": ("model", MODEL),
    "roast": ("roast", ROAST),
    "capacity": ("capacity", CAPACITY),
}
_LABEL = {
    "color": "colour",
    "size": "size",
    "flavor": "flavour",
    "scent": "scent",
    "count": "pack size",
    "style": "style",
    "material": "material",
    "model": "model",
    "roast": "roast",
    "capacity": "capacity",
}
_WRONG = {
    "color": "it's the wrong colour",
    "size": "it's the wrong size",
    "flavor": "it's the wrong flavour",
    "scent": "it's the wrong scent",
    "count": "it's the wrong pack size",
    "style": "it's not the style I want",
    "material": "it's not the material I want",
    "model": "it's not for the right model",
    "roast": "it's the wrong roast",
    "capacity": "it's the wrong capacity",
}
MAX_ALTERNATIVES = 300
"""Most other values of an option name kept as alternatives (the most common first)."""


def option_family(name: str) -> tuple[str, Family]:
    """Return (family id, vocabulary) of a WebShop option name (unknown names: their words)."""
    key = " ".join(name.lower().replace("_", " ").split())
    got = _BY_NAME.get(key)
    if got is not None:
        return got
    for word, fam in (
        ("color", "color"),
        ("colour", "color"),
        ("size", "size"),
        ("flavor", "flavor"),
        ("scent", "scent"),
        ("style", "style"),
        ("pattern", "style"),
        ("pack", "count"),
        ("count", "count"),
        ("quantity", "count"),
        ("material", "material"),
        ("model", "model"),
    ):
        if word in key:
            return _BY_NAME[fam]
    label = key or "option"
    return label, Family(label=label, cues=(label,))


VALUES_MEMO = "webshop.lexicon.values"
"""The world's memo table holding its option values per family (one entry)."""


def _values_by_name(world: WebShopWorld) -> dict[str, tuple[str, ...]]:
    memo = world.memo(VALUES_MEMO, size=1)
    cached: dict[str, tuple[str, ...]] | None = memo.get("values")
    if cached is not None:
        return cached
    counts: dict[str, Counter[str]] = {}
    for name, values in world.catalogue.option_counts().items():
        fam = option_family(name)[0]
        bucket = counts.setdefault(fam, Counter())
        for v, n in values.items():
            bucket[v.lower()] += n
    out = {fam: tuple(v for v, _ in c.most_common(MAX_ALTERNATIVES)) for fam, c in counts.items()}
    memo.put("values", out)
    return out


def slot_lexicon(world: WebShopWorld, condition: Condition) -> SlotLexicon:
    """Return the lexicon of one shop condition."""
    slot, value = condition.slot, condition.value
    if slot.startswith("attr:"):
        text = str(value).lower()
        return SlotLexicon(
            slot=slot,
            label="feature",
            family="feature",
            cues=FEATURE.cues,
            values=(text,),
            weak=FEATURE.weak,
        )
    if slot.startswith("option:"):
        name = world.option_name(condition)
        fam, f = option_family(name)
        text = str(value).lower()
        pool = _values_by_name(world).get(fam, ()) + tuple(f.values)
        parts = tuple(p.strip() for p in text.replace("|", "/").split("/") if p.strip())
        return SlotLexicon(
            slot=slot,
            label=_LABEL.get(fam, f.label),
            family=fam,
            cues=words_of(f.cues, (name,) if name else ()),
            values=words_of((text,), parts),
            alternatives=tuple(v for v in words_of(pool) if v != text and v not in parts),
            weak=f.weak,
        )
    if slot == "price_upper":
        return SlotLexicon(
            slot=slot,
            label="price",
            family="price",
            cues=PRICE.cues,
            number=float(value),
            op=condition.op,
            weak=PRICE.weak,
        )
    return SlotLexicon(slot=slot, label=slot, family=slot, cues=(slot,))


def families() -> tuple[SlotLexicon, ...]:
    """Return the shop's slot families (topics a shopper may have no requirement on)."""
    fams = [
        ("color", COLOR),
        ("size", SIZE),
        ("price", PRICE),
        ("feature", FEATURE),
        ("flavor", FLAVOR),
        ("scent", SCENT),
        ("count", COUNT),
        ("material", MATERIAL),
        ("style", STYLE),
        ("model", MODEL),
        ("roast", ROAST),
        ("brand", BRAND),
        ("capacity", CAPACITY),
    ]
    return tuple(
        SlotLexicon(slot="", label=f.label, family=fam, cues=f.cues, weak=f.weak) for fam, f in fams
    )


def _option_slots(intent: Intent) -> list[Condition]:
    def key(c: Condition) -> tuple[int, int, str]:
        k = c.slot.split(":", 1)[1]
        return (0, int(k), "") if k.isdigit() else (1, 0, k)

    return sorted((c for c in intent.conditions if c.slot.startswith("option:")), key=key)


def problems(world: WebShopWorld, intent: Intent, session: EnvSession) -> list[Problem]:
    """Return what the purchase gets wrong against ``intent``, in plain words."""
    prop: dict[str, Any] | None = session.proposal()
    if not prop or not prop.get("asin"):
        return [Problem(slots=(), text="you haven't bought anything yet")]
    product = world.catalogue.get(str(prop["asin"]))
    if product is None:
        return [Problem(slots=(), text="that's not something I can use")]
    spec = world.intent_spec(intent)
    options = {str(k): str(v) for k, v in dict(prop.get("options") or {}).items()}
    r = get_reward(product, spec, options)
    out: list[Problem] = []
    if r.r_type < 1.0:
        out.append(Problem(slots=(), text="that's not the kind of product I'm after"))
    attrs = {str(c.value): c.slot for c in intent.conditions if c.slot.startswith("attr:")}
    missing = [attrs[m.attribute] for m in r.attribute_matches if not m.matched]
    if len(missing) == 1:
        a = intent.slot_map()[missing[0]].value
        out.append(
            Problem(
                slots=(missing[0],),
                text="it doesn't have one of the features I need",
                known_text=f"it doesn't have the {a} feature",
            )
        )
    elif missing:
        out.append(
            Problem(
                slots=tuple(missing),
                text=f"it's missing {_count(len(missing))} of the features I need",
            )
        )
    for cond, m in zip(_option_slots(intent), r.option_matches, strict=False):
        if m.matched:
            continue
        fam = option_family(world.option_name(cond))[0]
        label = _LABEL.get(fam, fam)
        text = (
            _WRONG.get(fam, f"it's not the {label} I want")
            if options
            else f"you didn't choose the {label}"
        )
        out.append(
            Problem(
                slots=(cond.slot,),
                text=text,
                known_text=f"I wanted it {phrase_option(world.option_name(cond), str(cond.value))}",
            )
        )
    if not r.r_price:
        cap = next((c for c in intent.conditions if c.slot == "price_upper"), None)
        if cap is not None:
            out.append(
                Problem(
                    slots=(cap.slot,),
                    text="that's over my budget",
                    known_text=f"I can't spend more than ${_money(float(cap.value))}",
                )
            )
    return out


def _count(n: int) -> str:
    return {2: "two", 3: "three", 4: "four"}.get(n, "several")


def _money(v: float) -> str:
    return str(int(v)) if v.is_integer() else f"{v:.2f}"
