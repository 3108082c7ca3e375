"""Typed records of the τ²-bench Retail and Airline databases.

These pydantic models mirror the *shape and coercions* of τ²-bench's data model (field order,
int/float typing, optional fields defaulting to ``None``, unknown nested keys dropped, unions
resolved by their ``source``/``status`` literal). They are used in two places only:

* at load time, every record of ``db.json`` is validated and dumped back to plain dicts, which
  is exactly the typing τ²-bench applies before it hashes a database;
* inside tools, wherever τ²-bench builds a model from tool arguments (a new reservation, a
  payment, an address …), so that the same coercions and validation errors happen.

Everything else works on the plain dicts.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter


class _Rec(BaseModel):
    """τ²-bench's nested records are plain models: unknown keys are ignored."""

    model_config = ConfigDict(extra="ignore")


# --------------------------------------------------------------------------------------------
# Retail
# --------------------------------------------------------------------------------------------


class RVariant(_Rec):
    """A purchasable item (variant) of a product."""

    model_config = ConfigDict(extra="ignore", title="Variant")

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class RProduct(_Rec):
    """A product type with its variants keyed by item id."""

    model_config = ConfigDict(extra="ignore", title="Product")

    name: str
    product_id: str
    variants: dict[str, RVariant]


class RUserName(_Rec):
    """A retail customer's name."""

    model_config = ConfigDict(extra="ignore", title="UserName")

    first_name: str
    last_name: str


class RAddress(_Rec):
    """A postal address (both lines required in retail)."""

    model_config = ConfigDict(extra="ignore", title="UserAddress")

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class RCreditCard(_Rec):
    """A saved credit card."""

    model_config = ConfigDict(extra="ignore", title="CreditCard")

    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class RPaypal(_Rec):
    """A saved PayPal account."""

    model_config = ConfigDict(extra="ignore", title="Paypal")

    source: Literal["paypal"]
    id: str


class RGiftCard(_Rec):
    """A gift card with a float balance."""

    model_config = ConfigDict(extra="ignore", title="GiftCard")

    source: Literal["gift_card"]
    id: str
    balance: float


RPaymentMethod = RCreditCard | RGiftCard | RPaypal


class RUser(_Rec):
    """A retail customer."""

    model_config = ConfigDict(extra="ignore", title="User")

    user_id: str
    name: RUserName
    address: RAddress
    email: str
    payment_methods: dict[str, RPaymentMethod]
    orders: list[str]


class RFulfillment(_Rec):
    """Shipment tracking for some items of an order."""

    model_config = ConfigDict(extra="ignore", title="OrderFullfilment")

    tracking_id: list[str]
    item_ids: list[str]


class ROrderItem(_Rec):
    """One line of an order."""

    model_config = ConfigDict(extra="ignore", title="OrderItem")

    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class ROrderPayment(_Rec):
    """A payment or refund transaction."""

    model_config = ConfigDict(extra="ignore", title="OrderPayment")

    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]


class ROrder(_Rec):
    """A retail order; the trailing optional fields are present as ``None`` when unset."""

    model_config = ConfigDict(extra="ignore", title="Order")

    order_id: str
    user_id: str
    address: RAddress
    items: list[ROrderItem]
    status: OrderStatus
    fulfillments: list[RFulfillment]
    payment_history: list[ROrderPayment]
    cancel_reason: Literal["no longer needed", "ordered by mistake"] | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


# --------------------------------------------------------------------------------------------
# Airline
# --------------------------------------------------------------------------------------------

CabinClass = Literal["business", "economy", "basic_economy"]


class AName(_Rec):
    """A person's name."""

    model_config = ConfigDict(extra="ignore", title="Name")

    first_name: str
    last_name: str


class AAddress(_Rec):
    """A postal address (second line optional in airline)."""

    model_config = ConfigDict(extra="ignore", title="Address")

    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


class APayment(_Rec):
    """A payment (or negative refund) of a reservation, in whole dollars."""

    model_config = ConfigDict(extra="ignore", title="Payment")

    payment_id: str
    amount: int


class ACreditCard(_Rec):
    """A saved credit card."""

    model_config = ConfigDict(extra="ignore", title="CreditCard")

    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class AGiftCard(_Rec):
    """A gift card with a float amount."""

    model_config = ConfigDict(extra="ignore", title="GiftCard")

    source: Literal["gift_card"]
    id: str
    amount: float


class ACertificate(_Rec):
    """A travel certificate with a float amount (removed when used)."""

    model_config = ConfigDict(extra="ignore", title="Certificate")

    source: Literal["certificate"]
    id: str
    amount: float


APaymentMethod = ACreditCard | AGiftCard | ACertificate


class APassenger(_Rec):
    """A passenger."""

    model_config = ConfigDict(extra="ignore", title="Passenger")

    first_name: str
    last_name: str
    dob: str


class AStatusAvailable(_Rec):
    """A bookable flight date with seats and prices per cabin."""

    model_config = ConfigDict(extra="ignore", title="FlightDateStatusAvailable")

    status: Literal["available"]
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class AStatusLanded(_Rec):
    """A flight date that has landed."""

    model_config = ConfigDict(extra="ignore", title="FlightDateStatusLanded")

    status: Literal["landed"]
    actual_departure_time_est: str
    actual_arrival_time_est: str


class AStatusCancelled(_Rec):
    """A cancelled flight date."""

    model_config = ConfigDict(extra="ignore", title="FlightDateStatusCancelled")

    status: Literal["cancelled"]


class AStatusDelayed(_Rec):
    """A delayed flight date."""

    model_config = ConfigDict(extra="ignore", title="FlightDateStatusDelayed")

    status: Literal["delayed"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class AStatusFlying(_Rec):
    """A flight date currently in the air."""

    model_config = ConfigDict(extra="ignore", title="FlightDataStatusFlying")

    status: Literal["flying"]
    actual_departure_time_est: str
    estimated_arrival_time_est: str


class AStatusOnTime(_Rec):
    """A flight date expected on time."""

    model_config = ConfigDict(extra="ignore", title="FlightDataStatusOnTime")

    status: Literal["on time"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


AFlightDateStatus = (
    AStatusAvailable
    | AStatusLanded
    | AStatusCancelled
    | AStatusDelayed
    | AStatusFlying
    | AStatusOnTime
)


class AFlight(_Rec):
    """A scheduled flight with its status per date."""

    model_config = ConfigDict(extra="ignore", title="Flight")

    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, AFlightDateStatus]


class ADirectFlight(_Rec):
    """A search result (one leg)."""

    model_config = ConfigDict(extra="ignore", title="DirectFlight")

    flight_number: str
    origin: str
    destination: str
    status: Literal["available"]
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None = None
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class AReservationFlight(_Rec):
    """One flown segment of a reservation with the price paid per passenger."""

    model_config = ConfigDict(extra="ignore", title="ReservationFlight")

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


class AFlightInfo(_Rec):
    """A (flight number, date) pair passed to booking/update tools."""

    model_config = ConfigDict(extra="ignore", title="FlightInfo")

    flight_number: str
    date: str


class AUser(_Rec):
    """An airline customer."""

    model_config = ConfigDict(extra="ignore", title="User")

    user_id: str
    name: AName
    address: AAddress
    email: str
    dob: str
    payment_methods: dict[str, APaymentMethod]
    saved_passengers: list[APassenger]
    membership: Literal["gold", "silver", "regular"]
    reservations: list[str]


class AReservation(_Rec):
    """A reservation; ``status`` is ``None`` unless cancelled."""

    model_config = ConfigDict(extra="ignore", title="Reservation")

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: Literal["round_trip", "one_way"]
    cabin: CabinClass
    flights: list[AReservationFlight]
    passengers: list[APassenger]
    payment_history: list[APayment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Literal["yes", "no"]
    status: Literal["cancelled"] | None = None


class AAirportCode(_Rec):
    """An airport listed by ``list_all_airports``."""

    model_config = ConfigDict(extra="ignore", title="AirportCode")

    iata: str
    city: str


# --------------------------------------------------------------------------------------------
# Per-domain collection typing
# --------------------------------------------------------------------------------------------

COLLECTIONS: dict[str, dict[str, type[BaseModel]]] = {
    "retail": {"products": RProduct, "users": RUser, "orders": ROrder},
    "airline": {"flights": AFlight, "users": AUser, "reservations": AReservation},
}
"""Record model of every top-level collection, per domain (τ²'s DB has exactly these keys)."""

_ADAPTERS: dict[type[BaseModel], TypeAdapter[Any]] = {}


def collection_adapter(model: type[BaseModel]) -> TypeAdapter[Any]:
    """Return a cached ``TypeAdapter(dict[str, model])``."""
    ad = _ADAPTERS.get(model)
    if ad is None:
        ad = TypeAdapter(dict[str, model])  # type: ignore[valid-type]
        _ADAPTERS[model] = ad
    return ad


def typed(model: type[BaseModel], data: Any) -> dict[str, Any]:
    """Validate ``data`` as ``model`` (lax, like τ²) and return the plain dump."""
    return model.model_validate(data).model_dump()


__all__ = ["COLLECTIONS", "collection_adapter", "typed"]
