# ruff: noqa: E501  (data tables and templated customer prose)
"""Airline database of the bundled-world generator: flights, users and their reservations.

The draws are seeded by the caller's RNG in a fixed order (flights, users, reservations), so
the bundled airline world, and its hash, are the same on every run. The tasks written over
this database are :mod:`core.envs.tau2.gen_airline`.
"""

from __future__ import annotations

import random
from typing import Any

from core.envs.tau2.generate import (
    address,
    customers,
    unique,
)
from core.envs.tau2.schema import AFlight, AReservation, typed

AIRPORTS = ("JFK", "LAX", "ORD", "SFO", "SEA", "BOS", "ATL", "DEN", "MIA", "PHX")


DATES = [f"2024-05-{d:02d}" for d in range(1, 31)]


TODAY = "2024-05-15"


CABINS = ("basic_economy", "economy", "business")


N_USERS = 30


def clock(h: int, m: int) -> str:
    """``HH:MM:00``."""
    return f"{h:02d}:{m:02d}:00"


def make_flights(rng: random.Random) -> dict[str, Any]:
    """Twelve routes of flights over May 2024, with each date's status and prices."""
    routes: list[tuple[str, str]] = []
    while len(routes) < 12:
        a, b = rng.sample(AIRPORTS, 2)
        if (a, b) not in routes:
            routes += [(a, b), (b, a)]
    flights: dict[str, Any] = {}
    for k, (origin, dest) in enumerate(routes):
        number = f"HAT{k * 7 + 3:03d}"
        dep_h, dep_m = rng.randint(5, 21), rng.choice((0, 15, 30, 45))
        dur = rng.randint(1, 6)
        arr_h = dep_h + dur
        arrival = clock(arr_h % 24, dep_m) + ("+1" if arr_h >= 24 else "")
        base = {"basic_economy": rng.randint(50, 100), "economy": rng.randint(110, 200)}
        base["business"] = rng.randint(250, 500)
        dates: dict[str, Any] = {}
        for date in DATES:
            if date < TODAY:
                if rng.random() < 0.1:
                    dates[date] = {"status": "cancelled"}
                else:
                    dates[date] = {
                        "status": "landed",
                        "actual_departure_time_est": f"{date}T{clock(dep_h, dep_m)}",
                        "actual_arrival_time_est": f"{date}T{clock(arr_h % 24, dep_m)}",
                    }
            elif date == TODAY:
                dates[date] = rng.choice(
                    (
                        {
                            "status": "on time",
                            "estimated_departure_time_est": f"{date}T{clock(dep_h, dep_m)}",
                            "estimated_arrival_time_est": f"{date}T{clock(arr_h % 24, dep_m)}",
                        },
                        {
                            "status": "delayed",
                            "estimated_departure_time_est": f"{date}T{clock((dep_h + 2) % 24, dep_m)}",
                            "estimated_arrival_time_est": f"{date}T{clock((arr_h + 2) % 24, dep_m)}",
                        },
                    )
                )
            elif rng.random() < 0.06:
                dates[date] = {"status": "cancelled"}
            else:
                dates[date] = {
                    "status": "available",
                    "available_seats": {c: rng.randint(0, 20) for c in CABINS},
                    "prices": {c: int(base[c] * rng.uniform(0.8, 1.3)) for c in CABINS},
                }
        flights[number] = typed(
            AFlight,
            {
                "flight_number": number,
                "origin": origin,
                "destination": dest,
                "scheduled_departure_time_est": clock(dep_h, dep_m),
                "scheduled_arrival_time_est": arrival,
                "dates": dates,
            },
        )
    return flights


def make_users(rng: random.Random, used: set[str]) -> dict[str, Any]:
    """The customers, their payment methods and saved passengers."""
    users: dict[str, Any] = {}
    for first, last, uid, methods in customers(rng, N_USERS, used):
        if rng.random() < 0.5:
            gid = unique(rng, 7, used, "gift_card_")
            methods[gid] = {"source": "gift_card", "id": gid, "amount": rng.randint(0, 300)}
        if rng.random() < 0.5:
            xid = unique(rng, 7, used, "certificate_")
            methods[xid] = {
                "source": "certificate",
                "id": xid,
                "amount": rng.choice((100, 150, 250, 500)),
            }
        passengers = [
            {
                "first_name": rng.choice(("Ava", "Ben", "Cleo", "Dev", "Eli", "Fay")),
                "last_name": rng.choice(("Stone", "Reed", "Hale", "Cruz")),
                "dob": f"{rng.randint(1950, 2010)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            }
            for _ in range(rng.randint(0, 2))
        ]
        users[uid] = {
            "user_id": uid,
            "name": {"first_name": first, "last_name": last},
            "address": address(rng, optional_line2=True),
            "email": f"{first.lower()}.{last.lower()}{rng.randint(1000, 9999)}@example.com",
            "dob": f"{rng.randint(1950, 2000)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "payment_methods": methods,
            "saved_passengers": passengers,
            "membership": rng.choice(("gold", "silver", "regular")),
            "reservations": [],
        }
    return users


def flight_price(flight: Any, date: str, cabin: str, rng: random.Random) -> int:
    """A seat's price on ``date`` in ``cabin``."""
    inst = flight["dates"][date]
    if inst["status"] == "available":
        return int(inst["prices"][cabin])
    return {"basic_economy": 80, "economy": 150, "business": 380}[cabin] + rng.randint(-20, 20)


def make_reservations(
    rng: random.Random, users: dict[str, Any], flights: dict[str, Any]
) -> dict[str, Any]:
    """Each customer's reservations over ``flights`` (linked into the user records)."""
    by_route: dict[tuple[str, str], list[str]] = {}
    for number, f in flights.items():
        by_route.setdefault((f["origin"], f["destination"]), []).append(number)
    routes = sorted(by_route)
    used: set[str] = set()
    out: dict[str, Any] = {}
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    for uid, user in users.items():
        for _ in range(rng.randint(1, 3)):
            while True:
                rid = "".join(rng.choice(alphabet) for _ in range(6))
                if rid not in used and not rid.startswith("HATHA"):
                    used.add(rid)
                    break
            origin, dest = rng.choice(routes)
            cabin = rng.choice(CABINS)
            kind = rng.choice(("one_way", "round_trip"))
            day = rng.randint(3, 27)
            legs = [(rng.choice(by_route[(origin, dest)]), DATES[day - 1])]
            if kind == "round_trip":
                legs.append(
                    (
                        rng.choice(by_route[(dest, origin)]),
                        DATES[min(day + rng.randint(1, 3), 30) - 1],
                    )
                )
            segs = [
                {
                    "flight_number": n,
                    "origin": flights[n]["origin"],
                    "destination": flights[n]["destination"],
                    "date": d,
                    "price": flight_price(flights[n], d, cabin, rng),
                }
                for n, d in legs
            ]
            pax = [
                {
                    "first_name": user["name"]["first_name"],
                    "last_name": user["name"]["last_name"],
                    "dob": user["dob"],
                }
            ]
            pax += user["saved_passengers"][: rng.randint(0, len(user["saved_passengers"]))]
            insurance = rng.choice(("yes", "no"))
            bags = rng.randint(0, len(pax) * 2)
            nonfree = rng.randint(0, bags)
            total = sum(s["price"] for s in segs) * len(pax) + 50 * nonfree
            total += 30 * len(pax) if insurance == "yes" else 0
            card = next(
                p for p, m in user["payment_methods"].items() if m["source"] == "credit_card"
            )
            out[rid] = typed(
                AReservation,
                {
                    "reservation_id": rid,
                    "user_id": uid,
                    "origin": origin,
                    "destination": dest,
                    "flight_type": kind,
                    "cabin": cabin,
                    "flights": segs,
                    "passengers": pax,
                    "payment_history": [{"payment_id": card, "amount": total}],
                    "created_at": f"2024-05-{rng.randint(1, 14):02d}T{clock(rng.randint(0, 23), rng.randint(0, 59))}",
                    "total_baggages": bags,
                    "nonfree_baggages": nonfree,
                    "insurance": insurance,
                },
            )
            user["reservations"].append(rid)
    return out
