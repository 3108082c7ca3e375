"""τ² construction adapter: write-argument slots, canonical JSON values, request groups."""

from __future__ import annotations

import json
from typing import Any

from core.envs.tau2.world import Tau2World
from core.graph.hosts.base import HostAdapter, HostClass
from core.model.base import canonical_json
from core.model.intent import Condition, ConditionValue, GroundTruth, Intent

CUSTOMER_INDEX_MEMO = "graph.customer_index"
"""The world's memo table holding its entity → customer index (one entry)."""


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

    def customer_index(self) -> dict[str, str]:
        """Entity id → customer: users, their payment methods, orders and reservations.

        Read from the world's database (``world.base.records``); an id that two customers
        share is left out (it identifies nobody).
        """
        memo = self.world.memo(CUSTOMER_INDEX_MEMO, size=1)
        cached: dict[str, str] | None = memo.get("index")
        if cached is not None:
            return cached
        records = self._records()
        index = _owners(records) if records is not None else {}
        memo.put("index", index)
        return index

    def _records(self) -> dict[str, dict[str, Any]] | None:
        """The τ² database records of the wrapped world (None for a stand-in world)."""
        return self.world.base.records if isinstance(self.world, Tau2World) else None

    def own_entities(self, customer: str) -> dict[str, list[str]]:
        """A customer's own orders, reservations and payment methods (substitution values)."""
        records = self._records()
        user = records.get("users", {}).get(customer) if records is not None else None
        if not isinstance(user, dict):
            return {}
        out: dict[str, list[str]] = {}
        pms = user.get("payment_methods") or {}
        if pms:
            out["payment"] = sorted(pms)
        for coll in ("orders", "reservations"):
            if user.get(coll):
                out[coll] = sorted(user[coll])
        return out

    def domain(self, intent: Intent, slot: str) -> list[ConditionValue]:
        """Sibling values, plus the customer's own other orders/reservations/payment methods.

        Values that belong to another customer are offered too (the policy gate removes the
        candidates they make); the customer's own entities keep substitutions available.
        """
        values = super().domain(intent, slot)
        who = self.customer(intent)
        cur = intent.slot_map().get(slot)
        if who is None or cur is None:
            return values
        current = self.decoded(cur.value)
        if not isinstance(current, str):
            return values
        index = self.customer_index()
        if index.get(current) != who:
            return values
        mine = self.own_entities(who)
        kind = next((k for k, ids in mine.items() if current in ids), None)
        if kind is None:
            return values
        have = {v for v in values if isinstance(v, str)}
        for other in mine[kind]:
            text = canonical_json(other)  # τ² values are canonical JSON text
            if other != current and text not in have:
                values.append(text)
                have.add(text)
        return values

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

    def extra_candidates(self, intent: Intent, gt: GroundTruth) -> list[tuple[Condition, ...]]:
        """Extra requests for irrelevant information: other tasks', then the customer's records.

        Few τ² customers have a second task, so :meth:`witnesses` alone rarely offers an extra
        request (issue 31: 9 retail and 1 airline irrelevant-information samples on a real
        build). The customer's own open records supply more: another of their pending orders
        to cancel or a delivered one to return (retail), another active reservation to cancel
        (airline) — a whole extra
        write the customer does not need, which executable admission then checks (it must
        execute and change the state).
        """
        out = list(self.witnesses(intent, gt))
        seen = {canonical_json(sorted((c.slot.split(":", 3)[-1], c.value) for c in b)) for b in out}
        for bundle in self.own_record_extras(intent):
            key = canonical_json(sorted((c.slot.split(":", 3)[-1], c.value) for c in bundle))
            if key not in seen:
                seen.add(key)
                out.append(bundle)
        return out

    def own_record_extras(self, intent: Intent) -> list[tuple[Condition, ...]]:
        """Requests on the customer's other records the intent does not mention.

        Only through write tools the world offers: ``cancel_pending_order`` (pending orders,
        with a reason its schema lists), ``return_delivered_order_items`` (the first item of a
        delivered order, refunded to the payment method it was paid with),
        ``cancel_reservation`` (reservations not cancelled).
        """
        who = self.customer(intent)
        records = self._records()
        if who is None or records is None:
            return []
        tools = {t.name: t for t in self.world.tools()}
        mentioned = {str(self.decoded(c.value)) for c in intent.conditions}
        mine = self._requests(intent)
        used = [int(r.split(":")[0]) for r in mine if r.split(":")[0].isdigit()]
        nxt = (max(used) + 1) if used else 0
        out: list[tuple[Condition, ...]] = []
        orders = records.get("orders") or {}
        if "cancel_pending_order" in tools:
            reason = _first_enum(tools["cancel_pending_order"], "reason", "no longer needed")
            for oid in self.own_entities(who).get("orders", []):
                rec = orders.get(oid)
                if not isinstance(rec, dict) or rec.get("status") != "pending":
                    continue
                if oid in mentioned:
                    continue
                tool = "cancel_pending_order"
                out.append(
                    (
                        Condition(slot=f"arg:{nxt}:{tool}:order_id", value=canonical_json(oid)),
                        Condition(slot=f"arg:{nxt}:{tool}:reason", value=canonical_json(reason)),
                    )
                )
        if "return_delivered_order_items" in tools:
            tool = "return_delivered_order_items"
            for oid in self.own_entities(who).get("orders", []):
                rec = orders.get(oid)
                if not isinstance(rec, dict) or rec.get("status") != "delivered":
                    continue
                items = [i for i in rec.get("items") or [] if isinstance(i, dict)]
                paid = [
                    p.get("payment_method_id")
                    for p in rec.get("payment_history") or []
                    if isinstance(p, dict) and p.get("transaction_type") == "payment"
                ]
                if oid in mentioned or not items or not paid or not paid[0]:
                    continue
                out.append(
                    (
                        Condition(slot=f"arg:{nxt}:{tool}:order_id", value=canonical_json(oid)),
                        Condition(
                            slot=f"arg:{nxt}:{tool}:item_ids",
                            value=canonical_json([str(items[0].get("item_id"))]),
                        ),
                        Condition(
                            slot=f"arg:{nxt}:{tool}:payment_method_id",
                            value=canonical_json(str(paid[0])),
                        ),
                    )
                )
        reservations = records.get("reservations") or {}
        if "cancel_reservation" in tools:
            for rid in self.own_entities(who).get("reservations", []):
                rec = reservations.get(rid)
                if not isinstance(rec, dict) or rec.get("status") == "cancelled":
                    continue
                if rid in mentioned:
                    continue
                tool = "cancel_reservation"
                slot = f"arg:{nxt}:{tool}:reservation_id"
                out.append((Condition(slot=slot, value=canonical_json(rid)),))
        return out


def _owners(records: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Entity id → its one customer (an id two customers share identifies nobody)."""
    owners: dict[str, set[str]] = {}

    def own(entity: object, user: str) -> None:
        if isinstance(entity, str) and entity:
            owners.setdefault(entity, set()).add(user)

    for uid, user in (records.get("users") or {}).items():
        own(uid, uid)
        for pm in (user.get("payment_methods") or {}) if isinstance(user, dict) else {}:
            own(pm, uid)
        for coll in ("orders", "reservations"):
            for rid in (user.get(coll) or []) if isinstance(user, dict) else []:
                own(rid, uid)
    for coll in ("orders", "reservations"):
        for rid, rec in (records.get(coll) or {}).items():
            if isinstance(rec, dict) and isinstance(rec.get("user_id"), str):
                own(rid, rec["user_id"])
    return {e: next(iter(us)) for e, us in owners.items() if len(us) == 1}


def _first_enum(tool: Any, arg: str, fallback: str) -> str:
    """The first allowed value a tool's schema lists for ``arg`` (quoted in its description)."""
    import re

    prop = ((tool.parameters or {}).get("properties") or {}).get(arg) or {}
    enum = prop.get("enum")
    if isinstance(enum, list) and enum:
        return str(enum[0])
    quoted = re.findall(r"'([^']+)'", str(prop.get("description") or ""))
    return fallback if fallback in quoted or not quoted else quoted[0]
