# ruff: noqa: E501  (literal fixture data and exact expected messages)
"""Every airline tool: success effects and error paths, on the tiny fixture world."""

from __future__ import annotations

from typing import Any

from core.envs.tau2 import Tau2World
from core.envs.tau2.db import naive_hash
from core.model.world import EnvAction


def call(session: Any, tool: str, **args: Any) -> Any:
    return session.act(EnvAction(tool=tool, args=args))


def err(session: Any, tool: str, **args: Any) -> str:
    obs = call(session, tool, **args)
    assert not obs.ok, obs.text
    return str(obs.text)


PAX = [{"first_name": "Amy", "last_name": "Wu", "dob": "1990-01-01"}]


def book(**over: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "user_id": "amy_wu_1",
        "origin": "JFK",
        "destination": "LAX",
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}],
        "passengers": PAX,
        "payment_methods": [{"payment_id": "credit_card_7", "amount": 280}],
        "total_baggages": 2,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    args.update(over)
    return args


def test_typing(airline: Tau2World) -> None:
    user = airline.base.records["users"]["amy_wu_1"]
    assert user["address"]["address2"] is None
    assert user["payment_methods"]["certificate_7"]["amount"] == 150.0
    assert isinstance(user["payment_methods"]["gift_card_7"]["amount"], float)
    assert airline.base.records["reservations"]["ABC123"]["status"] is None


def test_reads(airline: Tau2World) -> None:
    s = airline.open_session()
    assert call(s, "get_user_details", user_id="amy_wu_1").data["membership"] == "gold"
    assert err(s, "get_user_details", user_id="Amy_Wu_1") == "Error: User Amy_Wu_1 not found"
    assert call(s, "get_reservation_details", reservation_id="ABC123").data["cabin"] == "economy"
    assert (
        err(s, "get_reservation_details", reservation_id="abc123")
        == "Error: Reservation abc123 not found"
    )
    airports = call(s, "list_all_airports").data
    assert len(airports) == 20 and airports[0] == {"iata": "SFO", "city": "San Francisco"}
    assert (
        call(s, "get_flight_status", flight_number="HAT001", date="2024-05-21").text == "cancelled"
    )
    assert err(s, "get_flight_status", flight_number="HAT001", date="2024-05-30") == (
        "Error: Flight HAT001 not found on date 2024-05-30"
    )
    assert (
        err(s, "get_flight_status", flight_number="HAT999", date="2024-05-20")
        == "Error: Flight HAT999 not found"
    )
    direct = call(
        s, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-20"
    ).data
    assert [d["flight_number"] for d in direct] == ["HAT001"]
    assert direct[0]["date"] is None and direct[0]["prices"]["economy"] == 200
    assert (
        call(s, "search_direct_flight", origin="JFK", destination="LAX", date="2024-05-21").data
        == []
    )


def test_onestop_search_and_padding_quirk(airline: Tau2World) -> None:
    s = airline.open_session()
    pairs = call(
        s, "search_onestop_flight", origin="JFK", destination="LAX", date="2024-05-20"
    ).data
    assert [[a["flight_number"], a["date"], b["flight_number"], b["date"]] for a, b in pairs] == [
        ["HAT003", "2024-05-20", "HAT004", "2024-05-21"]
    ]
    # next day of 2024-05-05 is built as "2024-05-6": no second leg although 2024-05-06 exists
    assert (
        call(s, "search_onestop_flight", origin="JFK", destination="LAX", date="2024-05-05").data
        == []
    )


def test_book_reservation(airline: Tau2World) -> None:
    s = airline.open_session()
    obs = call(s, "book_reservation", **book())
    assert obs.ok, obs.text
    r = obs.data
    assert r["reservation_id"] == "HATHAT" and r["created_at"] == "2024-05-15T15:00:00"
    assert r["flights"] == [
        {
            "flight_number": "HAT001",
            "origin": "JFK",
            "destination": "LAX",
            "date": "2024-05-20",
            "price": 200,
        }
    ]
    assert r["status"] is None
    assert (
        s.state.get("flights", "HAT001")["dates"]["2024-05-20"]["available_seats"]["economy"] == 1
    )
    assert s.state.get("users", "amy_wu_1")["reservations"][-1] == "HATHAT"
    # second booking takes the next id; certificate removed, gift card debited (no rounding)
    obs2 = call(
        s,
        "book_reservation",
        **book(
            cabin="business",
            insurance="no",
            nonfree_baggages=0,
            payment_methods=[
                {"payment_id": "certificate_7", "amount": 100},
                {"payment_id": "gift_card_7", "amount": 99},
                {"payment_id": "credit_card_7", "amount": 301},
            ],
        ),
    )
    assert obs2.ok, obs2.text and obs2.data["reservation_id"] == "HATHAU"
    methods = s.state.get("users", "amy_wu_1")["payment_methods"]
    assert "certificate_7" not in methods and methods["gift_card_7"]["amount"] == 1.0
    assert s.state_hash() == naive_hash(s.state.materialize())


def test_book_reservation_errors(airline: Tau2World) -> None:
    s = airline.open_session()
    assert err(s, "book_reservation", **book(user_id="nobody")) == "Error: User nobody not found"
    assert "validation error for Reservation" in err(s, "book_reservation", **book(cabin="first"))
    assert "validation error for FlightInfo" in err(
        s, "book_reservation", **book(flights=[{"flight_number": "HAT001"}])
    )
    assert (
        err(
            s,
            "book_reservation",
            **book(flights=[{"flight_number": "HAT009", "date": "2024-05-20"}]),
        )
        == "Error: Flight HAT009 not found"
    )
    assert err(
        s, "book_reservation", **book(flights=[{"flight_number": "HAT001", "date": "2024-05-10"}])
    ) == ("Error: Flight HAT001 not available on date 2024-05-10")
    assert (
        err(s, "book_reservation", **book(cabin="business", passengers=PAX * 2))
        == "Error: Not enough seats on flight HAT001"
    )
    assert err(
        s,
        "book_reservation",
        **book(payment_methods=[{"payment_id": "credit_card_0", "amount": 280}]),
    ) == ("Error: Payment method credit_card_0 not found")
    assert err(
        s,
        "book_reservation",
        **book(payment_methods=[{"payment_id": "gift_card_7", "amount": 280}]),
    ) == ("Error: Not enough balance in payment method gift_card_7")
    assert err(
        s,
        "book_reservation",
        **book(payment_methods=[{"payment_id": "credit_card_7", "amount": 279}]),
    ) == ("Error: Payment amount does not add up, total price is 280, but paid 279")
    assert s.state_hash() == airline.state_hash()  # all checks happen before any mutation


def test_too_many_reservations(airline: Tau2World) -> None:
    s = airline.open_session()
    for _ in range(3):
        assert call(
            s,
            "book_reservation",
            **book(
                cabin="basic_economy",
                insurance="no",
                nonfree_baggages=0,
                payment_methods=[{"payment_id": "credit_card_7", "amount": 100}],
            ),
        ).ok
    assert err(s, "book_reservation", **book()) == "Error: Too many reservations"


def test_cancel_reservation(airline: Tau2World) -> None:
    s = airline.open_session()
    assert (
        err(s, "cancel_reservation", reservation_id="NOPE") == "Error: Reservation NOPE not found"
    )
    obs = call(s, "cancel_reservation", reservation_id="ABC123")
    assert obs.ok and obs.data["status"] == "cancelled"
    assert obs.data["payment_history"] == [
        {"payment_id": "credit_card_7", "amount": 180},
        {"payment_id": "credit_card_7", "amount": -180},
    ]
    # quirk: seats are not released
    assert s.state.get("flights", "HAT001") is airline.base.records["flights"]["HAT001"]


def test_update_reservation_baggages(airline: Tau2World) -> None:
    s = airline.open_session()
    assert err(
        s,
        "update_reservation_baggages",
        reservation_id="X",
        total_baggages=1,
        nonfree_baggages=0,
        payment_id="credit_card_7",
    ) == ("Error: Reservation X not found")
    assert err(
        s,
        "update_reservation_baggages",
        reservation_id="ABC123",
        total_baggages=3,
        nonfree_baggages=2,
        payment_id="cc",
    ) == ("Error: Payment method not found")
    assert err(
        s,
        "update_reservation_baggages",
        reservation_id="ABC123",
        total_baggages=3,
        nonfree_baggages=2,
        payment_id="certificate_7",
    ) == ("Error: Certificate cannot be used to update reservation")
    assert err(
        s,
        "update_reservation_baggages",
        reservation_id="ABC123",
        total_baggages=5,
        nonfree_baggages=3,
        payment_id="gift_card_7",
    ) == ("Error: Gift card balance is not enough")
    obs = call(
        s,
        "update_reservation_baggages",
        reservation_id="ABC123",
        total_baggages=3,
        nonfree_baggages=2.0,
        payment_id="gift_card_7",
    )
    assert obs.ok
    assert obs.data["payment_history"][-1] == {"payment_id": "gift_card_7", "amount": 100}
    assert obs.data["nonfree_baggages"] == 2.0 and isinstance(
        obs.data["nonfree_baggages"], float
    )  # raw arg stored
    assert s.state.get("users", "amy_wu_1")["payment_methods"]["gift_card_7"]["amount"] == 0.0
    # fewer bags: no payment entry
    n = len(s.state.get("reservations", "ABC123")["payment_history"])
    assert call(
        s,
        "update_reservation_baggages",
        reservation_id="ABC123",
        total_baggages=1,
        nonfree_baggages=0,
        payment_id="credit_card_7",
    ).ok
    assert len(s.state.get("reservations", "ABC123")["payment_history"]) == n


def test_update_reservation_flights(airline: Tau2World) -> None:
    s = airline.open_session()
    legs = [
        {"flight_number": "HAT001", "date": "2024-05-20"},
        {"flight_number": "HAT002", "date": "2024-05-20"},
    ]
    assert err(
        s,
        "update_reservation_flights",
        reservation_id="DEF456",
        cabin="basic_economy",
        flights=[{"flight_number": "HAT001", "date": "2024-05-21"}],
        payment_id="credit_card_7",
    ) == ("Error: Flight HAT001 not available on date 2024-05-21")
    assert err(
        s,
        "update_reservation_flights",
        reservation_id="DEF456",
        cabin="business",
        flights=legs,
        payment_id="credit_card_7",
    ) == ("Error: Not enough seats on flight HAT001")
    obs = call(
        s,
        "update_reservation_flights",
        reservation_id="DEF456",
        cabin="basic_economy",
        flights=legs,
        payment_id="credit_card_7",
    )
    assert obs.ok
    # unchanged HAT001 keeps its old price 90; new HAT002 on 05-20 costs 90: diff = (90+90-90-95)*2 = -10
    assert [f["price"] for f in obs.data["flights"]] == [90, 90]
    assert obs.data["payment_history"][-1] == {"payment_id": "credit_card_7", "amount": -10}
    # quirk: no seat inventory change
    assert s.state.get("flights", "HAT002") is airline.base.records["flights"]["HAT002"]
    s2 = airline.open_session()
    obs = call(
        s2,
        "update_reservation_flights",
        reservation_id="ABC123",
        cabin="basic_economy",
        flights=[{"flight_number": "HAT001", "date": "2024-05-20"}],
        payment_id="gift_card_7",
    )
    assert (
        obs.ok and obs.data["cabin"] == "basic_economy" and obs.data["flights"][0]["price"] == 100
    )
    assert (
        s2.state.get("users", "amy_wu_1")["payment_methods"]["gift_card_7"]["amount"] == 180.0
    )  # refund credited


def test_update_reservation_passengers(airline: Tau2World) -> None:
    s = airline.open_session()
    assert err(s, "update_reservation_passengers", reservation_id="ABC123", passengers=PAX * 2) == (
        "Error: Number of passengers does not match"
    )
    assert "validation errors for Passenger" in err(
        s,
        "update_reservation_passengers",
        reservation_id="ABC123",
        passengers=[{"first_name": "A"}],
    )
    new = [{"first_name": "Zoe", "last_name": "Wu", "dob": "2000-01-01", "extra": "ignored"}]
    obs = call(s, "update_reservation_passengers", reservation_id="ABC123", passengers=new)
    assert obs.ok and obs.data["passengers"] == [
        {"first_name": "Zoe", "last_name": "Wu", "dob": "2000-01-01"}
    ]


def test_send_certificate(airline: Tau2World) -> None:
    s = airline.open_session()
    assert err(s, "send_certificate", user_id="nobody", amount=10) == "Error: User nobody not found"
    texts = [call(s, "send_certificate", user_id="amy_wu_1", amount=100).text for _ in range(3)]
    assert texts[0] == "Certificate certificate_3221322 added to user amy_wu_1 with amount 100."
    assert texts[2].startswith("Certificate certificate_3221324")
    assert (
        err(s, "send_certificate", user_id="amy_wu_1", amount=1) == "Error: Too many certificates"
    )
    cert = s.state.get("users", "amy_wu_1")["payment_methods"]["certificate_3221322"]
    assert cert == {"source": "certificate", "id": "certificate_3221322", "amount": 100.0}
