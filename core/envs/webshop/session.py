"""The shop's page state machine: search → results → item (→ sub-pages) → Buy Now.

Actions are WebShop's ``search[...]`` and ``click[...]``; click targets are compared
lower-cased against the current page's clickables (``back to search``, ``next >``,
``< prev``, product ASINs, option values, ``description``, ``features``, ``reviews``,
``attributes``, ``buy now``). Unlike WebShop, an invalid action is not a silent no-op: the
observation has ``ok=False`` and says why (the page does not change). One extension: the done
page offers ``back to search`` so that an agent whose purchase was rejected can shop again;
leaving the done page withdraws the purchase.
"""

from __future__ import annotations

import re
from typing import Any

from core.envs.webshop.catalogue import CatalogueLike, page_count
from core.envs.webshop.models import GoalSpec, Product
from core.envs.webshop.reward import get_reward
from core.envs.webshop.search import PAGE_SIZE
from core.envs.webshop.text import format_price
from core.envs.webshop.views import (
    ItemView,
    OptionGroup,
    PageKind,
    PageView,
    PurchaseView,
    ResultItem,
    ResultsView,
    SubPage,
    SubPageView,
)
from core.model.world import EnvAction, Observation

BACK_TO_SEARCH = "back to search"
NEXT_PAGE = "next >"
PREV_PAGE = "< prev"
BUY_NOW = "buy now"
SUB_PAGES: tuple[SubPage, ...] = ("description", "features", "reviews", "attributes")

_ACTION = re.compile(r"^\s*(search|click)\s*\[(.*)\]\s*$", re.IGNORECASE | re.DOTALL)


def parse_action(text: str) -> EnvAction | None:
    """Parse a WebShop action string into an :class:`EnvAction` (None if malformed).

    >>> parse_action("search[red shoes]")
    EnvAction(tool='search', args={'query': 'red shoes'})
    >>> parse_action("Click[Buy Now]").args
    {'target': 'Buy Now'}
    """
    m = _ACTION.match(text)
    if m is None:
        return None
    name, arg = m.group(1).lower(), m.group(2)
    if name == "search":
        return EnvAction(tool="search", args={"query": arg})
    return EnvAction(tool="click", args={"target": arg})


class ShopSession:
    """One shopper's browsing state over a shared :class:`Catalogue`."""

    def __init__(
        self, catalogue: CatalogueLike, instruction: str | None = None, goal: GoalSpec | None = None
    ) -> None:
        """Open on the search page.

        Args:
            catalogue: The world's catalogue.
            instruction: Text shown on every page (WebShop shows the goal instruction; the
                Drift-Bench++ episode shows nothing or the user's request).
            goal: When given, the done page reports the reward against it (play / golden).
        """
        self._cat = catalogue
        self.instruction = instruction
        self.goal = goal
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Return to the search page and forget everything (including a purchase)."""
        self.kind: PageKind = "search"
        self.keywords = ""
        self.hits: list[str] = []
        self.page_no = 1
        self.asin: str | None = None
        self.options: dict[str, str] = {}
        self.sub_page: SubPage | None = None
        self.purchase: dict[str, Any] | None = None
        self.notice: str | None = None
        self.steps = 0

    def _product(self) -> Product:
        assert self.asin is not None
        return self._cat.by_asin[self.asin]

    def _page_asins(self) -> list[str]:
        start = (self.page_no - 1) * PAGE_SIZE
        return self.hits[start : start + PAGE_SIZE]

    def clickables(self) -> list[str]:
        """Return the lower-cased click targets valid on the current page."""
        if self.kind == "search":
            return []
        if self.kind == "results":
            out = [BACK_TO_SEARCH]
            if self.page_no > 1:
                out.append(PREV_PAGE)
            if self.page_no < page_count(len(self.hits)):
                out.append(NEXT_PAGE)
            return out + [a.lower() for a in self._page_asins()]
        if self.kind == "item":
            values: list[str] = []
            for vals in self._product().options.values():
                values.extend(v for v in vals if v not in values)
            return [BACK_TO_SEARCH, PREV_PAGE, *values, *SUB_PAGES, BUY_NOW]
        if self.kind == "item_sub_page":
            return [BACK_TO_SEARCH, PREV_PAGE]
        return [BACK_TO_SEARCH]

    # ---------------------------------------------------------------- actions
    def act(self, action: EnvAction) -> Observation:
        """Apply one ``search``/``click`` action; never raises."""
        self.steps += 1
        try:
            if action.tool == "search":
                query = action.args.get("query")
                if not isinstance(query, str):
                    return self._invalid("search needs a string argument 'query'")
                return self._search(query)
            if action.tool == "click":
                target = action.args.get("target")
                if not isinstance(target, str):
                    return self._invalid("click needs a string argument 'target'")
                return self._click(target)
            return self._invalid(f"unknown tool '{action.tool}' (use search or click)")
        except Exception as exc:  # pragma: no cover - defensive: a session must never raise
            return self._invalid(f"internal error: {exc}")

    def act_text(self, text: str) -> Observation:
        """Apply a WebShop action string such as ``search[red shoes]`` or ``click[buy now]``."""
        action = parse_action(text)
        if action is None:
            self.steps += 1
            return self._invalid(f"cannot parse {text!r}; use search[keywords] or click[target]")
        return self.act(action)

    def _invalid(self, reason: str) -> Observation:
        self.notice = reason
        page = self.page()
        valid = (
            "search[...]" if page.can_search else ", ".join(f"click[{c}]" for c in page.clickables)
        )
        text = f"Invalid action: {reason}.\nValid actions here: {valid}"
        return Observation(ok=False, text=text, data=page.model_dump(mode="json"))

    def _ok(self) -> Observation:
        self.notice = None
        page = self.page()
        return Observation(ok=True, text=render_text(page), data=page.model_dump(mode="json"))

    def _search(self, query: str) -> Observation:
        if self.kind != "search":
            return self._invalid(
                "search is only available on the search page; click[back to search] first"
            )
        if not query.strip():
            return self._invalid("empty search")
        self.keywords = query.strip()
        self.hits = self._cat.search(self.keywords)
        self.page_no = 1
        self.kind = "results"
        return self._ok()

    def _click(self, raw: str) -> Observation:
        target = raw.strip().lower()
        if self.kind == "search":
            return self._invalid("nothing to click on the search page; use search[keywords]")
        if target not in self.clickables():
            return self._invalid(f"'{target}' is not clickable on this page")
        if target == BACK_TO_SEARCH:
            self.reset_to_search()
        elif self.kind == "results":
            if target == NEXT_PAGE:
                self.page_no += 1
            elif target == PREV_PAGE:
                self.page_no -= 1
            else:
                product = self._cat.get(target)
                assert product is not None
                self.asin, self.options, self.kind = product.asin, {}, "item"
        elif self.kind == "item":
            self._click_item(target)
        elif self.kind == "item_sub_page":
            self.kind, self.sub_page = "item", None
        return self._ok()

    def _click_item(self, target: str) -> None:
        product = self._product()
        if target == PREV_PAGE:
            self.kind, self.asin, self.options = "results", None, {}
        elif target in SUB_PAGES:
            self.kind = "item_sub_page"
            self.sub_page = next(s for s in SUB_PAGES if s == target)
        elif target == BUY_NOW:
            self.kind = "done"
            self.purchase = {
                "asin": product.asin,
                "options": dict(self.options),
                "price": product.price,
            }
        else:
            name = next(n for n, vals in product.options.items() if target in vals)
            self.options[name] = target

    def reset_to_search(self) -> None:
        """Go back to the search page, keeping the instruction (withdraws any purchase)."""
        instruction, goal = self.instruction, self.goal
        self.reset()
        self.instruction, self.goal = instruction, goal

    def proposal(self) -> dict[str, Any] | None:
        """Return ``{"asin", "options", "price"}`` after Buy Now, else None."""
        if self.purchase is None:
            return None
        return {
            "asin": self.purchase["asin"],
            "options": dict(self.purchase["options"]),
            "price": self.purchase["price"],
        }

    # ------------------------------------------------------------------ views
    def page(self) -> PageView:
        """Return the typed view model of the current page."""
        results: ResultsView | None = None
        item: ItemView | None = None
        sub: SubPageView | None = None
        purchase: PurchaseView | None = None
        if self.kind == "results":
            page_items = [self._cat.by_asin[a] for a in self._page_asins()]
            results = ResultsView(
                keywords=self.keywords,
                page=self.page_no,
                total=len(self.hits),
                num_pages=page_count(len(self.hits)),
                items=[
                    ResultItem(
                        asin=p.asin,
                        title=p.title,
                        price=p.price,
                        price_text=_price_tag(p),
                        rating=rating_text(p),
                    )
                    for p in page_items
                ],
                has_prev=self.page_no > 1,
                has_next=self.page_no < page_count(len(self.hits)),
            )
        if self.kind in ("item", "item_sub_page"):
            p = self._product()
            item = ItemView(
                asin=p.asin,
                title=p.title,
                price=p.price,
                price_text=_price_tag(p),
                rating=rating_text(p),
                category=p.category,
                product_category=p.product_category,
                options=[
                    OptionGroup(name=n, values=list(v), selected=self.options.get(n))
                    for n, v in p.options.items()
                ],
            )
            if self.kind == "item_sub_page" and self.sub_page is not None:
                sub = SubPageView(name=self.sub_page, lines=_sub_page_lines(p, self.sub_page))
        if self.kind == "done" and self.purchase is not None:
            p = self._cat.by_asin[self.purchase["asin"]]
            reward = None
            if self.goal is not None:
                reward = get_reward(p, self.goal, self.purchase["options"]).reward
            purchase = PurchaseView(
                asin=p.asin,
                title=p.title,
                options=dict(self.purchase["options"]),
                price=p.price,
                reward=reward,
            )
        return PageView(
            kind=self.kind,
            instruction=self.instruction,
            clickables=self.clickables(),
            can_search=self.kind == "search",
            results=results,
            item=item,
            sub_page=sub,
            purchase=purchase,
            notice=self.notice,
        )


def rating_text(p: Product) -> str:
    """A product's rating as the shop shows it (``4.3``; ``N.A.`` when unknown)."""
    return "N.A." if p.rating is None else f"{p.rating:.1f}"


def _price_tag(p: Product) -> str:
    return p.price_text or format_price(p.price)


def _sub_page_lines(p: Product, name: SubPage) -> list[str]:
    if name == "description":
        return [p.description] if p.description else []
    if name == "features":
        return list(p.bullet_points)
    if name == "attributes":
        return list(p.attributes)
    return []


def render_text(page: PageView) -> str:
    """Render a page as agent-visible text; clickables appear in ``[brackets]``."""
    lines: list[str] = []
    if page.instruction:
        lines += ["Instruction:", page.instruction]
    if page.kind == "search":
        lines.append("[Search]")
    elif page.kind == "results" and page.results is not None:
        r = page.results
        lines += ["[Back to Search]", f"Page {r.page} (Total results: {r.total})"]
        if r.has_prev:
            lines.append("[< Prev]")
        if r.has_next:
            lines.append("[Next >]")
        if not r.items:
            lines.append("No products match your search.")
        for row in r.items:
            lines += [f"[{row.asin}]", row.title, row.price_text]
    elif page.item is not None:
        it = page.item
        lines += ["[Back to Search]", "[< Prev]"]
        if page.kind == "item":
            for g in it.options:
                values = " ".join(f"[{v}]" for v in g.values)
                chosen = f" (selected: {g.selected})" if g.selected else ""
                lines.append(f"{g.name}: {values}{chosen}")
            lines += [it.title, f"Price: {it.price_text}", f"Rating: {it.rating}"]
            lines += ["[Description]", "[Features]", "[Reviews]", "[Attributes]", "[Buy Now]"]
        elif page.sub_page is not None:
            lines.append(f"{page.sub_page.name.capitalize()}:")
            lines += page.sub_page.lines or ["(nothing here)"]
    elif page.kind == "done" and page.purchase is not None:
        pv = page.purchase
        opts = ", ".join(f"{k}: {v}" for k, v in pv.options.items()) or "none"
        lines += [
            "Thank you for shopping with us!",
            f"Purchased: [{pv.asin}] {pv.title}",
            f"Options: {opts}",
            f"Price: {format_price(pv.price)}",
        ]
        if pv.reward is not None:
            lines.append(f"Your score (min 0.0, max 1.0): {pv.reward:.3f}")
        lines.append("[Back to Search]")
    return "\n".join(lines)
