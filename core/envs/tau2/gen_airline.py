# ruff: noqa: E501  (data tables and templated customer prose)
"""Airline part of the bundled-world generator (flights, users, reservations, tasks)."""

from __future__ import annotations

import random
from typing import Any

from core.envs.tau2.gen_airline_db import (
    CABINS,
    TODAY,
    make_flights,
    make_reservations,
    make_users,
)
from core.envs.tau2.gen_common import Builder
from core.envs.tau2.generate import (
    TONES,
    action,
    task_dict,
)
from core.envs.tau2.schema import AUser, typed

POLICY = """# Airline agent policy (Drift-Bench++ bundled world)

The current time is 2024-05-15 15:00 EST. You are a customer-service agent of an airline. You
can help a customer to book, change or cancel reservations, change bags and passengers, and
compensate them with a travel certificate when the rules allow it.

Rules:

1. Ask for the customer's user id and look the customer up before anything else.
2. Before any change, list what will be done and get an explicit "yes" from the customer.
3. Bookings: every passenger needs first name, last name and date of birth; all flights of a
   reservation share one cabin; each passenger may add travel insurance for 30 dollars; each
   paid bag costs 50 dollars. Payments must come from the customer's profile and add up to
   the total exactly; at most one certificate and one credit card may be combined.
4. Changes: the whole new itinerary must be given; unchanged segments keep their price and
   the difference is paid or refunded with a card or gift card (not a certificate).
5. Cancellations refund every payment of the reservation.
6. Certificates are only offered to customers whose flight was cancelled or delayed, and only
   when they ask for compensation.
7. Do not make up information. Transfer to a human agent only when the request is outside
   these rules and the customer asks for it.
"""


class AirlineTasks(Builder):
    """Builds airline tasks against the generated database."""

    def __init__(self, rng: random.Random, db: dict[str, Any]):
        super().__init__(rng, db, "airline")
        self.flights = db["flights"]

    def known(self, user: Any) -> str:
        """Known info of the customer."""
        return f"You are {user['name']['first_name']} {user['name']['last_name']}. Your user id is {user['user_id']}."

    def card(self, user: Any) -> str:
        """First credit card of a user."""
        return str(
            next(p for p, m in user["payment_methods"].items() if m["source"] == "credit_card")
        )

    def future(self, res: Any) -> bool:
        """All segments bookable (available) and after today."""
        return res.get("status") is None and all(
            s["date"] > TODAY
            and self.flights[s["flight_number"]]["dates"][s["date"]]["status"] == "available"
            for s in res["flights"]
        )

    def build(self) -> list[dict[str, Any]]:
        """Generate the task list (every write tool at least twice)."""
        plan = (
            ["book"] * 3
            + ["cancel"] * 3
            + ["change_flight"] * 2
            + ["change_cabin"] * 2
            + ["bags"] * 2
            + ["passengers"] * 2
            + ["certificate"] * 2
            + ["refusal"]
        )
        for kind in plan:
            getattr(self, f"t_{kind}")(str(len(self.tasks)))
        return self.tasks

    def add(
        self,
        tid: str,
        purpose: str,
        reason: str,
        user: Any,
        acts: list[dict[str, Any]],
        communicate: list[str] | None = None,
    ) -> None:
        """Append a task."""
        self.tasks.append(
            task_dict(
                tid,
                "airline",
                purpose,
                reason,
                self.known(user),
                None,
                self.rng.choice(TONES),
                acts,
                communicate,
            )
        )

    def t_book(self, tid: str) -> None:
        """Book a one-way or round trip, paid by card (sometimes with a certificate)."""
        user = self.pick_fresh(list(self.db["users"].values()), "user_id")
        pax = [
            {
                "first_name": user["name"]["first_name"],
                "last_name": user["name"]["last_name"],
                "dob": user["dob"],
            }
        ]
        pax += user["saved_passengers"][:1]
        cabin = self.rng.choice(CABINS)
        options = []
        for number, f in self.flights.items():
            for date, inst in f["dates"].items():
                if (
                    date > TODAY
                    and inst["status"] == "available"
                    and inst["available_seats"][cabin] >= len(pax)
                ):
                    options.append((number, date))
        number, date = self.pick(sorted(options))
        f = self.flights[number]
        legs = [(number, date)]
        back = sorted(
            (n, d)
            for n, d in options
            if self.flights[n]["origin"] == f["destination"]
            and self.flights[n]["destination"] == f["origin"]
            and d > date
        )
        kind = "one_way"
        if back and self.rng.random() < 0.6:
            legs.append(back[0])
            kind = "round_trip"
        insurance = self.rng.choice(("yes", "no"))
        nonfree = self.rng.randint(0, 1)
        total = sum(self.flights[n]["dates"][d]["prices"][cabin] for n, d in legs) * len(pax)
        total += (30 * len(pax) if insurance == "yes" else 0) + 50 * nonfree
        payments = []
        certs = [
            (p, m)
            for p, m in user["payment_methods"].items()
            if m["source"] == "certificate" and m["amount"] < total
        ]
        if certs:
            cid, cert = certs[0]
            payments.append({"payment_id": cid, "amount": int(cert["amount"])})
        payments.append(
            {"payment_id": self.card(user), "amount": total - sum(p["amount"] for p in payments)}
        )
        acts = [action(tid, 0, "get_user_details", user_id=user["user_id"])]
        for n, d in legs:
            fl = self.flights[n]
            acts.append(
                action(
                    tid,
                    len(acts),
                    "search_direct_flight",
                    origin=fl["origin"],
                    destination=fl["destination"],
                    date=d,
                )
            )
        acts.append(
            action(
                tid,
                len(acts),
                "book_reservation",
                user_id=user["user_id"],
                origin=f["origin"],
                destination=f["destination"],
                flight_type=kind,
                cabin=cabin,
                flights=[{"flight_number": n, "date": d} for n, d in legs],
                passengers=pax,
                payment_methods=payments,
                total_baggages=nonfree + len(pax) // 2,
                nonfree_baggages=nonfree,
                insurance=insurance,
            )
        )
        who = " and ".join(f"{p['first_name']} {p['last_name']} (born {p['dob']})" for p in pax)
        trip = (
            f"a {kind.replace('_', ' ')} from {f['origin']} to {f['destination']} on flight "
            f"{number} leaving {date}"
        )
        if kind == "round_trip":
            trip += f", coming back on flight {legs[1][0]} on {legs[1][1]}"
        self.add(
            tid,
            "Book a reservation.",
            f"You want to book {trip}, in {cabin.replace('_', ' ')}, for {who}. "
            f"You want {'' if insurance == 'yes' else 'no '}insurance and {nonfree} paid bag(s). "
            + (
                "Use your certificate first, then your credit card."
                if certs
                else "Pay with your credit card."
            ),
            user,
            acts,
            communicate=[str(total)],
        )

    def t_cancel(self, tid: str) -> None:
        """Cancel a reservation."""
        res = self.pick_fresh(
            [r for r in self.db["reservations"].values() if r.get("status") is None],
            "reservation_id",
        )
        user = self.db["users"][res["user_id"]]
        acts = [
            action(tid, 0, "get_user_details", user_id=user["user_id"]),
            action(tid, 1, "get_reservation_details", reservation_id=res["reservation_id"]),
            action(tid, 2, "cancel_reservation", reservation_id=res["reservation_id"]),
        ]
        self.add(
            tid,
            "Cancel a reservation.",
            f"Your plans changed and you want to cancel reservation {res['reservation_id']} with a full refund.",
            user,
            acts,
        )

    def _update_flights(self, tid: str, change_cabin: bool) -> None:
        def candidates(res: Any) -> list[tuple[str, list[tuple[str, str]]]]:
            n_pax = len(res["passengers"])
            out = []
            if change_cabin:
                for cabin in CABINS:
                    if cabin != res["cabin"] and all(
                        self.flights[s["flight_number"]]["dates"][s["date"]]["available_seats"][
                            cabin
                        ]
                        >= n_pax
                        for s in res["flights"]
                    ):
                        out.append(
                            (cabin, [(s["flight_number"], s["date"]) for s in res["flights"]])
                        )
            else:
                first = res["flights"][0]
                for date, inst in self.flights[first["flight_number"]]["dates"].items():
                    if (
                        date > TODAY
                        and date != first["date"]
                        and (len(res["flights"]) == 1 or date < res["flights"][1]["date"])
                        and inst["status"] == "available"
                        and inst["available_seats"][res["cabin"]] >= n_pax
                    ):
                        legs = [(first["flight_number"], date)] + [
                            (s["flight_number"], s["date"]) for s in res["flights"][1:]
                        ]
                        out.append((res["cabin"], legs))
            return out

        res = self.pick_fresh(
            [r for r in self.db["reservations"].values() if self.future(r) and candidates(r)],
            "reservation_id",
        )
        cabin, legs = self.rng.choice(candidates(res))
        user = self.db["users"][res["user_id"]]
        acts = [
            action(tid, 0, "get_user_details", user_id=user["user_id"]),
            action(tid, 1, "get_reservation_details", reservation_id=res["reservation_id"]),
            action(
                tid,
                2,
                "update_reservation_flights",
                reservation_id=res["reservation_id"],
                cabin=cabin,
                flights=[{"flight_number": n, "date": d} for n, d in legs],
                payment_id=self.card(user),
            ),
        ]
        if change_cabin:
            reason = f"You want to move reservation {res['reservation_id']} to {cabin.replace('_', ' ')} for all flights."
        else:
            reason = f"You want flight {legs[0][0]} of reservation {res['reservation_id']} moved to {legs[0][1]}; everything else stays."
        self.add(
            tid,
            "Change the flights or cabin of a reservation.",
            reason + " Pay any difference with your credit card.",
            user,
            acts,
        )

    def t_change_flight(self, tid: str) -> None:
        """Move the first segment of a reservation to another date."""
        self._update_flights(tid, change_cabin=False)

    def t_change_cabin(self, tid: str) -> None:
        """Change the cabin of a whole reservation."""
        self._update_flights(tid, change_cabin=True)

    def t_bags(self, tid: str) -> None:
        """Add checked bags."""
        res = self.pick_fresh(
            [r for r in self.db["reservations"].values() if r.get("status") is None],
            "reservation_id",
        )
        user = self.db["users"][res["user_id"]]
        extra = self.rng.randint(1, 2)
        acts = [
            action(tid, 0, "get_reservation_details", reservation_id=res["reservation_id"]),
            action(
                tid,
                1,
                "update_reservation_baggages",
                reservation_id=res["reservation_id"],
                total_baggages=res["total_baggages"] + extra,
                nonfree_baggages=res["nonfree_baggages"] + extra,
                payment_id=self.card(user),
            ),
        ]
        self.add(
            tid,
            "Add checked bags.",
            f"You want to add {extra} checked bag(s) to reservation {res['reservation_id']}, paying with your credit card.",
            user,
            acts,
            communicate=[str(50 * extra)],
        )

    def t_passengers(self, tid: str) -> None:
        """Correct the last passenger of a reservation."""
        res = self.pick_fresh(
            [r for r in self.db["reservations"].values() if r.get("status") is None],
            "reservation_id",
        )
        user = self.db["users"][res["user_id"]]
        pax = [dict(p) for p in res["passengers"]]
        new = {
            "first_name": self.rng.choice(("Gia", "Hal", "Ira", "Jo")),
            "last_name": pax[-1]["last_name"],
            "dob": pax[-1]["dob"],
        }
        pax[-1] = new
        acts = [
            action(tid, 0, "get_reservation_details", reservation_id=res["reservation_id"]),
            action(
                tid,
                1,
                "update_reservation_passengers",
                reservation_id=res["reservation_id"],
                passengers=pax,
            ),
        ]
        self.add(
            tid,
            "Change a passenger.",
            f"On reservation {res['reservation_id']} the passenger {res['passengers'][-1]['first_name']} {new['last_name']} "
            f"is replaced by {new['first_name']} {new['last_name']}, same date of birth {new['dob']}.",
            user,
            acts,
        )

    def t_certificate(self, tid: str) -> None:
        """Compensate a customer whose flight today is delayed."""
        delayed = {n for n, f in self.flights.items() if f["dates"][TODAY]["status"] == "delayed"}
        res = self.pick_fresh(
            [
                r
                for r in self.db["reservations"].values()
                if any(s["flight_number"] in delayed and s["date"] == TODAY for s in r["flights"])
            ]
            or [r for r in self.db["reservations"].values() if r.get("status") is None],
            "reservation_id",
        )
        user = self.db["users"][res["user_id"]]
        amount = 50 * len(res["passengers"])
        acts = [
            action(tid, 0, "get_user_details", user_id=user["user_id"]),
            action(tid, 1, "get_reservation_details", reservation_id=res["reservation_id"]),
            action(tid, 2, "send_certificate", user_id=user["user_id"], amount=amount),
        ]
        self.add(
            tid,
            "Send a compensation certificate.",
            f"Your flight on reservation {res['reservation_id']} was disrupted and you ask for compensation; you accept a ${amount} certificate.",
            user,
            acts,
            communicate=[str(amount)],
        )

    def t_refusal(self, tid: str) -> None:
        """Ask for a refund to which the customer has no right: nothing may change."""
        res = self.pick_fresh(
            [r for r in self.db["reservations"].values() if r.get("status") is None],
            "reservation_id",
        )
        user = self.db["users"][res["user_id"]]
        acts = [action(tid, 0, "get_reservation_details", reservation_id=res["reservation_id"])]
        self.add(
            tid,
            "Refuse an unjustified certificate.",
            f"You want a certificate for reservation {res['reservation_id']} although nothing went wrong. If refused, you end the conversation.",
            user,
            acts,
        )


def build_airline(rng: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return (db, tasks) of a generated airline world."""
    used: set[str] = set()
    flights = make_flights(rng)
    users = make_users(rng, used)
    reservations = make_reservations(rng, users, flights)
    db = {
        "flights": flights,
        "users": {k: typed(AUser, v) for k, v in users.items()},
        "reservations": reservations,
    }
    return db, AirlineTasks(rng, db).build()
