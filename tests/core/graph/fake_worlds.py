"""Small fake host worlds for construction tests (a shop with answer sets, a desk with state)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from core.envs.base import WorldBase
from core.graph.hosts import register_adapter
from core.graph.hosts.base import HostAdapter
from core.graph.hosts.tau2 import Tau2Adapter
from core.model.intent import Condition, GroundTruth, Intent
from core.model.world import ToolSpec, Verdict

PRODUCTS: list[dict[str, Any]] = [
    {
        "asin": "P01",
        "env": "shirts",
        "attrs": {"long sleeve", "cotton"},
        "color": ["black", "light blue"],
        "price": 18,
    },
    {
        "asin": "P02",
        "env": "shirts",
        "attrs": {"long sleeve", "polyester"},
        "color": ["black"],
        "price": 25,
    },
    {
        "asin": "P03",
        "env": "shirts",
        "attrs": {"short sleeve", "cotton"},
        "color": ["white", "light pink"],
        "price": 12,
    },
    {
        "asin": "P04",
        "env": "shirts",
        "attrs": {"long sleeve", "cotton", "slim fit"},
        "color": ["navy", "black"],
        "price": 30,
    },
    {
        "asin": "P05",
        "env": "shirts",
        "attrs": {"short sleeve", "linen"},
        "color": ["light pink", "white"],
        "price": 22,
    },
    {
        "asin": "P06",
        "env": "shirts",
        "attrs": {"long sleeve", "linen", "slim fit"},
        "color": ["light blue"],
        "price": 35,
    },
    {
        "asin": "P07",
        "env": "shirts",
        "attrs": {"long sleeve", "cotton"},
        "color": ["white"],
        "price": 15,
    },
    {
        "asin": "P08",
        "env": "shirts",
        "attrs": {"long sleeve", "cotton", "machine wash"},
        "color": ["black", "white"],
        "price": 19,
    },
    {
        "asin": "P09",
        "env": "mugs",
        "attrs": {"ceramic", "dishwasher safe"},
        "color": ["red", "dark green"],
        "price": 9,
    },
    {"asin": "P10", "env": "mugs", "attrs": {"ceramic"}, "color": ["red"], "price": 14},
    {
        "asin": "P11",
        "env": "mugs",
        "attrs": {"glass", "dishwasher safe"},
        "color": ["clear"],
        "price": 11,
    },
]

GOALS: list[tuple[str, str, list[Condition]]] = [
    (
        "shirts",
        "g1",
        [
            Condition(slot="attr:long sleeve", value="long sleeve"),
            Condition(slot="attr:cotton", value="cotton"),
            Condition(slot="option:color", value="black"),
            Condition(slot="price_upper", op="<=", value=30),
        ],
    ),
    (
        "shirts",
        "g2",
        [
            Condition(slot="attr:short sleeve", value="short sleeve"),
            Condition(slot="option:color", value="light pink"),
            Condition(slot="price_upper", op="<=", value=30),
        ],
    ),
    (
        "shirts",
        "g3",
        [
            Condition(slot="attr:long sleeve", value="long sleeve"),
            Condition(slot="option:color", value="light blue"),
            Condition(slot="price_upper", op="<=", value=40),
        ],
    ),
    (
        "shirts",
        "g4",
        [
            Condition(slot="attr:linen", value="linen"),
            Condition(slot="option:color", value="white"),
            Condition(slot="price_upper", op="<=", value=30),
        ],
    ),
    (
        "mugs",
        "g5",
        [
            Condition(slot="attr:ceramic", value="ceramic"),
            Condition(slot="option:color", value="red"),
            Condition(slot="price_upper", op="<=", value=20),
        ],
    ),
    (
        "mugs",
        "g6",
        [
            Condition(slot="attr:dishwasher safe", value="dishwasher safe"),
            Condition(slot="option:color", value="clear"),
            Condition(slot="price_upper", op="<=", value=20),
        ],
    ),
]


class FakeShop(WorldBase):
    """A shop: intents are attribute/option/price filters; the answer is a purchase set."""

    benchmark = "fakeshop"
    world_id = "fakeshop-1"

    def __init__(self, goals: Sequence[tuple[str, str, list[Condition]]] = GOALS) -> None:
        self.goals = list(goals)
        self.products = PRODUCTS
        self.executions = 0

    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(name="search", description="search", kind="read"),
            ToolSpec(name="click", description="click", kind="generic"),
        ]

    def open_session(self) -> Any:
        raise NotImplementedError

    def seeds(self) -> list[Intent]:
        return [
            Intent.build(
                benchmark=self.benchmark,
                env_id=env,
                base=f"goal:{gid}",
                conditions=tuple(conds),
                is_seed=True,
                source_record=gid,
            )
            for env, gid, conds in self.goals
        ]

    def execute(self, intent: Intent) -> GroundTruth:
        self.executions += 1
        rows = []
        for p in self.products:
            if p["env"] != intent.env_id:
                continue
            ok = True
            opts: list[list[str]] = []
            for c in intent.conditions:
                if c.slot.startswith("attr:"):
                    ok = ok and c.value in p["attrs"]
                elif c.slot == "option:color":
                    ok = ok and c.value in p["color"]
                    opts.append(["color", str(c.value)])
                elif c.slot == "price_upper":
                    ok = ok and p["price"] <= float(c.value)
                else:
                    raise ValueError(f"unknown slot {c.slot}")
            if ok:
                if not opts:
                    opts = [["color", p["color"][0]]]
                rows.append(json.dumps([p["asin"], opts]))
        return GroundTruth(kind="purchaseset", value=sorted(rows))

    def judge(self, intent: Intent, session: Any, config: Any) -> Verdict:
        raise NotImplementedError

    def phrase(self, c: Condition) -> str:
        if c.slot.startswith("attr:"):
            return str(c.value)
        if c.slot.startswith("option:"):
            return f"in {c.value}"
        return f"priced under ${c.value}"


class FakeShopAdapter(HostAdapter):
    """Shop phrasing, attr slots reveal their value, attrs pool into one domain."""

    host_class = "shop"

    def name_reveals_value(self, slot: str) -> bool:
        return slot.startswith("attr:")

    def slot_family(self, slot: str) -> str:
        return "attr" if slot.startswith("attr:") else slot

    def is_valid(self, intent: Intent) -> bool:
        return any(c.slot.startswith("attr:") for c in intent.conditions)

    def answer_view(self, gt: GroundTruth) -> frozenset[str] | None:
        return frozenset(json.loads(r)[0] for r in gt.value)

    def topic(self, intent: Intent) -> str:
        return intent.env_id


register_adapter("fakeshop", FakeShopAdapter)


ACCOUNTS = {
    "u1": {
        "orders": {"#A1": "pending", "#A2": "pending"},
        "payments": ["card_1111", "gift_card_2222"],
        "city": "Boston",
    },
    "u2": {
        "orders": {"#B1": "pending", "#B2": "delivered"},
        "payments": ["card_3333", "paypal_4444"],
        "city": "Denver",
    },
}


def _j(v: Any) -> str:
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def _cond(i: int, tool: str, arg: str, v: Any) -> Condition:
    return Condition(slot=f"arg:{i}:{tool}:{arg}", value=_j(v))


TASKS: list[tuple[str, str, list[Condition]]] = [
    (
        "t1",
        "u1",
        [
            _cond(0, "cancel_order", "order_id", "#A1"),
            _cond(0, "cancel_order", "reason", "no longer needed"),
            _cond(1, "pay_order", "order_id", "#A2"),
            _cond(1, "pay_order", "payment_id", "gift_card_2222"),
        ],
    ),
    (
        "t2",
        "u1",
        [
            _cond(0, "cancel_order", "order_id", "#A2"),
            _cond(0, "cancel_order", "reason", "ordered by mistake"),
        ],
    ),
    (
        "t3",
        "u2",
        [
            _cond(0, "pay_order", "order_id", "#B1"),
            _cond(0, "pay_order", "payment_id", "paypal_4444"),
        ],
    ),
    (
        "t4",
        "u2",
        [
            _cond(0, "change_city", "user_id", "u2"),
            _cond(0, "change_city", "city", "Austin"),
            _cond(1, "cancel_order", "order_id", "#B1"),
            _cond(1, "cancel_order", "reason", "no longer needed"),
        ],
    ),
    (
        "t5",
        "u1",
        [_cond(0, "change_city", "user_id", "u1"), _cond(0, "change_city", "city", "Seattle")],
    ),
]


class FakeDesk(WorldBase):
    """A service desk: intents are write calls; the answer is the resulting state hash."""

    benchmark = "fakedesk"
    world_id = "fakedesk-1"

    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(name=n, description=n, kind="write")
            for n in ("cancel_order", "pay_order", "change_city")
        ] + [ToolSpec(name="get_order", description="read", kind="read")]

    def open_session(self) -> Any:
        raise NotImplementedError

    def seeds(self) -> list[Intent]:
        out = []
        for tid, user, conds in TASKS:
            tools = sorted({c.slot.split(":")[2] for c in conds})
            out.append(
                Intent.build(
                    benchmark=self.benchmark,
                    env_id="desk",
                    base=_j({"writes": tools}),
                    conditions=tuple(conds),
                    is_seed=True,
                    source_record=tid,
                    context={"user_id": user},
                )
            )
        return out

    def execute(self, intent: Intent) -> GroundTruth:
        state = json.loads(json.dumps(ACCOUNTS))
        calls: dict[str, dict[str, Any]] = {}
        for c in intent.conditions:
            _, i, tool, arg = c.slot.split(":")
            calls.setdefault(f"{i}:{tool}", {})[arg] = json.loads(str(c.value))
        for key in sorted(calls):
            tool = key.split(":")[1]
            a = calls[key]
            owner = next(
                (u for u, acc in state.items() if a.get("order_id") in acc["orders"]), None
            )
            if tool == "cancel_order":
                if (
                    owner is None
                    or "reason" not in a
                    or state[owner]["orders"][a["order_id"]] != "pending"
                ):
                    raise ValueError("cannot cancel")
                state[owner]["orders"][a["order_id"]] = f"cancelled:{a['reason']}"
            elif tool == "pay_order":
                if owner is None or a.get("payment_id") not in state[owner]["payments"]:
                    raise ValueError("bad payment")
                state[owner]["orders"][a["order_id"]] = f"paid:{a['payment_id']}"
            elif tool == "change_city":
                if a.get("user_id") not in state or "city" not in a:
                    raise ValueError("bad user")
                state[a["user_id"]]["city"] = a["city"]
        h = hashlib.sha256(_j(state).encode()).hexdigest()
        return GroundTruth(kind="statehash", value=[_j({"db": h, "errors": []})])

    def judge(self, intent: Intent, session: Any, config: Any) -> Verdict:
        raise NotImplementedError

    def phrase(self, c: Condition) -> str:
        arg = c.slot.split(":")[-1]
        v = json.loads(str(c.value))
        return {
            "order_id": f"order {v}",
            "reason": f"because it is {v}",
            "payment_id": f"using {v}",
            "user_id": f"for account {v}",
            "city": f"to {v}",
        }.get(arg, f"{arg} {v}")


class FakeDeskAdapter(Tau2Adapter):
    """τ² adapter over the fake desk (same slot grammar)."""


register_adapter("fakedesk", FakeDeskAdapter)
