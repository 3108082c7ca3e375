"""A tiny deterministic shop for tests: a dozen items, ``search`` / ``view`` / ``buy`` tools.

Conditions: ``color``, ``size``, ``material`` (``=``) and ``price_upper`` (``<=``); the base of
an intent is the product type (``shirt``, ``mug``). Ground truth = the ids of matching items
(``purchaseset``); a proposal is accepted when the bought item matches the intent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.envs.base import EnvSession, WorldBase
from core.envs.requirement_lexicon import Problem, SlotLexicon
from core.model.base import content_hash
from core.model.config import ProtocolConfig
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, Observation, ToolSpec, Verdict

BENCHMARK = "mock"
ENV_ID = "mock_shop"


@dataclass(frozen=True)
class Item:
    """One catalogue item."""

    item_id: str
    base: str
    name: str
    color: str
    size: str
    material: str
    price: int

    def attr(self, slot: str) -> str | int:
        """Return the item's value for a condition slot."""
        return self.price if slot == "price_upper" else str(getattr(self, slot))

    def line(self) -> str:
        """One-line listing."""
        return (
            f"{self.item_id}: {self.name} ({self.base}; {self.color}, {self.size}, "
            f"{self.material}) ${self.price}"
        )


ITEMS: tuple[Item, ...] = (
    Item("s01", "shirt", "Harbour Shirt", "teal", "medium", "linen", 28),
    Item("s02", "shirt", "Harbour Oxford", "teal", "medium", "cotton", 35),
    Item("s03", "shirt", "Dune Shirt", "teal", "large", "linen", 30),
    Item("s04", "shirt", "Ember Tee", "crimson", "medium", "cotton", 25),
    Item("s05", "shirt", "Ember Linen", "crimson", "medium", "linen", 45),
    Item("s06", "shirt", "Harbour Deluxe", "teal", "medium", "linen", 55),
    Item("s07", "shirt", "Field Shirt", "ochre", "small", "wool", 20),
    Item("m01", "mug", "Glaze Mug", "teal", "large", "ceramic", 12),
    Item("m02", "mug", "Dawn Mug", "ochre", "large", "ceramic", 14),
    Item("m03", "mug", "Camp Mug", "ochre", "small", "enamel", 9),
    Item("m04", "mug", "Ember Mug", "crimson", "medium", "ceramic", 16),
)

_LABELS = {"color": "colour", "size": "size", "material": "material", "price_upper": "price"}
_WORDS = {
    "color": {"colour", "color", "shade"},
    "size": {"size", "fit", "big", "small"},
    "material": {"material", "fabric", "made"},
    "price_upper": {"price", "budget", "cost", "spend", "expensive", "cheap"},
}

_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="search",
        description="Search the catalogue; returns matching items with attributes and prices.",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
        kind="read",
    ),
    ToolSpec(
        name="view",
        description="Show one item by id.",
        parameters={"type": "object", "properties": {"item_id": {"type": "string"}}},
        kind="read",
    ),
    ToolSpec(
        name="buy",
        description="Buy one item by id (replaces any earlier purchase).",
        parameters={"type": "object", "properties": {"item_id": {"type": "string"}}},
        kind="write",
    ),
)


def satisfies(item: Item, intent: Intent) -> bool:
    """Return whether ``item`` meets every condition of ``intent``."""
    if item.base != intent.base:
        return False
    return not unmet(item, intent)


def unmet(item: Item, intent: Intent) -> list[str]:
    """Return the slots of ``intent`` that ``item`` fails (intent order)."""
    out = []
    for c in intent.conditions:
        v = item.attr(c.slot)
        if c.op == "<=":
            ok = isinstance(v, int) and v <= float(c.value)
        else:
            ok = str(v) == str(c.value)
        if not ok:
            out.append(c.slot)
    return out


class MockSession:
    """Per-episode state: the current purchase."""

    def __init__(self, world: MockWorld) -> None:
        self.world = world
        self.bought: str | None = None

    def act(self, action: EnvAction) -> Observation:
        """Run one tool call (errors are observations, never exceptions)."""
        items = self.world.by_id
        if action.tool == "search":
            q = {w for w in str(action.args.get("query", "")).lower().split() if w}
            hits = [
                i
                for i in self.world.items
                if not q or q & {i.base, i.color, i.size, i.material, *i.name.lower().split()}
            ]
            text = "\n".join(i.line() for i in hits) or "No results."
            return Observation(ok=True, text=text, data=[i.item_id for i in hits])
        if action.tool in ("view", "buy"):
            iid = str(action.args.get("item_id", ""))
            item = items.get(iid)
            if item is None:
                return Observation(ok=False, text=f"Error: unknown item {iid!r}.")
            if action.tool == "view":
                return Observation(ok=True, text=item.line(), data=item.item_id)
            self.bought = iid
            return Observation(ok=True, text=f"Bought {item.name}.", data=iid)
        return Observation(ok=False, text=f"Error: unknown tool {action.tool!r}.")

    def proposal(self) -> dict[str, Any] | None:
        """Return the purchase (or None)."""
        return {"item_id": self.bought} if self.bought else None


class MockWorld(WorldBase):
    """The mock host world (implements :class:`core.envs.base.HostWorld` and optional hooks)."""

    benchmark = BENCHMARK
    max_observation_chars = 2000

    def __init__(self, items: Sequence[Item] = ITEMS) -> None:
        self.items = tuple(items)
        self.by_id = {i.item_id: i for i in self.items}
        self.world_id = content_hash([i.__dict__ for i in self.items])

    def tools(self) -> Sequence[ToolSpec]:
        """Return the tools."""
        return _TOOLS

    def open_session(self) -> EnvSession:
        """Open a fresh session (nothing bought)."""
        return MockSession(self)

    def seeds(self) -> list[Intent]:
        """Return one root intent per item's exact attribute set (first three items)."""
        out = []
        for it in self.items[:3]:
            conds = (
                Condition(slot="color", value=it.color),
                Condition(slot="size", value=it.size),
                Condition(slot="price_upper", op="<=", value=it.price + 10),
            )
            intent = Intent.build(
                benchmark=BENCHMARK, env_id=ENV_ID, base=it.base, conditions=conds
            )
            out.append(intent.model_copy(update={"ground_truth": self.execute(intent)}))
        return out

    def execute(self, intent: Intent) -> GroundTruth:
        """Return the ids of every item satisfying ``intent``."""
        rows = sorted(i.item_id for i in self.items if satisfies(i, intent))
        return GroundTruth(kind="purchaseset", value=rows)

    def judge(self, intent: Intent, session: EnvSession, config: ProtocolConfig) -> Verdict:
        """Accept iff the bought item satisfies ``intent`` (the config changes nothing)."""
        prop = session.proposal()
        if not prop:
            return Verdict(accepted=False, reason="nothing_bought", score=0.0)
        item = self.by_id[str(prop["item_id"])]
        if item.base != intent.base:
            return Verdict(accepted=False, reason="wrong_product_type", score=0.0)
        bad = unmet(item, intent)
        n = max(len(intent.conditions), 1)
        score = 1.0 - len(bad) / n
        return Verdict(
            accepted=not bad, reason="match" if not bad else "unmet:" + ",".join(bad), score=score
        )

    def phrase(self, condition: Condition) -> str:
        """Phrase a condition as a shopper would."""
        s, v = condition.slot, condition.value
        if s == "color":
            return f"the colour should be {v}"
        if s == "size":
            return f"I need size {v}"
        if s == "material":
            return f"it should be made of {v}"
        if s == "price_upper":
            return f"I can spend up to ${v}"
        return f"{s} {condition.op} {v}"

    # ------------------------------------------------------------ optional hooks
    def slot_label(self, condition: Condition) -> str:
        """Return the slot's name (never its value)."""
        return _LABELS.get(condition.slot, condition.slot)

    def slot_words(self, condition: Condition) -> set[str]:
        """Return words that show a message is about the slot."""
        words = set(_WORDS.get(condition.slot, {condition.slot}))
        if isinstance(condition.value, str):
            words.add(condition.value.lower())
        return words

    def unmet_slots(self, intent: Intent, session: EnvSession) -> list[str] | None:
        """Return which requirements the purchase fails (None when nothing is bought)."""
        prop = session.proposal()
        if not prop:
            return None
        item = self.by_id[str(prop["item_id"])]
        return unmet(item, intent)

    def slot_lexicon(self, condition: Condition) -> SlotLexicon:
        """Return how shoppers talk about a condition (interpreter hook)."""
        from core.envs.mock import mock_lexicon

        return mock_lexicon.slot_lexicon(condition, self.slot_label(condition))

    def lexicon_families(self) -> tuple[SlotLexicon, ...]:
        """Return the slot families of the shop (interpreter hook)."""
        from core.envs.mock import mock_lexicon

        return mock_lexicon.families()

    def unmet_problems(self, intent: Intent, session: EnvSession) -> list[Problem] | None:
        """Return what the purchase gets wrong, in plain words (None when nothing is bought)."""
        from core.envs.mock import mock_lexicon

        prop = session.proposal()
        if not prop:
            return [Problem(slots=(), text="you haven't bought anything yet")]
        item = self.by_id[str(prop["item_id"])]
        return mock_lexicon.problems(unmet(item, intent), intent, item.base != intent.base)

    def compile_intent(self, intent: Intent) -> list[EnvAction]:
        """Return a search and the purchase of the cheapest matching item."""
        query = " ".join([intent.base, *(str(c.value) for c in intent.conditions if c.op == "=")])
        acts = [EnvAction(tool="search", args={"query": query})]
        hits = sorted(
            (i for i in self.items if satisfies(i, intent)), key=lambda i: (i.price, i.item_id)
        )
        if hits:
            acts.append(EnvAction(tool="buy", args={"item_id": hits[0].item_id}))
        return acts

    def final_answer_format(self) -> str:
        """Return the forced-final note."""
        return "Buy your best candidate if you have not, then propose your final answer (Propose)."


_WORLD: MockWorld | None = None


def load_mock_world() -> MockWorld:
    """Return the process-wide mock world."""
    global _WORLD
    if _WORLD is None:
        _WORLD = MockWorld()
    return _WORLD
