"""A tool result shown in full: fields, tables, every id with its path, pretty JSON."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from core.studio.tool_results import full_result

ORDER = {
    "order_id": "#W5221233",
    "user_id": "sam_haddad_9977",
    "address": {"city": "Boston", "zip": "02699"},
    "items": [
        {
            "name": "Bluetooth Speaker",
            "item_id": "1312126707",
            "options": {"color": "black", "battery life": "10 hours"},
            "price": 108.29,
        },
        {"name": "Backpack", "item_id": "1527296669", "options": {"size": "large"}, "price": 72.46},
    ],
    "payment_history": [{"amount": 244.23, "payment_method_id": "credit_card_9780997"}],
}


def test_an_order_keeps_every_item_and_every_id() -> None:
    r = full_result(json.dumps(ORDER))
    paths = {i.path: i.value for i in r.ids}
    assert paths["items[1].item_id"] == "1527296669"  # the second item's id is reachable
    assert paths["payment_history[0].payment_method_id"] == "credit_card_9780997"
    items = next(t for t in r.tables if t.path == "items")
    assert items.columns == ("name", "item_id", "options", "price")
    assert [row[1] for row in items.rows] == ["1312126707", "1527296669"]
    assert ("address", "city: Boston, zip: 02699") in {(f.name, f.value) for f in r.fields}
    assert json.loads(r.json_text or "") == ORDER


def test_a_long_value_is_never_cut() -> None:
    long = "x" * 5000
    r = full_result(json.dumps({"note": long, "rows": [{"text": long}]}))
    assert r.fields[0].value == long
    assert r.tables[0].rows[0][0] == long


def test_objects_keyed_by_id_become_a_table_and_their_keys_ids() -> None:
    product = {
        "product_id": "6086499569",
        "variants": {
            "1008292230": {"item_id": "1008292230", "options": {"color": "red"}, "price": 10},
            "4920090458": {"item_id": "4920090458", "options": {"color": "blue"}, "price": 12},
        },
    }
    r = full_result(json.dumps(product))
    table = next(t for t in r.tables if t.path == "variants")
    assert table.columns[0] == "id" and [row[0] for row in table.rows] == [
        "1008292230",
        "4920090458",
    ]
    assert {"1008292230", "4920090458", "6086499569"} <= {i.value for i in r.ids}


def test_text_results_stay_text_and_list_the_ids_they_mention() -> None:
    r = full_result("Error: order #W0000000 not found")
    assert r.json_text is None and r.text.startswith("Error")
    assert [i.value for i in r.ids] == ["#W0000000"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_any_json_result_reads_without_error_and_round_trips(value: object) -> None:
    r = full_result(json.dumps(value))
    assert json.loads(r.json_text or "null") == value
    words: set[str] = set()

    def collect(v: object) -> None:
        if isinstance(v, dict):
            words.update(str(k) for k in v)
            for x in v.values():
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)
        else:
            words.add(str(v))

    collect(value)
    for ref in r.ids:  # every id listed is a key or a value of the result
        assert ref.value in words
