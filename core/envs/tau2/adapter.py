"""Adapter hooks of the τ² worlds: seeds, compile, execute, adjudicate, phrase.

An intent's conditions are the arguments of its golden writes: slot
``arg:<i>:<tool>:<argname>`` (``i`` = position among the intent's writes) with the argument's
canonical JSON text as value (sorted keys, compact — ``2`` and ``2.0`` stay different, as they
do in τ²'s hash). Golden writes that fail when the task's golden actions are replayed (τ² only
logs those) are not part of the seed: they change nothing in the gold state.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any, Literal

from core.envs.base import EnvSession
from core.errors import ConfigError
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import EnvAction, Verdict

if TYPE_CHECKING:
    from core.envs.tau2.tasks import Task
    from core.envs.tau2.world import Tau2World

_PAIRED = {"exchange_delivered_order_items", "modify_pending_order_items"}


def canon(value: Any) -> str:
    """Canonical JSON text of an argument value (sorted keys, compact, exact numbers)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def slot_name(i: int, tool: str, arg: str) -> str:
    """Return the condition slot of argument ``arg`` of the ``i``-th write ``tool``."""
    return f"arg:{i}:{tool}:{arg}"


def parse_slot(slot: str) -> tuple[int, str, str]:
    """Split ``arg:<i>:<tool>:<argname>`` into its parts (ConfigError when malformed)."""
    parts = slot.split(":")
    if len(parts) != 4 or parts[0] != "arg" or not parts[1].isdigit():
        raise ConfigError(f"not a τ² argument slot: {slot!r}", field="conditions.slot")
    return int(parts[1]), parts[2], parts[3]


def write_key(tool: str, args: dict[str, Any]) -> str:
    """Canonical identity of a write call; paired item lists compare as multisets of pairs."""
    norm = dict(args)
    if tool in _PAIRED:
        items, new = norm.get("item_ids"), norm.get("new_item_ids")
        if isinstance(items, list) and isinstance(new, list) and len(items) == len(new):
            norm["item_ids"] = sorted(
                ([canon(a), canon(b)] for a, b in zip(items, new, strict=True)),
            )
            norm.pop("new_item_ids")
    elif tool == "return_delivered_order_items" and isinstance(norm.get("item_ids"), list):
        norm["item_ids"] = sorted(canon(x) for x in norm["item_ids"])
    return canon({"tool": tool, "args": norm})


def context_of(world: Tau2World, intent: Intent) -> dict[str, str]:
    """The customer facts of an intent's writes (what :func:`seeds` puts in ``context``)."""
    return _context(world, None, compile_intent(intent))


def _context(world: Tau2World, task: Task | None, writes: list[EnvAction]) -> dict[str, str]:
    """Facts a customer may state freely: their user id, e-mail, name and zip code."""
    db = world.base.records
    user_id: str | None = None
    for a in writes:
        uid = a.args.get("user_id")
        if isinstance(uid, str) and uid in db["users"]:
            user_id = uid
            break
        for coll, arg in (("orders", "order_id"), ("reservations", "reservation_id")):
            rid = a.args.get(arg)
            if coll in db and isinstance(rid, str) and rid in db[coll]:
                user_id = db[coll][rid]["user_id"]
                break
        if user_id:
            break
    ctx: dict[str, str] = {}
    if user_id is None or user_id not in db["users"]:
        return ctx
    user = db["users"][user_id]
    ctx["user_id"] = user_id
    ctx["email"] = user["email"]
    ctx["first_name"] = user["name"]["first_name"]
    ctx["last_name"] = user["name"]["last_name"]
    ctx["zip"] = user["address"]["zip"]
    if world.domain == "airline":
        ctx["dob"] = user["dob"]
    return ctx


def seeds(world: Tau2World) -> list[Intent]:
    """One root intent per task that has at least one effective golden write."""
    out: list[Intent] = []
    for task in world.tasks:
        session = world.open_session(task)
        writes: list[EnvAction] = []
        for a in task.actions:
            action = EnvAction(tool=a.name, args=a.arguments)
            obs = session.act(action)
            if obs.ok and world.tool_kind(a.name) == "write":
                writes.append(action)
        if not writes:
            continue
        conditions = [
            Condition(slot=slot_name(i, w.tool, k), op="=", value=canon(v))
            for i, w in enumerate(writes)
            for k, v in w.args.items()
        ]
        out.append(
            Intent.build(
                benchmark=world.benchmark,
                env_id=world.domain,
                base=task.id,
                conditions=conditions,
                is_seed=True,
                source_record=task.id,
                context=_context(world, task, writes),
                ground_truth=GroundTruth(kind="statehash", value=[session.state_hash()]),
            )
        )
    return out


def compile_intent(intent: Intent) -> list[EnvAction]:
    """Rebuild the intent's write calls, in order, from its conditions."""
    calls: dict[int, tuple[str, dict[str, Any]]] = {}
    for c in intent.conditions:
        i, tool, arg = parse_slot(c.slot)
        if c.op != "=":
            raise ConfigError(f"unsupported operator {c.op!r} for {c.slot}", field="conditions.op")
        prev = calls.get(i)
        if prev is not None and prev[0] != tool:
            raise ConfigError(f"write {i} names two tools", field=f"conditions.{c.slot}")
        args = prev[1] if prev is not None else {}
        try:
            args[arg] = json.loads(c.value) if isinstance(c.value, str) else c.value
        except json.JSONDecodeError:
            raise ConfigError(
                f"value is not JSON: {c.value!r}", field=f"conditions.{c.slot}"
            ) from None
        calls[i] = (tool, args)
    return [EnvAction(tool=t, args=a) for _, (t, a) in sorted(calls.items())]


def execute(world: Tau2World, intent: Intent) -> GroundTruth:
    """Execute the intent's writes on a fresh overlay; ConfigError when one is rejected."""
    task = next((t for t in world.tasks if t.id == intent.base), None)
    session = world.open_session(task)
    for i, action in enumerate(compile_intent(intent)):
        if world.tool_kind(action.tool) != "write":
            raise ConfigError(f"{action.tool!r} is not a write tool", field=f"write {i}")
        obs = session.act(action)
        if not obs.ok:
            raise ConfigError(
                f"write {i} ({action.tool}) rejected: {obs.text}",
                field=f"intent {intent.intent_id}",
            )
    return GroundTruth(kind="statehash", value=[session.state_hash()])


def _executed(session: EnvSession) -> list[EnvAction]:
    from core.envs.tau2.world import Tau2Session

    if isinstance(session, Tau2Session):
        return session.executed_writes()
    prop = session.proposal() or {}
    return [EnvAction(tool=w["tool"], args=w["args"]) for w in prop.get("executed_writes", [])]


def executed_golden(intent: Intent, session: EnvSession) -> list[bool]:
    """For each golden write of ``intent`` (in order): has the session executed it?"""
    pool = Counter(write_key(a.tool, a.args) for a in _executed(session))
    done: list[bool] = []
    for g in compile_intent(intent):
        key = write_key(g.tool, g.args)
        if pool[key] > 0:
            pool[key] -= 1
            done.append(True)
        else:
            done.append(False)
    return done


def adjudicate(
    world: Tau2World,
    intent: Intent,
    session: EnvSession,
    *,
    mode: Literal["actions", "exact_state"] = "actions",
) -> Verdict:
    """Accept when every golden write was executed (or, in ``exact_state``, hashes match)."""
    if mode == "exact_state":
        from core.envs.tau2.world import Tau2Session

        if not isinstance(session, Tau2Session):
            raise ConfigError("exact_state needs a τ² session", field="session")
        target = intent.ground_truth.value[0] if intent.ground_truth else None
        if target is None:
            target = execute(world, intent).value[0]
        ok = session.state_hash() == target
        return Verdict(accepted=ok, reason="state_hash_match" if ok else "state_hash_mismatch")
    golden = compile_intent(intent)
    done = executed_golden(intent, session)
    missing = [g.tool for g, d in zip(golden, done, strict=True) if not d]
    if not missing:
        return Verdict(accepted=True, reason="golden_actions_complete", score=1.0)
    return Verdict(
        accepted=False,
        reason="golden_actions_missing:" + ",".join(missing),
        score=(len(done) - len(missing)) / len(done),
    )


# ---- customer-voice phrasing -----------------------------------------------------------


def _item_phrase(world: Tau2World, item_id: Any) -> str:
    for product in world.base.records.get("products", {}).values():
        variant = product["variants"].get(item_id) if isinstance(item_id, str) else None
        if variant is not None:
            opts = ", ".join(f"{k} {v}" for k, v in variant["options"].items())
            return f"the {product['name'].lower()} ({opts})" if opts else f"the {product['name']}"
    return f"item {item_id}"


def _payment_phrase(world: Tau2World, pm_id: Any) -> str:
    if isinstance(pm_id, str):
        for user in world.base.records["users"].values():
            pm = user["payment_methods"].get(pm_id)
            if pm is None:
                continue
            src = pm["source"]
            if src == "credit_card":
                return f"my {pm['brand']} credit card ending in {pm['last_four']}"
            if src == "paypal":
                return "my PayPal account"
            if src == "gift_card":
                return "my gift card"
            if src == "certificate":
                return "my travel certificate"
    if isinstance(pm_id, str) and pm_id.startswith("certificate_"):
        return "my travel certificate"
    return f"payment method {pm_id}"


def _airport(code: Any) -> str:
    from core.envs.tau2.airline import AIRPORTS

    city = dict(AIRPORTS).get(code) if isinstance(code, str) else None
    return f"{city} ({code})" if city else str(code)


def _list(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def phrase(world: Tau2World, condition: Condition) -> str:
    """Say one condition the way a customer would (for template voices)."""
    try:
        _, tool, arg = parse_slot(condition.slot)
    except ConfigError:
        return f"{condition.slot} {condition.op} {condition.value}"
    try:
        v: Any = (
            json.loads(condition.value) if isinstance(condition.value, str) else condition.value
        )
    except json.JSONDecodeError:
        v = condition.value
    verb = {
        "exchange_delivered_order_items": "exchange",
        "modify_pending_order_items": "change",
        "return_delivered_order_items": "return",
    }.get(tool, "change")
    if arg == "order_id":
        return f"it's about my order {v}"
    if arg == "reservation_id":
        return f"it's about my reservation {v}"
    if arg == "user_id":
        return f"my user id is {v}"
    if arg == "reason":
        return {
            "no longer needed": "I no longer need it",
            "ordered by mistake": "I ordered it by mistake",
        }.get(str(v), f"the reason is {v}")
    if arg == "item_ids" and isinstance(v, list):
        return f"I want to {verb} {_list([_item_phrase(world, x) for x in v])}"
    if arg == "new_item_ids" and isinstance(v, list):
        return f"I'd like {_list([_item_phrase(world, x) for x in v])} instead"
    if arg in ("payment_method_id", "payment_id"):
        return f"please use {_payment_phrase(world, v)}"
    if arg == "address1":
        return f"the street address is {v}"
    if arg == "address2":
        return f"the second address line is {v}" if v else "there is no second address line"
    if arg in ("city", "state", "country"):
        return f"the {arg} is {v}"
    if arg == "zip":
        return f"the zip code is {v}"
    if arg == "cabin":
        return f"I want to fly {str(v).replace('_', ' ')}"
    if arg == "flight_type":
        return "it's a round trip" if v == "round_trip" else "it's one way"
    if arg == "origin":
        return f"I'm flying from {_airport(v)}"
    if arg == "destination":
        return f"I'm flying to {_airport(v)}"
    if arg == "flights" and isinstance(v, list):
        legs = [
            f"{f.get('flight_number')} on {f.get('date')}" if isinstance(f, dict) else str(f)
            for f in v
        ]
        return f"the flights should be {_list(legs)}"
    if arg == "passengers" and isinstance(v, list):
        people = [
            f"{p.get('first_name')} {p.get('last_name')} (born {p.get('dob')})"
            if isinstance(p, dict)
            else str(p)
            for p in v
        ]
        return f"the passengers are {_list(people)}"
    if arg == "payment_methods" and isinstance(v, list):
        pays = [
            f"${p.get('amount')} with {_payment_phrase(world, p.get('payment_id'))}"
            if isinstance(p, dict)
            else str(p)
            for p in v
        ]
        return f"I'll pay {_list(pays)}"
    if arg == "total_baggages":
        return f"I want {v} checked bags in total"
    if arg == "nonfree_baggages":
        return f"{v} of the bags are paid ones"
    if arg == "insurance":
        return "I want travel insurance" if v == "yes" else "I don't want travel insurance"
    if arg == "amount":
        return f"I was promised a certificate of ${v}"
    return f"the {arg.replace('_', ' ')} should be {v}"
