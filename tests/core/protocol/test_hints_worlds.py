"""Each world's "what is unmet" hook: plain problems, specific only when the slot is known."""

from __future__ import annotations

import json

from interp_help import find, slot_of, with_arg

from core.envs.registry import load_world
from core.model.world import EnvAction


def _buy(world, asin: str, options: dict[str, str]):
    s = world.open_session()
    p = world.catalogue.get(asin)
    s.act(EnvAction(tool="search", args={"query": p.title}))
    s.act(EnvAction(tool="click", args={"target": asin.lower()}))
    for v in options.values():
        s.act(EnvAction(tool="click", args={"target": v}))
    s.act(EnvAction(tool="click", args={"target": "buy now"}))
    return s


def test_webshop_wrong_colour_and_over_budget():
    w = load_world("webshop")

    def ok(it):
        return (
            any(c.slot.startswith("option:") and w.option_name(c) == "color" for c in it.conditions)
            and w.execute(it).value
        )

    it = find("webshop", ok)
    asin, pairs = json.loads(w.execute(it).value[0])
    opts = dict(pairs)
    product = w.catalogue.get(asin)
    name = next(
        k for k, v in opts.items() if k == "color" or w.catalogue.option_name_of(v) == "color"
    )
    other = next(v for v in product.options[name] if v != opts[name])
    s = _buy(w, asin, {**opts, name: other})
    texts = [p.text for p in w.unmet_problems(it, s)]
    assert "it's the wrong colour" in texts
    assert all(opts[name] not in t for t in texts)
    assert w.unmet_problems(it, w.open_session())[0].text == "you haven't bought anything yet"


def test_webshop_budget_problem():
    w = load_world("webshop")
    it = find("webshop", lambda x: any(c.slot == "price_upper" for c in x.conditions))
    cap = float(it.slot_map()["price_upper"].value)
    cluster = w.catalogue.clusters[it.env_id]
    pricey = next((p for p in cluster if p.price > cap), None)
    if pricey is None:
        return
    s = _buy(w, pricey.asin, {})
    probs = w.unmet_problems(it, s)
    assert any(p.text == "that's over my budget" and p.slots == ("price_upper",) for p in probs)
    assert all(str(int(cap)) not in p.text for p in probs)


def test_tau2_exchange_not_done_names_items_only_when_known():
    w = load_world("tau2_retail")
    it = with_arg("tau2_retail", "new_item_ids", tool="exchange_delivered_order_items")
    probs = w.unmet_problems(it, w.open_session())
    # the intent may hold other writes too (a pivot root): pick the exchange's problem
    exchange = [p for p in probs if "exchange" in p.text]
    assert exchange and exchange[0].text == "the exchange still isn't done"
    assert exchange[0].known_text.startswith("the exchange still isn't done for the ")
    assert slot_of(it, "item_ids") in exchange[0].slots


def test_tau2_wrong_argument_is_named():
    from core.envs.tau2 import adapter

    w = load_world("tau2_retail")
    it = with_arg("tau2_retail", "reason", tool="cancel_pending_order")
    g = next(x for x in adapter.compile_intent(it) if x.tool == "cancel_pending_order")
    other = "no longer needed" if g.args["reason"] != "no longer needed" else "ordered by mistake"
    s = w.open_session(it.base)
    s.act(EnvAction(tool=g.tool, args={**g.args, "reason": other}))
    probs = w.unmet_problems(it, s)
    reason = [p for p in probs if p.text == "the reason isn't right"]
    assert reason and reason[0].slots == (slot_of(it, "reason"),)


def test_airline_not_done():
    w = load_world("tau2_airline")
    it = with_arg("tau2_airline", "total_baggages")
    texts = [p.text for p in w.unmet_problems(it, w.open_session())]
    assert texts and all("_" not in t and "arg:" not in t for t in texts)
