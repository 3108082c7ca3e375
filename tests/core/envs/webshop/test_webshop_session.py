"""The page state machine: every transition, invalid actions and the view models."""

from __future__ import annotations

import pytest

from core.envs.base import EnvSession
from core.envs.webshop.session import ShopSession, parse_action
from core.envs.webshop.views import PageView
from core.envs.webshop.world import WebShopWorld
from core.model.world import EnvAction, Observation


def ok(obs: Observation) -> PageView:
    assert obs.ok, obs.text
    return PageView.model_validate(obs.data)


def bad(obs: Observation, fragment: str) -> PageView:
    assert not obs.ok
    assert fragment in obs.text, obs.text
    page = PageView.model_validate(obs.data)
    assert page.notice is not None
    return page


@pytest.fixture
def s(tiny_world: WebShopWorld) -> ShopSession:
    return tiny_world.open_session(instruction="buy good shoes")


def test_parse_action() -> None:
    assert parse_action("search[red shoes]") == EnvAction(
        tool="search", args={"query": "red shoes"}
    )
    assert parse_action(" CLICK[ Buy Now ] ") == EnvAction(
        tool="click", args={"target": " Buy Now "}
    )
    assert parse_action("search[a [nested] query]") == EnvAction(
        tool="search", args={"query": "a [nested] query"}
    )
    for junk in ("search red", "buy[now]", "click", "", "click[]x"):
        assert parse_action(junk) is None


def test_full_purchase_walk_through_every_page(s: ShopSession) -> None:
    assert isinstance(s, EnvSession)
    page = s.page()
    assert (page.kind, page.can_search, page.clickables, page.instruction) == (
        "search",
        True,
        [],
        "buy good shoes",
    )
    page = ok(s.act_text("search[trail running shoes arch support]"))
    assert page.kind == "results" and page.results is not None
    assert page.results.page == 1 and page.results.total == 27 and page.results.num_pages == 3
    assert page.clickables[:2] == ["back to search", "next >"]
    assert "< prev" not in page.clickables

    page = ok(s.act_text("click[Next >]"))
    assert page.results is not None and page.results.page == 2
    assert page.clickables[:3] == ["back to search", "< prev", "next >"]
    page = ok(s.act_text("click[next >]"))
    assert page.results is not None and page.results.page == 3 and not page.results.has_next
    assert len(page.results.items) == 7
    page = ok(s.act_text("click[< prev]"))
    page = ok(s.act_text("click[< prev]"))
    assert page.results is not None and page.results.page == 1

    target = "B000000001"
    assert target.lower() in page.clickables
    page = ok(s.act_text(f"click[{target}]"))  # ASINs are matched case-insensitively
    assert page.kind == "item" and page.item is not None
    assert [g.name for g in page.item.options] == ["color", "size"]
    assert page.clickables == [
        "back to search", "< prev", "black", "white", "9", "10",
        "description", "features", "reviews", "attributes", "buy now",
    ]  # fmt: skip

    page = ok(s.act_text("click[black]"))
    page = ok(s.act_text("click[10]"))
    assert page.item is not None
    assert {g.name: g.selected for g in page.item.options} == {"color": "black", "size": "10"}
    assert "(selected: black)" in s.act_text("click[black]").text

    for sub in ("description", "features", "reviews", "attributes"):
        page = ok(s.act_text(f"click[{sub.capitalize()}]"))
        assert page.kind == "item_sub_page" and page.sub_page is not None
        assert page.sub_page.name == sub and page.clickables == ["back to search", "< prev"]
        page = ok(s.act_text("click[< prev]"))
        assert page.kind == "item"
    assert s.options == {"color": "black", "size": "10"}  # sub-pages keep the choice

    page = ok(s.act_text("click[< prev]"))  # item → results, same page
    assert page.kind == "results" and page.results is not None and page.results.page == 1
    page = ok(s.act_text(f"click[{target}]"))
    assert page.item is not None and all(g.selected is None for g in page.item.options)
    ok(s.act_text("click[black]"))
    assert s.proposal() is None
    page = ok(s.act_text("click[buy now]"))
    assert page.kind == "done" and page.purchase is not None
    assert page.purchase.reward is None  # no goal given → no score shown
    assert s.proposal() == {"asin": target, "options": {"color": "black"}, "price": 40.0}
    page = ok(s.act_text("click[back to search]"))  # extension: shop again
    assert page.kind == "search" and s.proposal() is None
    assert page.instruction == "buy good shoes"


def test_sub_page_contents(tiny_world: WebShopWorld) -> None:
    s = tiny_world.open_session()
    ok(s.act_text("search[zest lemon shampoo]"))
    ok(s.act_text("click[b000000005]"))
    lines = {}
    for sub in ("description", "features", "reviews", "attributes"):
        page = ok(s.act_text(f"click[{sub}]"))
        assert page.sub_page is not None
        lines[sub] = page.sub_page.lines
        ok(s.act_text("click[< prev]"))
    assert lines == {
        "description": ["Lemon scented shampoo for shiny hair."],
        "features": ["Sulfate free formula", "Second bullet mentions unicorns"],
        "reviews": [],
        "attributes": ["sulfate free"],
    }


def test_back_to_search_from_every_page(tiny_world: WebShopWorld) -> None:
    prefixes = [
        ["search[shoes]"],
        ["search[shoes arch support]", "click[b000000001]"],
        ["search[shoes arch support]", "click[b000000001]", "click[features]"],
        ["search[shoes arch support]", "click[b000000001]", "click[buy now]"],
    ]
    for actions in prefixes:
        s = tiny_world.open_session()
        for a in actions:
            ok(s.act_text(a))
        assert ok(s.act_text("click[back to search]")).kind == "search"
        assert s.proposal() is None


def test_invalid_actions_are_reported_and_change_nothing(s: ShopSession) -> None:
    bad(s.act_text("click[buy now]"), "nothing to click on the search page")
    bad(s.act_text("search[   ]"), "empty search")
    bad(s.act_text("purchase everything"), "cannot parse")
    bad(s.act(EnvAction(tool="fly", args={})), "unknown tool 'fly'")
    bad(s.act(EnvAction(tool="search", args={})), "needs a string argument 'query'")
    bad(s.act(EnvAction(tool="search", args={"query": 3})), "needs a string argument 'query'")
    assert s.page().kind == "search"

    ok(s.act_text("search[running shoes arch support]"))
    before = s.page().model_copy(update={"notice": None})
    page = bad(s.act_text("search[other]"), "search is only available on the search page")
    assert "click[back to search]" in page.notice if page.notice else False
    bad(s.act_text("click[< prev]"), "not clickable")  # page 1 has no prev
    bad(s.act_text("click[B000000005]"), "not clickable")  # not on this page
    bad(s.act(EnvAction(tool="click", args={"target": None})), "'target'")
    bad(s.act_text("click[buy now]"), "not clickable")
    assert s.page().model_copy(update={"notice": None}) == before

    ok(s.act_text("click[b000000001]"))
    bad(s.act_text("click[purple]"), "'purple' is not clickable")
    bad(s.act_text("click[next >]"), "not clickable")
    assert s.options == {} and s.proposal() is None
    # the next valid action clears the notice
    assert ok(s.act_text("click[white]")).notice is None


def test_last_page_has_no_next(tiny_world: WebShopWorld) -> None:
    s = tiny_world.open_session()
    ok(s.act_text("search[shoes]"))
    ok(s.act_text("click[next >]"))
    ok(s.act_text("click[next >]"))
    bad(s.act_text("click[next >]"), "not clickable")


def test_search_without_hits_shows_empty_results(tiny_world: WebShopWorld) -> None:
    s = tiny_world.open_session()
    obs = s.act_text("search[xylophone]")
    page = ok(obs)
    assert page.results is not None and page.results.total == 0 and page.results.items == []
    assert "No products match" in obs.text and page.clickables == ["back to search"]


def test_text_observation_lists_clickables(tiny_world: WebShopWorld) -> None:
    s = tiny_world.open_session(instruction="find shoes")
    assert s.act_text("search[trail running shoes arch support]").text.startswith(
        "Instruction:\nfind shoes\n[Back to Search]\n"
        "Page 1 (Total results: 27)\n[Next >]\n[B000000001]"
    )
    text = s.act_text("click[b000000001]").text
    assert "color: [black] [white]" in text and "Price: $40.00" in text and "[Buy Now]" in text


def test_done_page_reports_reward_only_with_goal(tiny_world: WebShopWorld) -> None:
    goal = tiny_world.goal("g0")
    s = tiny_world.open_session(instruction=goal.instruction_text, goal=goal)
    for a in ("search[arch support]", "click[b000000001]", "click[black]", "click[10]"):
        ok(s.act_text(a))
    obs = s.act_text("click[buy now]")
    page = ok(obs)
    assert page.purchase is not None and page.purchase.reward == pytest.approx(1.0)
    assert "Your score (min 0.0, max 1.0): 1.000" in obs.text


def test_sessions_are_independent(tiny_world: WebShopWorld) -> None:
    a, b = tiny_world.open_session(), tiny_world.open_session()
    ok(a.act_text("search[shoes]"))
    assert b.page().kind == "search"
