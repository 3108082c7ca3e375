"""τ²-bench Airline tool table.

Same names, arguments, checks (in the same order), effects and error messages as τ²-bench's
``AirlineTools``; models are built (with pydantic's coercions and errors) exactly where
τ²-bench builds them, and raw arguments are stored exactly where τ²-bench stores them raw.

Fixed clock and id sequences: ``created_at`` is always ``2024-05-15T15:00:00``; new
reservations take the first free id of ``HATHAT``/``HATHAU``/``HATHAV``; certificates the first
free of ``certificate_3221322``/``…323``/``…324``.

Upstream quirks reproduced on purpose:

* ``cancel_reservation`` and ``update_reservation_flights`` do not release or take seats; only
  ``book_reservation`` decrements seat inventory. No policy rule (24 h, insurance, membership)
  is enforced by any tool.
* ``search_onestop_flight`` builds the next-day date as ``f"2024-05-{int(day) + 1}"`` (no zero
  padding, so an overnight first leg before the 9th finds no second leg) and compares
  ``leave_after`` as a string.
* ``update_reservation_baggages`` stores the raw bag counts (``2.0`` stays a float); the bag
  fee in ``book_reservation`` uses the raw ``nonfree_baggages`` too.
* Certificates used in a booking are removed whatever their remaining value; gift cards are
  debited without rounding.
* Lookups by id are exact (no case folding).
"""

from __future__ import annotations

from typing import Any, ClassVar

from core.envs.tau2.schema import (
    AAirportCode,
    ACertificate,
    ADirectFlight,
    AFlightInfo,
    APassenger,
    APayment,
    AReservation,
    AReservationFlight,
    typed,
)
from core.envs.tau2.toolkit import Toolkit, s_arr, s_int, s_obj, s_str, tool

NOW = "2024-05-15T15:00:00"
"""τ²-bench's fixed current time."""

RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
"""Ids given to new reservations, first free one wins."""

CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
"""Ids given to new certificates, first free one wins."""

AIRPORTS = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)
"""The hard-coded airport list of ``list_all_airports``."""

_RES = "The reservation id, such as 'ZFA04Y'."
_PAY = (
    "A payment id stored in the user's profile, such as 'credit_card_7815826', "
    "'gift_card_7815826' or 'certificate_7815826'."
)
_FLIGHT_ITEMS = {
    "type": "object",
    "properties": {
        "flight_number": {"type": "string", "description": "Flight number, such as 'HAT001'."},
        "date": {"type": "string", "description": "Date as 'YYYY-MM-DD'."},
    },
    "required": ["flight_number", "date"],
}
_PASSENGER_ITEMS = s_obj(
    "A passenger.",
    {"first_name": "First name.", "last_name": "Last name.", "dob": "Date of birth 'YYYY-MM-DD'."},
)
_PAYMENT_ITEMS = s_obj(
    "A payment.",
    {"payment_id": "Payment method id.", "amount": "Amount in dollars."},
    {"amount": "integer"},
)


def _models(items: Any, model: type[Any]) -> Any:
    """Build models from a list when every element is a dict (τ²'s conversion rule)."""
    if all(isinstance(x, dict) for x in items):
        return [model(**x) for x in items]
    return items


def _dump(x: Any) -> Any:
    return x.model_dump() if hasattr(x, "model_dump") else x


class AirlineTools(Toolkit):
    """All tools of the airline domain."""

    domain: ClassVar[str] = "airline"

    def _user(self, user_id: str) -> Any:
        if not self.db.has("users", user_id):
            raise ValueError(f"User {user_id} not found")
        return self.db.get("users", user_id)

    def _reservation(self, reservation_id: str) -> Any:
        if not self.db.has("reservations", reservation_id):
            raise ValueError(f"Reservation {reservation_id} not found")
        return self.db.get("reservations", reservation_id)

    def _flight(self, flight_number: str) -> Any:
        if not self.db.has("flights", flight_number):
            raise ValueError(f"Flight {flight_number} not found")
        return self.db.get("flights", flight_number)

    def _flight_instance(self, flight_number: str, date: str) -> Any:
        flight = self._flight(flight_number)
        if date not in flight["dates"]:
            raise ValueError(f"Flight {flight_number} not found on date {date}")
        return flight["dates"][date]

    def _new_reservation_id(self) -> str:
        for rid in RESERVATION_IDS:
            if not self.db.has("reservations", rid):
                return rid
        raise ValueError("Too many reservations")

    def _search_direct(
        self,
        date: str,
        origin: str | None = None,
        destination: str | None = None,
        leave_after: str | None = None,
    ) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for _, f in self.db.items("flights"):
            if (
                (origin is None or f["origin"] == origin)
                and (destination is None or f["destination"] == destination)
                and date in f["dates"]
                and f["dates"][date]["status"] == "available"
                and (leave_after is None or f["scheduled_departure_time_est"] >= leave_after)
            ):
                inst = f["dates"][date]
                out.append(
                    typed(
                        ADirectFlight,
                        {
                            "flight_number": f["flight_number"],
                            "origin": f["origin"],
                            "destination": f["destination"],
                            "status": "available",
                            "scheduled_departure_time_est": f["scheduled_departure_time_est"],
                            "scheduled_arrival_time_est": f["scheduled_arrival_time_est"],
                            "available_seats": inst["available_seats"],
                            "prices": inst["prices"],
                        },
                    )
                )
        return out

    def _payment_for_update(self, user_id: str, payment_id: str, total: Any) -> Any:
        user = self.db.get("users", user_id)
        if payment_id not in user["payment_methods"]:
            raise ValueError("Payment method not found")
        pm = user["payment_methods"][payment_id]
        if pm["source"] == "certificate":
            raise ValueError("Certificate cannot be used to update reservation")
        if pm["source"] == "gift_card" and pm["amount"] < total:
            raise ValueError("Gift card balance is not enough")
        if pm["source"] == "gift_card":
            self.db.write("users", user_id)["payment_methods"][payment_id]["amount"] -= total
        if total != 0:
            return typed(APayment, {"payment_id": payment_id, "amount": total})
        return None

    # ---- read tools --------------------------------------------------------------------

    @tool(
        "read",
        "Get a customer's details, including their reservations and payment methods.",
        user_id=s_str("The user id, such as 'sara_doe_496'."),
    )
    def get_user_details(self, user_id: str) -> Any:
        """Return the user record."""
        return self._user(user_id)

    @tool(
        "read",
        "Get the details of a reservation.",
        reservation_id=s_str("The reservation id, such as '8JX2WO'."),
    )
    def get_reservation_details(self, reservation_id: str) -> Any:
        """Return the reservation record."""
        return self._reservation(reservation_id)

    @tool("read", "List all airports (IATA code and city).")
    def list_all_airports(self) -> Any:
        """Return the fixed airport list."""
        return [typed(AAirportCode, {"iata": i, "city": c}) for i, c in AIRPORTS]

    @tool(
        "read",
        "Search direct flights between two airports on a date (bookable dates only).",
        origin=s_str("Origin airport IATA code, such as 'JFK'."),
        destination=s_str("Destination airport IATA code, such as 'LAX'."),
        date=s_str("Date as 'YYYY-MM-DD', such as '2024-05-20'."),
    )
    def search_direct_flight(self, origin: str, destination: str, date: str) -> Any:
        """Return the available direct flights with seats and prices."""
        return self._search_direct(date=date, origin=origin, destination=destination)

    @tool(
        "read",
        "Search one-stop itineraries between two airports on a date.",
        origin=s_str("Origin airport IATA code, such as 'JFK'."),
        destination=s_str("Destination airport IATA code, such as 'LAX'."),
        date=s_str("Date as 'YYYY-MM-DD', such as '2024-05-20'."),
    )
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> Any:
        """Return pairs of legs; the second leaves after the first arrives."""
        results: list[list[dict[str, Any]]] = []
        for first in self._search_direct(date=date, origin=origin, destination=None):
            first["date"] = date
            date2 = (
                f"2024-05-{int(date[-2:]) + 1}"
                if "+1" in first["scheduled_arrival_time_est"]
                else date
            )
            for second in self._search_direct(
                date=date2,
                origin=first["destination"],
                destination=destination,
                leave_after=first["scheduled_arrival_time_est"],
            ):
                second["date"] = date2
                results.append([first, second])
        return results

    @tool(
        "read",
        "Get the status of a flight on a date.",
        flight_number=s_str("The flight number, such as 'HAT001'."),
        date=s_str("Date as 'YYYY-MM-DD'."),
    )
    def get_flight_status(self, flight_number: str, date: str) -> Any:
        """Return the status string of a flight date."""
        return self._flight_instance(flight_number, date)["status"]

    # ---- write tools -------------------------------------------------------------------

    @tool(
        "write",
        "Book a reservation. The payments must add up exactly to the total price "
        "(fares x passengers + 30 per passenger for insurance + 50 per non-free bag).",
        user_id=s_str("The user id, such as 'sara_doe_496'."),
        origin=s_str("Trip origin IATA code, such as 'SFO'."),
        destination=s_str("Trip destination IATA code, such as 'JFK'."),
        flight_type=s_str("'one_way' or 'round_trip'."),
        cabin=s_str("'basic_economy', 'economy' or 'business'."),
        flights=s_arr("Every flight segment of the trip.", _FLIGHT_ITEMS),
        passengers=s_arr("Every passenger.", _PASSENGER_ITEMS),
        payment_methods=s_arr("Payments, each from the user's profile.", _PAYMENT_ITEMS),
        total_baggages=s_int("Total number of checked bags."),
        nonfree_baggages=s_int("Number of paid checked bags."),
        insurance=s_str("'yes' or 'no'."),
    )
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: str,
        cabin: str,
        flights: list[Any],
        passengers: list[Any],
        payment_methods: list[Any],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: str,
    ) -> Any:
        """Create a reservation, take payment and decrement seats."""
        flights = _models(flights, AFlightInfo)
        passengers = _models(passengers, APassenger)
        payment_methods = _models(payment_methods, APayment)
        user = self._user(user_id)
        reservation_id = self._new_reservation_id()
        reservation = typed(
            AReservation,
            {
                "reservation_id": reservation_id,
                "user_id": user_id,
                "origin": origin,
                "destination": destination,
                "flight_type": flight_type,
                "cabin": cabin,
                "flights": [],
                "passengers": [_dump(p) for p in passengers],
                "payment_history": [_dump(p) for p in payment_methods],
                "created_at": NOW,
                "total_baggages": total_baggages,
                "nonfree_baggages": nonfree_baggages,
                "insurance": insurance,
            },
        )
        total_price: Any = 0
        booked: list[tuple[str, str]] = []
        for info in flights:
            flight = self._flight(info.flight_number)
            inst = self._flight_instance(info.flight_number, info.date)
            if inst["status"] != "available":
                raise ValueError(f"Flight {info.flight_number} not available on date {info.date}")
            if inst["available_seats"][cabin] < len(passengers):
                raise ValueError(f"Not enough seats on flight {info.flight_number}")
            price = inst["prices"][cabin]
            reservation["flights"].append(
                typed(
                    AReservationFlight,
                    {
                        "origin": flight["origin"],
                        "destination": flight["destination"],
                        "flight_number": info.flight_number,
                        "date": info.date,
                        "price": price,
                    },
                )
            )
            booked.append((info.flight_number, info.date))
            total_price += price * len(passengers)
        if insurance == "yes":
            total_price += 30 * len(passengers)
        total_price += 50 * nonfree_baggages
        for pay in payment_methods:
            if pay.payment_id not in user["payment_methods"]:
                raise ValueError(f"Payment method {pay.payment_id} not found")
            method = user["payment_methods"][pay.payment_id]
            if method["source"] in {"gift_card", "certificate"} and method["amount"] < pay.amount:
                raise ValueError(f"Not enough balance in payment method {pay.payment_id}")
        total_payment = sum(pay.amount for pay in payment_methods)
        if total_payment != total_price:
            raise ValueError(
                f"Payment amount does not add up, total price is {total_price}, "
                f"but paid {total_payment}"
            )
        for pay in payment_methods:
            methods = self.db.write("users", user_id)["payment_methods"]
            method = methods[pay.payment_id]
            if method["source"] == "gift_card":
                method["amount"] -= pay.amount
            elif method["source"] == "certificate":
                methods.pop(pay.payment_id)
        for number, date in booked:
            self.db.write("flights", number)["dates"][date]["available_seats"][cabin] -= len(
                passengers
            )
        self.db.put("reservations", reservation_id, reservation)
        self.db.write("users", user_id)["reservations"].append(reservation_id)
        return reservation

    @tool(
        "write",
        "Cancel a whole reservation; every payment is refunded.",
        reservation_id=s_str(_RES),
    )
    def cancel_reservation(self, reservation_id: str) -> Any:
        """Append negated payments and mark the reservation cancelled (seats not released)."""
        self._reservation(reservation_id)
        res = self.db.write("reservations", reservation_id)
        refunds = [
            typed(APayment, {"payment_id": p["payment_id"], "amount": -p["amount"]})
            for p in res["payment_history"]
        ]
        res["payment_history"].extend(refunds)
        res["status"] = "cancelled"
        return res

    @tool(
        "write",
        "Update the checked bags of a reservation; extra non-free bags cost 50 each.",
        reservation_id=s_str(_RES),
        total_baggages=s_int("The new total number of checked bags."),
        nonfree_baggages=s_int("The new number of paid checked bags."),
        payment_id=s_str(_PAY),
    )
    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> Any:
        """Charge for added paid bags and store the new counts."""
        res = self._reservation(reservation_id)
        self._user(res["user_id"])
        total_price = 50 * max(0, nonfree_baggages - res["nonfree_baggages"])
        payment = self._payment_for_update(res["user_id"], payment_id, total_price)
        res = self.db.write("reservations", reservation_id)
        if payment is not None:
            res["payment_history"].append(payment)
        res["total_baggages"] = total_baggages
        res["nonfree_baggages"] = nonfree_baggages
        return res

    @tool(
        "write",
        "Update the flights (and cabin) of a reservation. List the ENTIRE new itinerary, "
        "unchanged segments included; unchanged segments keep their price.",
        reservation_id=s_str(_RES),
        cabin=s_str("The cabin class of the whole reservation."),
        flights=s_arr("Every flight segment of the new itinerary.", _FLIGHT_ITEMS),
        payment_id=s_str(_PAY),
    )
    def update_reservation_flights(
        self, reservation_id: str, cabin: str, flights: list[Any], payment_id: str
    ) -> Any:
        """Replace the itinerary, charge or refund the fare difference."""
        flights = _models(flights, AFlightInfo)
        res = self._reservation(reservation_id)
        self._user(res["user_id"])
        n_pax = len(res["passengers"])
        total_price: Any = 0
        new_flights: list[Any] = []
        for info in flights:
            flight = self._flight(info.flight_number)
            kept = next(
                (
                    rf
                    for rf in res["flights"]
                    if rf["flight_number"] == info.flight_number
                    and rf["date"] == info.date
                    and cabin == res["cabin"]
                ),
                None,
            )
            if kept is not None:
                total_price += kept["price"] * n_pax
                new_flights.append(kept)
                continue
            inst = self._flight_instance(info.flight_number, info.date)
            if inst["status"] != "available":
                raise ValueError(f"Flight {info.flight_number} not available on date {info.date}")
            if inst["available_seats"][cabin] < n_pax:
                raise ValueError(f"Not enough seats on flight {info.flight_number}")
            seg = typed(
                AReservationFlight,
                {
                    "flight_number": info.flight_number,
                    "date": info.date,
                    "price": inst["prices"][cabin],
                    "origin": flight["origin"],
                    "destination": flight["destination"],
                },
            )
            total_price += seg["price"] * n_pax
            new_flights.append(seg)
        total_price -= sum(f["price"] for f in res["flights"]) * n_pax
        payment = self._payment_for_update(res["user_id"], payment_id, total_price)
        res = self.db.write("reservations", reservation_id)
        if payment is not None:
            res["payment_history"].append(payment)
        res["flights"] = [dict(f) for f in new_flights]
        res["cabin"] = cabin
        return res

    @tool(
        "write",
        "Update the passengers of a reservation (the number of passengers cannot change).",
        reservation_id=s_str(_RES),
        passengers=s_arr("Every passenger, in order.", _PASSENGER_ITEMS),
    )
    def update_reservation_passengers(self, reservation_id: str, passengers: list[Any]) -> Any:
        """Replace the passenger list."""
        passengers = _models(passengers, APassenger)
        res = self._reservation(reservation_id)
        if len(passengers) != len(res["passengers"]):
            raise ValueError("Number of passengers does not match")
        res = self.db.write("reservations", reservation_id)
        res["passengers"] = [_dump(p) for p in passengers]
        return res

    @tool(
        "write",
        "Send a travel certificate of some amount to a user. Be careful!",
        user_id=s_str("The user id, such as 'sara_doe_496'."),
        amount=s_int("The certificate amount in dollars."),
    )
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Add a certificate with the next free id."""
        self._user(user_id)
        for cid in CERTIFICATE_IDS:
            methods = self.db.get("users", user_id)["payment_methods"]
            if cid not in methods:
                cert = typed(ACertificate, {"id": cid, "amount": amount, "source": "certificate"})
                self.db.write("users", user_id)["payment_methods"][cid] = cert
                return f"Certificate {cid} added to user {user_id} with amount {amount}."
        raise ValueError("Too many certificates")
