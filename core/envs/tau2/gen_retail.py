# ruff: noqa: E501  (data tables and templated customer prose)
"""Retail part of the bundled-world generator (products, users, orders, tasks)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from core.envs.tau2.gen_common import Builder
from core.envs.tau2.generate import (
    TONES,
    action,
    address,
    customers,
    digits,
    task_dict,
    unique,
)
from core.envs.tau2.schema import ROrder, RProduct, RUser, typed

POLICY = """# Retail agent policy (Drift-Bench++ bundled world)

You are a customer-service agent of an online shop. You can help a customer to:

- cancel a pending order, or change its shipping address, payment method or items;
- return or exchange items of a delivered order;
- change their default address;
- answer questions about their profile, orders and the products.

Rules:

1. Authenticate the customer first: find their user id by e-mail, or by first name, last name
   and zip code. Do this even when the customer gives you a user id.
2. Help one customer per conversation and only with their own account.
3. Before any change, list what will be done and get an explicit "yes" from the customer.
4. A pending order can be cancelled only with the reason "no longer needed" or "ordered by
   mistake". Its items can be changed only once, to other available items of the same product.
5. A delivered order can be returned or exchanged once. Refunds go to the original payment
   method or to a gift card; a price difference is paid or refunded with a payment method the
   customer chooses (a gift card needs enough balance).
6. Do not make up information. Transfer to a human agent only when the request is outside
   these rules and the customer asks for it.
"""

CATALOG: tuple[tuple[str, float, dict[str, tuple[str, ...]]], ...] = (
    ("Desk Lamp", 60.0, {"color": ("black", "white", "silver"), "brightness": ("low", "medium", "high"), "power source": ("USB", "AC adapter", "battery")}),
    ("Water Bottle", 35.0, {"capacity": ("500ml", "750ml", "1000ml"), "material": ("glass", "stainless steel", "plastic"), "color": ("blue", "green", "red")}),
    ("Mechanical Keyboard", 140.0, {"switch type": ("linear", "tactile", "clicky"), "backlight": ("none", "white", "RGB"), "size": ("full size", "80%")}),
    ("Running Shoes", 110.0, {"size": ("8", "9", "10", "11"), "color": ("black", "white", "yellow"), "material": ("mesh", "leather")}),
    ("Office Chair", 420.0, {"material": ("fabric", "mesh", "leather"), "color": ("black", "gray", "blue"), "armrest": ("fixed", "adjustable")}),
    ("Bluetooth Speaker", 90.0, {"color": ("black", "blue", "red"), "battery life": ("10 hours", "20 hours"), "water resistance": ("yes", "no")}),
    ("Coffee Maker", 150.0, {"color": ("black", "stainless steel"), "capacity": ("4 cups", "8 cups", "12 cups"), "type": ("drip", "espresso")}),
    ("Backpack", 75.0, {"color": ("black", "navy", "green"), "size": ("small", "medium", "large"), "material": ("nylon", "polyester")}),
    ("Wireless Earbuds", 130.0, {"color": ("black", "white"), "battery life": ("6 hours", "8 hours"), "water resistance": ("IPX4", "IPX7")}),
    ("Yoga Mat", 40.0, {"thickness": ("4mm", "6mm", "8mm"), "material": ("PVC", "TPE", "natural rubber"), "color": ("pink", "purple", "blue")}),
    ("Smart Watch", 260.0, {"color": ("black", "silver", "gold"), "band material": ("silicone", "leather", "metal"), "display": ("LCD", "AMOLED")}),
    ("Tea Kettle", 55.0, {"material": ("glass", "stainless steel"), "capacity": ("1 liter", "1.5 liters", "2 liters"), "stovetop compatibility": ("gas", "induction")}),
)  # fmt: skip

N_USERS = 30


def _products(rng: random.Random, used: set[str]) -> dict[str, Any]:
    products: dict[str, Any] = {}
    for name, base_price, dims in CATALOG:
        pid = unique(rng, 10, used)
        combos: list[dict[str, str]] = []
        want = rng.randint(4, 6)
        tries = 0
        while len(combos) < want and tries < 100:
            tries += 1
            opt = {k: rng.choice(v) for k, v in dims.items()}
            if opt not in combos:
                combos.append(opt)
        variants: dict[str, Any] = {}
        for k, opt in enumerate(combos):
            iid = unique(rng, 10, used)
            variants[iid] = {
                "item_id": iid,
                "options": opt,
                # the first two variants of every product are always in stock
                "available": k < 2 or rng.random() < 0.8,
                "price": round(base_price * rng.uniform(0.8, 1.25), 2),
            }
        products[pid] = typed(RProduct, {"name": name, "product_id": pid, "variants": variants})
    return products


def _users(rng: random.Random, used: set[str]) -> dict[str, Any]:
    users: dict[str, Any] = {}
    for first, last, uid, methods in customers(rng, N_USERS, used):
        if rng.random() < 0.5:
            pid = unique(rng, 7, used, "paypal_")
            methods[pid] = {"source": "paypal", "id": pid}
        if rng.random() < 0.6:
            gid = unique(rng, 7, used, "gift_card_")
            methods[gid] = {
                "source": "gift_card",
                "id": gid,
                "balance": round(rng.uniform(0, 400), 2),
            }
        users[uid] = {
            "user_id": uid,
            "name": {"first_name": first, "last_name": last},
            "address": {k: v or "" for k, v in address(rng).items()},
            "email": f"{first.lower()}.{last.lower()}{rng.randint(1000, 9999)}@example.com",
            "payment_methods": methods,
            "orders": [],
        }
    return users


def _orders(
    rng: random.Random, used: set[str], users: dict[str, Any], products: dict[str, Any]
) -> dict[str, Any]:
    orders: dict[str, Any] = {}
    plist = list(products.values())
    statuses = ("pending",) * 8 + ("delivered",) * 7 + ("processed",) * 3 + ("cancelled",) * 2
    for uid, user in users.items():
        for _ in range(rng.randint(1, 3)):
            oid = unique(rng, 7, used, "#W")
            items = []
            for product in rng.sample(plist, rng.randint(1, 3)):
                variant = rng.choice(list(product["variants"].values()))
                items.append(
                    {
                        "name": product["name"],
                        "product_id": product["product_id"],
                        "item_id": variant["item_id"],
                        "price": variant["price"],
                        "options": dict(variant["options"]),
                    }
                )
            status = rng.choice(statuses)
            total = round(sum(it["price"] for it in items), 2)
            method = rng.choice(list(user["payment_methods"]))
            history = [
                {"transaction_type": "payment", "amount": total, "payment_method_id": method}
            ]
            order: dict[str, Any] = {
                "order_id": oid,
                "user_id": uid,
                "address": dict(user["address"]),
                "items": items,
                "status": status,
                "fulfillments": [],
                "payment_history": history,
            }
            if status in ("delivered", "processed"):
                order["fulfillments"] = [
                    {"tracking_id": [digits(rng, 12)], "item_ids": [it["item_id"] for it in items]}
                ]
            if status == "cancelled":
                order["cancel_reason"] = rng.choice(("no longer needed", "ordered by mistake"))
                history.append(
                    {"transaction_type": "refund", "amount": total, "payment_method_id": method}
                )
            orders[oid] = typed(ROrder, order)
            user["orders"].append(oid)
    return orders


class RetailTasks(Builder):
    """Builds retail tasks against the generated database."""

    def __init__(self, rng: random.Random, db: dict[str, Any]):
        super().__init__(rng, db, "retail")
        self.products = db["products"]

    def orders(self, status: str, pred: Callable[[Any], bool] = lambda o: True) -> list[Any]:
        """Orders in ``status`` satisfying ``pred``."""
        return [o for o in self.db["orders"].values() if o["status"] == status and pred(o)]

    def swaps(self, order: Any, k: int) -> list[tuple[str, str]] | None:
        """Pick up to ``k`` (old item, new available variant of the same product) pairs."""
        pairs: list[tuple[str, str]] = []
        for it in self.rng.sample(order["items"], len(order["items"])):
            options = [
                v["item_id"]
                for v in self.products[it["product_id"]]["variants"].values()
                if v["available"] and v["item_id"] != it["item_id"]
            ]
            if options:
                pairs.append((it["item_id"], self.rng.choice(options)))
            if len(pairs) == k:
                break
        return pairs or None

    def auth(self, tid: str, user: Any, acts: list[dict[str, Any]]) -> tuple[str, str | None]:
        """Append an authentication lookup; return (known_info, unknown_info)."""
        first, last = user["name"]["first_name"], user["name"]["last_name"]
        if self.rng.random() < 0.5:
            acts.append(action(tid, len(acts), "find_user_id_by_email", email=user["email"]))
            return f"You are {first} {last}. Your e-mail is {user['email']}.", None
        acts.append(
            action(
                tid,
                len(acts),
                "find_user_id_by_name_zip",
                first_name=first,
                last_name=last,
                zip=user["address"]["zip"],
            )
        )
        return (
            f"You are {first} {last} and live in zip code {user['address']['zip']}.",
            "You do not remember your e-mail address.",
        )

    def pay_for(self, user: Any, amount: float, exclude: str | None = None) -> str | None:
        """A payment method of ``user`` able to pay ``amount`` (gift cards need balance)."""
        ok = [
            pid
            for pid, pm in user["payment_methods"].items()
            if pid != exclude and (pm["source"] != "gift_card" or pm["balance"] >= amount)
        ]
        return self.rng.choice(ok) if ok else None

    def item_text(self, item_id: str) -> str:
        """Describe an item by product name and options."""
        for p in self.products.values():
            v = p["variants"].get(item_id)
            if v:
                return f"{p['name'].lower()} ({', '.join(v['options'].values())})"
        return item_id

    def build(self) -> list[dict[str, Any]]:
        """Generate the task list (every write tool at least twice)."""
        plan = (
            ["cancel"] * 3
            + ["address"] * 2
            + ["payment"] * 2
            + ["items"] * 3
            + ["exchange"] * 3
            + ["return"] * 3
            + ["user_address"] * 2
            + ["combo"] * 2
            + ["refusal"]
        )
        for kind in plan:
            getattr(self, f"t_{kind}")(str(len(self.tasks)))
        return self.tasks

    def _user_of(self, order: Any) -> Any:
        return self.db["users"][order["user_id"]]

    def t_cancel(self, tid: str) -> None:
        """Cancel a pending order."""
        order = self.pick_fresh(self.orders("pending"), "order_id")
        user = self._user_of(order)
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        reason = self.rng.choice(("no longer needed", "ordered by mistake"))
        acts.append(action(tid, len(acts), "get_order_details", order_id=order["order_id"]))
        acts.append(
            action(
                tid, len(acts), "cancel_pending_order", order_id=order["order_id"], reason=reason
            )
        )
        why = (
            "you no longer need it" if reason == "no longer needed" else "you ordered it by mistake"
        )
        self.add(
            tid,
            "Cancel a pending order.",
            f"You want to cancel your order {order['order_id']} because {why}.",
            known,
            unknown,
            acts,
        )

    def t_address(self, tid: str) -> None:
        """Change the shipping address of a pending order."""
        order = self.pick_fresh(self.orders("pending"), "order_id")
        user = self._user_of(order)
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        new = {k: v or "" for k, v in address(self.rng).items()}
        acts.append(action(tid, len(acts), "get_order_details", order_id=order["order_id"]))
        acts.append(
            action(
                tid, len(acts), "modify_pending_order_address", order_id=order["order_id"], **new
            )
        )
        where = f"{new['address1']}, {new['address2']}, {new['city']}, {new['state']} {new['zip']}"
        self.add(
            tid,
            "Change the shipping address of a pending order.",
            f"Your order {order['order_id']} should be shipped to {where}, USA instead.",
            known,
            unknown,
            acts,
        )

    def t_payment(self, tid: str) -> None:
        """Change the payment method of a pending order."""

        def ok(o: Any) -> bool:
            amount = o["payment_history"][0]["amount"]
            cur = o["payment_history"][0]["payment_method_id"]
            return self.pay_for(self._user_of(o), amount, exclude=cur) is not None

        order = self.pick_fresh(
            self.orders("pending", lambda o: len(o["payment_history"]) == 1 and ok(o)), "order_id"
        )
        user = self._user_of(order)
        amount = order["payment_history"][0]["amount"]
        new = self.pay_for(user, amount, exclude=order["payment_history"][0]["payment_method_id"])
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        acts.append(action(tid, len(acts), "get_user_details", user_id=user["user_id"]))
        acts.append(action(tid, len(acts), "get_order_details", order_id=order["order_id"]))
        acts.append(
            action(
                tid,
                len(acts),
                "modify_pending_order_payment",
                order_id=order["order_id"],
                payment_method_id=new,
            )
        )
        self.add(
            tid,
            "Change the payment method of a pending order.",
            f"You want to pay for order {order['order_id']} with {self.pm_text(user, new)} instead.",
            known,
            unknown,
            acts,
        )

    def _swap_task(self, tid: str, status: str, tool: str, verb: str) -> None:
        order = self.pick_fresh(
            self.orders(status, lambda o: self.swaps(o, 2) is not None), "order_id"
        )
        user = self._user_of(order)
        pairs = self.swaps(order, self.rng.randint(1, 2)) or []
        diff = sum(
            self.products[next(i for i in order["items"] if i["item_id"] == a)["product_id"]][
                "variants"
            ][b]["price"]
            - next(i for i in order["items"] if i["item_id"] == a)["price"]
            for a, b in pairs
        )
        pm = self.pay_for(user, max(diff, 0.0))
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        acts.append(action(tid, len(acts), "get_order_details", order_id=order["order_id"]))
        for pid in sorted({self.item_product(order, a) for a, _ in pairs}):
            acts.append(action(tid, len(acts), "get_product_details", product_id=pid))
        acts.append(
            action(
                tid,
                len(acts),
                tool,
                order_id=order["order_id"],
                item_ids=[a for a, _ in pairs],
                new_item_ids=[b for _, b in pairs],
                payment_method_id=pm,
            )
        )
        wants = "; ".join(f"the {self.item_text(a)} for the {self.item_text(b)}" for a, b in pairs)
        self.add(
            tid,
            f"{verb.capitalize()} items of a {status} order.",
            f"In your order {order['order_id']} you want to {verb} {wants}. "
            f"Any price difference goes through {self.pm_text(user, pm)}.",
            known,
            unknown,
            acts,
        )

    def item_product(self, order: Any, item_id: str) -> str:
        """Product id of an order line."""
        return str(next(i for i in order["items"] if i["item_id"] == item_id)["product_id"])

    def t_items(self, tid: str) -> None:
        """Modify items of a pending order."""
        self._swap_task(tid, "pending", "modify_pending_order_items", "change")

    def t_exchange(self, tid: str) -> None:
        """Exchange items of a delivered order."""
        self._swap_task(tid, "delivered", "exchange_delivered_order_items", "exchange")

    def t_return(self, tid: str) -> None:
        """Return items of a delivered order (refund with a communicated total)."""
        order = self.pick_fresh(self.orders("delivered"), "order_id")
        user = self._user_of(order)
        items = self.rng.sample(order["items"], self.rng.randint(1, len(order["items"])))
        original = order["payment_history"][0]["payment_method_id"]
        gifts = [p for p, m in user["payment_methods"].items() if m["source"] == "gift_card"]
        pm = self.rng.choice([original, *gifts])
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        acts.append(action(tid, len(acts), "get_order_details", order_id=order["order_id"]))
        total = round(sum(i["price"] for i in items), 2)
        acts.append(
            action(
                tid, len(acts), "calculate", expression=" + ".join(str(i["price"]) for i in items)
            )
        )
        acts.append(
            action(
                tid,
                len(acts),
                "return_delivered_order_items",
                order_id=order["order_id"],
                item_ids=[i["item_id"] for i in items],
                payment_method_id=pm,
            )
        )
        names = ", ".join(f"the {self.item_text(i['item_id'])}" for i in items)
        self.add(
            tid,
            "Return items of a delivered order and tell the refund total.",
            f"You want to return {names} from order {order['order_id']}, refunded to "
            f"{self.pm_text(user, pm)}. You want to know the total refund.",
            known,
            unknown,
            acts,
            communicate=[f"{total:.2f}".rstrip("0").rstrip(".")],
        )

    def t_user_address(self, tid: str) -> None:
        """Change a user's default address (with one failed lookup first)."""
        user = self.pick_fresh(list(self.db["users"].values()), "user_id")
        acts: list[dict[str, Any]] = []
        wrong = user["email"].replace("@", "1@")
        acts.append(action(tid, 0, "find_user_id_by_email", email=wrong))
        acts[-1]["info"] = "expected lookup failure"
        known, _ = self.auth(tid, user, acts)
        new = {k: v or "" for k, v in address(self.rng).items()}
        acts.append(action(tid, len(acts), "modify_user_address", user_id=user["user_id"], **new))
        self.add(
            tid,
            "Change the default address of a customer.",
            f"You moved to {new['address1']}, {new['address2']}, {new['city']}, {new['state']} "
            f"{new['zip']}, USA and want your default address updated.",
            known + f" You first give the e-mail {wrong} by mistake.",
            None,
            acts,
        )

    def t_combo(self, tid: str) -> None:
        """Cancel one pending order and return items of a delivered one, same customer."""
        users = [
            u
            for u in self.db["users"].values()
            if any(self.db["orders"][o]["status"] == "pending" for o in u["orders"])
            and any(self.db["orders"][o]["status"] == "delivered" for o in u["orders"])
        ]
        user = self.pick_fresh(users, "user_id")
        pend = self.rng.choice(
            [o for o in user["orders"] if self.db["orders"][o]["status"] == "pending"]
        )
        dele = self.db["orders"][
            self.rng.choice(
                [o for o in user["orders"] if self.db["orders"][o]["status"] == "delivered"]
            )
        ]
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        acts.append(action(tid, len(acts), "get_user_details", user_id=user["user_id"]))
        acts.append(
            action(tid, len(acts), "cancel_pending_order", order_id=pend, reason="no longer needed")
        )
        item = self.rng.choice(dele["items"])
        acts.append(
            action(
                tid,
                len(acts),
                "return_delivered_order_items",
                order_id=dele["order_id"],
                item_ids=[item["item_id"]],
                payment_method_id=dele["payment_history"][0]["payment_method_id"],
            )
        )
        self.add(
            tid,
            "Cancel one order and return an item of another.",
            f"You no longer need order {pend} and want it cancelled. You also want to return the "
            f"{self.item_text(item['item_id'])} from order {dele['order_id']} to the original "
            "payment method.",
            known,
            unknown,
            acts,
        )

    def t_refusal(self, tid: str) -> None:
        """Ask to cancel a delivered order: nothing may change."""
        order = self.pick_fresh(self.orders("delivered"), "order_id")
        user = self._user_of(order)
        acts: list[dict[str, Any]] = []
        known, unknown = self.auth(tid, user, acts)
        acts.append(action(tid, len(acts), "get_order_details", order_id=order["order_id"]))
        self.add(
            tid,
            "Refuse to cancel a delivered order.",
            f"You want to cancel order {order['order_id']} even though it was delivered. If the "
            "agent refuses, you accept and end the conversation.",
            known,
            unknown,
            acts,
        )

    def pm_text(self, user: Any, pm_id: str | None) -> str:
        """Describe a payment method as a customer would."""
        pm = user["payment_methods"].get(pm_id or "")
        if pm is None:
            return "your usual payment method"
        if pm["source"] == "credit_card":
            return f"your {pm['brand']} card ending in {pm['last_four']}"
        if pm["source"] == "gift_card":
            return "your gift card"
        return "your PayPal account"

    def add(
        self,
        tid: str,
        purpose: str,
        reason: str,
        known: str,
        unknown: str | None,
        acts: list[dict[str, Any]],
        communicate: list[str] | None = None,
    ) -> None:
        """Append a task."""
        self.tasks.append(
            task_dict(
                tid,
                "retail",
                purpose,
                reason,
                known,
                unknown,
                self.rng.choice(TONES),
                acts,
                communicate,
            )
        )


def build_retail(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return (db, tasks) of a generated retail world."""
    used: set[str] = set()
    products = _products(rng, used)
    users = _users(rng, used)
    orders = _orders(rng, used, users, products)
    db = {
        "products": products,
        "users": {k: typed(RUser, v) for k, v in users.items()},
        "orders": orders,
    }
    tasks = RetailTasks(rng, db).build()
    return db, tasks
