"""WebShop construction adapter: attribute witnesses from answer products, option domains."""

from __future__ import annotations

from core.graph.hosts.base import HostAdapter, HostClass
from core.model.intent import Intent


class WebShopAdapter(HostAdapter):
    """Hooks for the WebShop-style shop (``attr:`` / ``option:`` / ``price_upper`` slots)."""

    host_class: HostClass = "shop"

    def is_valid(self, intent: Intent) -> bool:
        """WebShop rewards divide by the attribute count: an intent needs ≥1 attribute."""
        return any(c.slot.startswith("attr:") for c in intent.conditions)

    def name_reveals_value(self, slot: str) -> bool:
        """``attr:<a>`` slots carry their value in the name."""
        return slot.startswith("attr:")

    def slot_family(self, slot: str) -> str:
        """Attributes pool into one domain; options by name; price on its own."""
        if slot.startswith("attr:"):
            return "attr"
        return slot

    def topic(self, intent: Intent) -> str:
        """The shop section (cluster) the request is made in."""
        return intent.env_id
