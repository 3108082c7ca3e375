"""Real-browser tests: a person plays the agent with the tools as a person uses them.

* τ² Retail: a two-item exchange done by a person who reads every id they need (the order's
  item ids, the products' variant ids, the customer's payment method) from the full tool
  result on the page — nothing typed from the store. The test process opens the store only
  to pick a sample and, as an oracle, to know which of the shown ids the customer wants.
* WebShop: a purchase made by clicking the product's title on the result list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from core.engine import episode
from core.protocol.shifts import draw_fates
from core.runner.plan import SampleSource
from core.store import Store
from tests.e2e.conftest import screenshot, wait_for_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def store(studio_home: Path) -> Iterator[Store]:
    s = Store.open(studio_home / "driftbench.db")
    yield s
    s.close()


def _no_shift_seed(store: Store, benchmark: str, sample_id: str) -> int:
    graph_id = SampleSource(store).sample(benchmark, sample_id).graph_id
    return next(s for s in range(50) if not draw_fates(f"{graph_id}:{sample_id}:{s}", 1, 0.6)[0])


def _start(tab: Any, url: str, benchmark: str, sample_id: str, seed: int) -> str:
    query = urlencode(
        {"benchmark": benchmark, "sample": sample_id, "persona": "rational", "seed": seed}
    )
    tab.goto(f"{url}/play_agent?{query}")
    wait_for_app(tab)
    tab.get_by_role("button", name="Start episode", exact=True).click()
    tab.wait_for_url(re.compile(r".*[?&]episode=\w+"))
    eid = parse_qs(urlparse(tab.url).query)["episode"][0]
    tab.get_by_text(f"Episode {eid}").wait_for()
    return eid


def _turn_is(tab: Any, turn: int) -> None:
    tab.get_by_test_id("stMetricValue").first.filter(has_text=re.compile(rf"^{turn}$")).wait_for()


def _two_item_exchange(store: Store) -> tuple[str, dict[str, Any]]:
    """A τ² retail sample whose task exchanges two items, and its exchange arguments."""
    source = SampleSource(store)
    for row in store.sample_rows("tau2_retail"):
        sample = source.sample("tau2_retail", row["sample_id"])
        root = source.graph("tau2_retail", sample.graph_id).node(sample.root_intent_id)
        args = {
            c.slot.rsplit(":", 1)[-1]: json.loads(str(c.value))
            for c in root.conditions
            if ":exchange_delivered_order_items:" in c.slot
        }
        if len(args.get("item_ids", [])) == 2 and len(root.conditions) == len(args):
            return row["sample_id"], args
    raise AssertionError("no two-item exchange sample in the store")


def _call(tab: Any, tool: str, **fields: str) -> None:
    """Pick a tool, fill its form like a person, call it and wait for its result."""
    before = tab.get_by_test_id("stMetricValue").first.inner_text()
    picker = tab.get_by_test_id("stSelectbox").filter(has_text="Tool").first
    picker.click()
    tab.keyboard.type(tool)  # the list is long: type to narrow it, as a person would
    tab.get_by_role("option", name=re.compile(rf"^{tool} \(")).wait_for()
    tab.keyboard.press("Enter")
    tab.wait_for_function(
        "(t) => Array.from(document.querySelectorAll('[data-testid=stSelectbox] input'))"
        ".some(i => i.value.startsWith(t + ' ('))",
        arg=tool,
    )
    wait_for_app(tab)
    form = tab.get_by_test_id("stForm").filter(has=tab.get_by_role("button", name="Call tool"))
    for name, value in fields.items():
        word = name.replace("_", r"\\?_")  # a label escapes repeated underscores
        box = form.get_by_label(re.compile(rf"^{word}( \(required\))?( \(one per line\))?$"))
        box.fill(value)
    tab.get_by_role("button", name="Call tool", exact=True).click()
    _turn_is(tab, int(before) + 1)
    tab.locator(".st-key-play_agent_last_result").get_by_text(
        re.compile(rf"\(turn {int(before) + 1}\)")
    ).wait_for()


def _ids_on_page(tab: Any) -> dict[str, str]:
    """The last result's ids as the page shows them: path → value (its IDs tab)."""
    box = tab.locator(".st-key-play_agent_last_result")
    box.get_by_role("tab", name=re.compile(r"^IDs")).click()
    panel = box.get_by_role("tabpanel")
    panel.locator("code").first.wait_for()
    paths = panel.get_by_test_id("stCaptionContainer").all_inner_texts()
    values = panel.locator("code").all_inner_texts()
    assert len(paths) == len(values) and paths
    return {p.strip(): v.strip() for p, v in zip(paths, values, strict=True)}


def test_a_person_exchanges_two_items_with_ids_read_from_the_results(
    studio_url: str, store: Store, tab: Any
) -> None:
    sid, want = _two_item_exchange(store)
    eid = _start(tab, studio_url, "tau2_retail", sid, _no_shift_seed(store, "tau2_retail", sid))
    _call(tab, "get_order_details", order_id=want["order_id"])
    order = _ids_on_page(tab)
    items = {v: k for k, v in order.items() if re.fullmatch(r"items\[\d+\]\.item_id", k)}
    assert len(items) >= 2, "every item of the order is listed, none cut"
    old = [i for i in items if i in want["item_ids"]]
    assert sorted(old) == sorted(want["item_ids"])  # both ids were readable on the page
    new_ids: list[str] = []
    for item in old:
        product = order[items[item].replace("item_id", "product_id")]
        _call(tab, "get_product_details", product_id=product)
        variants = set(_ids_on_page(tab).values())
        new_ids += [n for n in want["new_item_ids"] if n in variants and n not in new_ids]
    assert sorted(new_ids) == sorted(want["new_item_ids"])
    _call(tab, "get_user_details", user_id=order["user_id"])
    methods = set(_ids_on_page(tab).values())
    assert want["payment_method_id"] in methods
    _call(
        tab,
        "exchange_delivered_order_items",
        order_id=order["order_id"],
        item_ids="\n".join(old),
        new_item_ids="\n".join(new_ids),
        payment_method_id=want["payment_method_id"],
    )
    screenshot(tab, "play_agent_exchange")
    tab.get_by_label("Your final answer").fill("done")
    tab.get_by_role("button", name="Give final answer", exact=True).click()
    tab.get_by_text("the user accepted your answer").wait_for()
    assert episode.agent_view(store, eid).outcome.value == "SUCCESS"  # type: ignore[union-attr]


def test_a_shop_purchase_by_clicking_the_product_title(
    studio_url: str, store: Store, tab: Any
) -> None:
    sid = store.sample_rows("webshop")[7]["sample_id"]
    eid = _start(tab, studio_url, "webshop", sid, _no_shift_seed(store, "webshop", sid))
    truth = episode.truth(store, eid)  # test-only: what to buy
    shop = tab.locator(".st-key-play_agent_shop")
    turn = 0
    for action in truth.world.compile_intent(truth.current_intent()):
        if action.tool == "search":
            tab.get_by_label("Search the shop").fill(action.args["query"])
            tab.get_by_role("button", name="Search", exact=True).click()
            shop.get_by_text(re.compile(r"Total results: \d+")).wait_for()
        else:
            target = str(action.args["target"])
            product = truth.world.catalogue.get(target)
            if product is not None:  # a product: its title on the result list is the link
                shop.get_by_role("button", name=product.title, exact=True).first.click()
                shop.get_by_role("heading", name=product.title).wait_for()
                assert shop.get_by_text(re.compile(r"Rating:")).count()
            elif target == "buy now":
                tab.get_by_role("button", name="Buy Now").click()
            elif target == "next >":
                tab.get_by_role("button", name="Next >", exact=True).click()
            else:  # an option value
                tab.get_by_role(
                    "button", name=re.compile(rf"^{re.escape(target)}$", re.I)
                ).first.click()
        turn += 1
        _turn_is(tab, turn)
    tab.get_by_text("You bought:").wait_for()
    if not episode.agent_view(store, eid).ended:
        tab.get_by_label("Your final answer").fill("my purchase")
        tab.get_by_role("button", name="Give final answer", exact=True).click()
    tab.get_by_text("the user accepted your answer").wait_for()
    assert episode.agent_view(store, eid).outcome.value == "SUCCESS"  # type: ignore[union-attr]
