"""τ²-bench Retail tool table.

Same names, arguments, checks (in the same order), effects and error messages as τ²-bench's
``RetailTools``. Records are the typed dicts of :mod:`core.envs.tau2.schema`; every mutation
goes through ``self.db.write`` so the shared base is never touched.

Upstream quirks reproduced on purpose (golden states depend on them):

* ``modify_pending_order_items`` gives every modified item the price and options of the *last*
  new variant in the argument list (τ²-bench issues #317/#318); its payment amount is the
  unrounded ``abs(diff)``.
* ``cancel_pending_order`` and ``modify_pending_order_items`` need status exactly ``pending``;
  address and payment changes accept any status containing ``pending``
  (``pending (item modified)`` included).
* ``exchange_delivered_order_items`` and ``return_delivered_order_items`` store the *sorted*
  id lists; the exchange records the price difference (rounded to 2) but no payment.
* Gift-card balances are rounded to 2 decimals after every change.
* An exception half-way through a tool leaves the mutations made so far (no rollback), as in
  τ²-bench; e.g. a cancellation refunds gift cards payment by payment.
* Customer lookups compare names and e-mails case-insensitively (``str.lower``).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from core.envs.tau2.db import clone
from core.envs.tau2.schema import RAddress, ROrderPayment, typed
from core.envs.tau2.toolkit import Toolkit, s_arr, s_str, tool

_ORDER = "The order id, such as '#W0000000' (note the leading '#')."
_PM = (
    "The payment method id to pay or receive a refund with, such as 'gift_card_0000000' or "
    "'credit_card_0000000' (see the user's or order's details)."
)
_ADDR = {
    "address1": s_str("First address line, such as '123 Main St'."),
    "address2": s_str("Second address line, such as 'Apt 1' or ''."),
    "city": s_str("City, such as 'San Francisco'."),
    "state": s_str("State, such as 'CA'."),
    "country": s_str("Country, such as 'USA'."),
    "zip": s_str("Zip code, such as '12345'."),
}


def _is_gift(pm: Any) -> bool:
    return isinstance(pm, dict) and pm.get("source") == "gift_card"


class RetailTools(Toolkit):
    """All tools of the retail domain."""

    domain: ClassVar[str] = "retail"

    # ---- lookups -----------------------------------------------------------------------

    def _order(self, order_id: str) -> Any:
        if not self.db.has("orders", order_id):
            raise ValueError("Order not found")
        return self.db.get("orders", order_id)

    def _user(self, user_id: str) -> Any:
        if not self.db.has("users", user_id):
            raise ValueError("User not found")
        return self.db.get("users", user_id)

    def _product(self, product_id: str) -> Any:
        if not self.db.has("products", product_id):
            raise ValueError("Product not found")
        return self.db.get("products", product_id)

    def _variant(self, product_id: str, item_id: str) -> Any:
        product = self._product(product_id)
        if item_id not in product["variants"]:
            raise ValueError("Variant not found")
        return product["variants"][item_id]

    def _payment_method(self, user_id: str, pm_id: str) -> Any:
        user = self._user(user_id)
        if pm_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        return user["payment_methods"][pm_id]

    def _adjust_gift(self, user_id: str, pm_id: str, delta: float) -> None:
        pm = self.db.write("users", user_id)["payment_methods"][pm_id]
        pm["balance"] += delta
        pm["balance"] = round(pm["balance"], 2)

    # ---- read tools --------------------------------------------------------------------

    @tool(
        "read",
        "Find a customer's user id by e-mail (case-insensitive).",
        email=s_str("The e-mail, such as 'something@example.com'."),
    )
    def find_user_id_by_email(self, email: str) -> str:
        """Return the user id whose e-mail matches."""
        wanted = email.lower()
        for user_id, user in self.db.items("users"):
            if user["email"].lower() == wanted:
                return user_id
        raise ValueError("User not found")

    @tool(
        "read",
        "Find a customer's user id by first name, last name and zip code. Use it only when the "
        "customer cannot be found by e-mail.",
        first_name=s_str("First name, such as 'John'."),
        last_name=s_str("Last name, such as 'Doe'."),
        zip=s_str("Zip code, such as '12345'."),
    )
    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Return the user id matching name (case-insensitive) and zip (exact)."""
        fn, ln = first_name.lower(), last_name.lower()
        for user_id, user in self.db.items("users"):
            if (
                user["name"]["first_name"].lower() == fn
                and user["name"]["last_name"].lower() == ln
                and user["address"]["zip"] == zip
            ):
                return user_id
        raise ValueError("User not found")

    @tool("read", "Get the status and details of an order.", order_id=s_str(_ORDER))
    def get_order_details(self, order_id: str) -> Any:
        """Return the order record."""
        return self._order(order_id)

    @tool(
        "read",
        "Get the inventory details (all variants) of a product.",
        product_id=s_str("The product id, such as '6086499569' (not an item id)."),
    )
    def get_product_details(self, product_id: str) -> Any:
        """Return the product record."""
        return self._product(product_id)

    @tool(
        "read",
        "Get the inventory details of one item (variant).",
        item_id=s_str("The item id, such as '1008292230' (not a product id)."),
    )
    def get_item_details(self, item_id: str) -> Any:
        """Return the variant record with this item id."""
        for _, product in self.db.items("products"):
            if item_id in product["variants"]:
                return product["variants"][item_id]
        raise ValueError("Item not found")

    @tool(
        "read",
        "Get a customer's details, including their orders and payment methods.",
        user_id=s_str("The user id, such as 'sara_doe_496'."),
    )
    def get_user_details(self, user_id: str) -> Any:
        """Return the user record."""
        return self._user(user_id)

    @tool("read", "List the name and product id of every product type, as JSON.")
    def list_all_product_types(self) -> str:
        """Return ``{name: product_id}`` as a JSON string with sorted keys."""
        names = {p["name"]: p["product_id"] for _, p in self.db.items("products")}
        return json.dumps(names, sort_keys=True)

    # ---- write tools -------------------------------------------------------------------

    @tool(
        "write",
        "Cancel a pending order after explicit customer confirmation. Payments are refunded; "
        "gift-card payments are credited back immediately.",
        order_id=s_str(_ORDER),
        reason=s_str("Either 'no longer needed' or 'ordered by mistake'."),
    )
    def cancel_pending_order(self, order_id: str, reason: str) -> Any:
        """Cancel a pending order and refund its payments."""
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be cancelled")
        if reason not in {"no longer needed", "ordered by mistake"}:
            raise ValueError("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            pm_id = payment["payment_method_id"]
            refunds.append(
                typed(
                    ROrderPayment,
                    {
                        "transaction_type": "refund",
                        "amount": payment["amount"],
                        "payment_method_id": pm_id,
                    },
                )
            )
            user = self._user(order["user_id"])
            pm = self._payment_method(user["user_id"], pm_id)
            if _is_gift(pm):
                self._adjust_gift(user["user_id"], pm_id, payment["amount"])
        order = self.db.write("orders", order_id)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return order

    @tool(
        "write",
        "Exchange items of a delivered order for other items of the same product, after "
        "explicit customer confirmation. Can be done once per delivered order.",
        order_id=s_str(_ORDER),
        item_ids=s_arr("Item ids to exchange (duplicates allowed)."),
        new_item_ids=s_arr("New item ids, position by position, of the same products."),
        payment_method_id=s_str(_PM),
    )
    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Any:
        """Request an exchange; records the sorted lists and the price difference."""
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be exchanged")
        present = [it["item_id"] for it in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > present.count(item_id):
                raise ValueError(f"Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match.")
        diff: Any = 0
        for item_id, new_id in zip(item_ids, new_item_ids, strict=False):
            item = next((it for it in order["items"] if it["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_id} not found or available")
            diff += variant["price"] - item["price"]
        diff = round(diff, 2)
        pm = self._payment_method(order["user_id"], payment_method_id)
        if _is_gift(pm) and pm["balance"] < diff:
            raise ValueError("Insufficient gift card balance to pay for the price difference")
        order = self.db.write("orders", order_id)
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return order

    @tool(
        "write",
        "Change the shipping address of a pending order, after explicit customer confirmation.",
        order_id=s_str(_ORDER),
        **_ADDR,
    )
    def modify_pending_order_address(
        self,
        order_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Any:
        """Replace the order's shipping address."""
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        address = typed(
            RAddress,
            {
                "address1": address1,
                "address2": address2,
                "city": city,
                "state": state,
                "country": country,
                "zip": zip,
            },
        )
        order = self.db.write("orders", order_id)
        order["address"] = address
        return order

    @tool(
        "write",
        "Change items of a pending order to other items of the same product, after explicit "
        "customer confirmation. Can be done once per pending order.",
        order_id=s_str(_ORDER),
        item_ids=s_arr("Item ids to modify (duplicates allowed)."),
        new_item_ids=s_arr("New item ids, position by position, of the same products."),
        payment_method_id=s_str(_PM),
    )
    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> Any:
        """Swap items, charge or refund the difference, mark the order item-modified."""
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ValueError("Non-pending order cannot be modified")
        present = [it["item_id"] for it in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > present.count(item_id):
                raise ValueError(f"{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("The number of items to be exchanged should match")
        diff: Any = 0
        variant: Any = None
        for item_id, new_id in zip(item_ids, new_item_ids, strict=False):
            if item_id == new_id:
                raise ValueError("The new item id should be different from the old item id")
            item = next((it for it in order["items"] if it["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_id)
            if not variant["available"]:
                raise ValueError(f"New item {new_id} not found or available")
            diff += variant["price"] - item["price"]
        pm = self._payment_method(order["user_id"], payment_method_id)
        if _is_gift(pm) and pm["balance"] < diff:
            raise ValueError("Insufficient gift card balance to pay for the new item")
        order = self.db.write("orders", order_id)
        order["payment_history"].append(
            typed(
                ROrderPayment,
                {
                    "transaction_type": "payment" if diff > 0 else "refund",
                    "amount": abs(diff),
                    "payment_method_id": payment_method_id,
                },
            )
        )
        if _is_gift(pm):
            self._adjust_gift(order["user_id"], payment_method_id, -diff)
        for item_id, new_id in zip(item_ids, new_item_ids, strict=False):
            item = next((it for it in order["items"] if it["item_id"] == item_id), None)
            if item is None:
                raise ValueError(f"Item {item_id} not found")
            # Upstream quirk: the *last* variant of the loop above is used for every item.
            item["item_id"] = new_id
            item["price"] = variant["price"]
            item["options"] = clone(variant["options"])
        order["status"] = "pending (item modified)"
        return order

    @tool(
        "write",
        "Change the payment method of a pending order, after explicit customer confirmation.",
        order_id=s_str(_ORDER),
        payment_method_id=s_str(_PM),
    )
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Any:
        """Pay with a new method and refund the original one."""
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ValueError("Non-pending order cannot be modified")
        pm = self._payment_method(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ValueError("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ValueError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if _is_gift(pm) and pm["balance"] < amount:
            raise ValueError("Insufficient gift card balance to pay for the order")
        order = self.db.write("orders", order_id)
        order["payment_history"].extend(
            [
                typed(
                    ROrderPayment,
                    {
                        "transaction_type": "payment",
                        "amount": amount,
                        "payment_method_id": payment_method_id,
                    },
                ),
                typed(
                    ROrderPayment,
                    {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
                ),
            ]
        )
        if _is_gift(pm):
            self._adjust_gift(order["user_id"], payment_method_id, -amount)
        old_pm = self._payment_method(order["user_id"], old_id)
        if _is_gift(old_pm):
            self._adjust_gift(order["user_id"], old_id, amount)
        return order

    @tool(
        "write",
        "Change a customer's default address, after explicit customer confirmation.",
        user_id=s_str("The user id, such as 'sara_doe_496'."),
        **_ADDR,
    )
    def modify_user_address(
        self,
        user_id: str,
        address1: str,
        address2: str,
        city: str,
        state: str,
        country: str,
        zip: str,
    ) -> Any:
        """Replace the user's default address."""
        self._user(user_id)
        address = typed(
            RAddress,
            {
                "address1": address1,
                "address2": address2,
                "city": city,
                "state": state,
                "country": country,
                "zip": zip,
            },
        )
        user = self.db.write("users", user_id)
        user["address"] = address
        return user

    @tool(
        "write",
        "Request the return of items of a delivered order, after explicit customer "
        "confirmation. The refund goes to the original payment method or a gift card.",
        order_id=s_str(_ORDER),
        item_ids=s_arr("Item ids to return (duplicates allowed)."),
        payment_method_id=s_str(_PM),
    )
    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> Any:
        """Mark items for return."""
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ValueError("Non-delivered order cannot be returned")
        user = self._user(order["user_id"])
        pm = self._payment_method(user["user_id"], payment_method_id)
        if (
            not _is_gift(pm)
            and payment_method_id != order["payment_history"][0]["payment_method_id"]
        ):
            raise ValueError("Payment method should be the original payment method")
        present = [it["item_id"] for it in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > present.count(item_id):
                raise ValueError("Some item not found")
        order = self.db.write("orders", order_id)
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return order
