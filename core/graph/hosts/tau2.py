"""τ² construction adapter: write-argument slots, canonical JSON values, request groups."""

from __future__ import annotations

import json

from core.graph.hosts.base import HostAdapter, HostClass
from core.model.base import canonical_json
from core.model.intent import Condition, ConditionValue, GroundTruth, Intent


class Tau2Adapter(HostAdapter):
    """Hooks for τ² retail / airline (``arg:<i>:<tool>:<arg>`` slots)."""

    host_class: HostClass = "service"

    def decoded(self, value: ConditionValue) -> object:
        """τ² values are canonical JSON text."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError:
                return value
        return value

    def slot_family(self, slot: str) -> str:
        """Pool values by (tool, argument) regardless of the request index."""
        parts = slot.split(":")
        if slot.startswith("arg:") and len(parts) >= 4:
            return f"arg:{parts[2]}:{':'.join(parts[3:])}"
        return slot

    def request_of(self, slot: str) -> str | None:
        """``arg:<i>:<tool>:<arg>`` belongs to request ``<i>:<tool>`` (``also:`` → ``also<i>``)."""
        parts = slot.split(":")
        if slot.startswith("arg:") and len(parts) >= 3:
            return f"{parts[1]}:{parts[2]}"
        if slot.startswith("also:") and len(parts) >= 3:
            return f"also{parts[1]}:{parts[2]}"
        return None

    def supports_capability_fault(self) -> bool:
        """τ² hosts have write tools, so a request can name a tool the desk lacks."""
        return bool(self.write_tools())

    # ------------------------------------------------------------------ request-level edits
    def _requests(self, intent: Intent) -> dict[str, list[Condition]]:
        out: dict[str, list[Condition]] = {}
        for c in intent.conditions:
            r = self.request_of(c.slot)
            if r is not None:
                out.setdefault(r, []).append(c)
        return out

    def relaxations(self, intent: Intent) -> list[list[Condition]]:
        """Drop a whole write request (when ≥2), then single arguments (defaults may apply)."""
        reqs = self._requests(intent)
        out: list[list[Condition]] = []
        if len(reqs) >= 2:
            for r in sorted(reqs):
                drop = {c.slot for c in reqs[r]}
                out.append([c for c in intent.conditions if c.slot not in drop])
        out += super().relaxations(intent)
        return out

    def customer(self, intent: Intent) -> str | None:
        """The customer an intent belongs to (from its context), if known."""
        for key in ("user_id", "customer", "user"):
            if key in intent.context:
                return intent.context[key]
        return None

    def witnesses(self, intent: Intent, gt: GroundTruth) -> list[tuple[Condition, ...]]:
        """Whole extra requests the same customer makes in other tasks ("also" requests).

        Each sibling request is re-indexed after the intent's last request, so executing the
        refined intent performs the original writes plus one more.
        """
        who = self.customer(intent)
        mine = self._requests(intent)
        used = [int(r.split(":")[0]) for r in mine if r.split(":")[0].isdigit()]
        nxt = (max(used) + 1) if used else 0
        have = {
            canonical_json(sorted((c.slot.split(":", 3)[-1], c.value) for c in cs))
            for cs in mine.values()
        }
        out: dict[str, tuple[Condition, ...]] = {}
        for s in self.siblings(intent):
            if who is not None and self.customer(s) not in (None, who):
                continue
            for r, cs in sorted(self._requests(s).items()):
                if not r.split(":")[0].isdigit():
                    continue
                key = canonical_json(sorted((c.slot.split(":", 3)[-1], c.value) for c in cs))
                if key in have:
                    continue
                tool = r.split(":", 1)[1]
                bundle = tuple(
                    Condition(
                        slot=f"arg:{nxt}:{tool}:{c.slot.split(':', 3)[3]}", op=c.op, value=c.value
                    )
                    for c in cs
                )
                out.setdefault(key, bundle)
        return [out[k] for k in sorted(out)]
