"""WebShop construction adapter: attribute witnesses from answer products, option domains.

Uses only the shop world's public attributes (``catalogue``, ``products``, ``slot_label``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from core.envs.webshop.world import WebShopWorld
from core.graph.hosts.base import HostAdapter, HostClass
from core.model.base import canonical_json
from core.model.intent import Condition, ConditionValue, GroundTruth, Intent

PRICE_STEPS = (-20, -10, 10, 20)


class WebShopAdapter(HostAdapter):
    """Hooks for the WebShop-style shop (``attr:`` / ``option:<i>`` / ``price_upper`` slots)."""

    host_class: HostClass = "shop"

    def is_valid(self, intent: Intent) -> bool:
        """WebShop rewards divide by the attribute count: an intent needs ≥1 attribute."""
        return any(c.slot.startswith("attr:") for c in intent.conditions)

    def name_reveals_value(self, slot: str) -> bool:
        """``attr:<a>`` slots carry their value in the name."""
        return slot.startswith("attr:")

    def slot_family(self, slot: str) -> str:
        """Attributes pool into one domain; options by index; price on its own."""
        if slot.startswith("attr:"):
            return "attr"
        return slot

    def topic(self, intent: Intent) -> str:
        """The shop section (cluster) the request is made in."""
        return intent.env_id

    def slot_label(self, cond: Condition) -> str:
        """The world's own noun for a slot (``color``, ``size``, ``price``, ``feature``)."""
        return self.world.slot_label(cond)

    def answer_view(self, gt: GroundTruth) -> frozenset[str] | None:
        """Purchase rows reduced to their product ids (options may differ per reading)."""
        return frozenset(str(json.loads(r)[0]) for r in gt.value)

    def _shop(self) -> WebShopWorld | None:
        """The wrapped world as a shop (None for a stand-in world without a catalogue)."""
        return self.world if isinstance(self.world, WebShopWorld) else None

    def _cluster(self, env_id: str) -> list[Any]:
        shop = self._shop()
        return list(shop.catalogue.clusters.get(env_id, [])) if shop is not None else []

    def _product(self, asin: str) -> Any:
        shop = self._shop()
        return shop.catalogue.get(asin) if shop is not None else None

    def witnesses(self, intent: Intent, gt: GroundTruth) -> list[tuple[Condition, ...]]:
        """Attributes held by some but not all current answer products."""
        asins = sorted(self.answer_view(gt) or ())
        counts: Counter[str] = Counter()
        for a in asins:
            p = self._product(a)
            if p is not None:
                counts.update({str(x).lower() for x in p.attributes})
        have = {str(c.value).lower() for c in intent.conditions if c.slot.startswith("attr:")}
        out: list[tuple[Condition, ...]] = [
            (Condition(slot=f"attr:{a}", op="=", value=a),)
            for a, n in sorted(counts.items())
            if 0 < n < len(asins) and a not in have
        ]
        return out

    def domain(self, intent: Intent, slot: str) -> list[ConditionValue]:
        """Alternatives: cluster attributes, the option's values in the cluster, price steps."""
        cur = intent.slot_map().get(slot)
        seen: dict[str, ConditionValue] = {}
        if slot.startswith("attr:"):
            have = {str(c.value).lower() for c in intent.conditions if c.slot.startswith("attr:")}
            for p in self._cluster(intent.env_id):
                for a in p.attributes:
                    a = str(a).lower()
                    if a not in have:
                        seen.setdefault(a, a)
        elif slot.startswith("option:") and cur is not None:
            shop = self._shop()
            name = shop.option_name(cur) if shop is not None else ""
            for p in self._cluster(intent.env_id):
                for n, values in p.options.items():
                    if name and n != name:
                        continue
                    for v in values:
                        if v != cur.value:
                            seen.setdefault(str(v), str(v))
        elif slot == "price_upper" and cur is not None:
            base = float(cur.value)
            for step in PRICE_STEPS:
                v = base + step
                if v > 0:
                    val: ConditionValue = int(v) if v.is_integer() else v
                    seen.setdefault(canonical_json(val), val)
        if not seen:
            return super().domain(intent, slot)
        return [seen[k] for k in sorted(seen)]
