"""Typed view models of shop pages (what a page shows; the studio renders these).

Views carry only catalogue facts, the session's instruction text and what the shopper did;
never goals, hidden intents or rewards (a reward is only filled in when the session was opened
with an explicit goal, as in ``env play`` or the golden run).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.model.base import Strict

PageKind = Literal["search", "results", "item", "item_sub_page", "done"]
SubPage = Literal["description", "features", "reviews", "attributes"]


class ResultItem(Strict):
    """One row of a results page."""

    asin: str
    title: str
    price: float
    price_text: str
    rating: str = Field(default="N.A.", description="Average rating as shown (``4.3``).")


class ResultsView(Strict):
    """A page of search results."""

    keywords: str
    page: int
    total: int = Field(description="Number of hits (≤ 50).")
    num_pages: int
    items: list[ResultItem]
    has_prev: bool
    has_next: bool


class OptionGroup(Strict):
    """One customisation option of an item with its values and the current choice."""

    name: str
    values: list[str]
    selected: str | None = None


class ItemView(Strict):
    """An item page (and the header of its sub-pages)."""

    asin: str
    title: str
    price: float
    price_text: str
    rating: str
    category: str
    product_category: str
    options: list[OptionGroup]


class SubPageView(Strict):
    """Description / Features / Reviews / Attributes of an item."""

    name: SubPage
    lines: list[str]


class PurchaseView(Strict):
    """What Buy Now committed."""

    asin: str
    title: str
    options: dict[str, str]
    price: float
    reward: float | None = Field(default=None, description="Only with an explicit goal.")


class PageView(Strict):
    """The page a session currently shows."""

    kind: PageKind
    instruction: str | None = None
    clickables: list[str] = Field(description="Lower-cased valid click targets.")
    can_search: bool
    results: ResultsView | None = None
    item: ItemView | None = None
    sub_page: SubPageView | None = None
    purchase: PurchaseView | None = None
    notice: str | None = Field(default=None, description="Why the last action was invalid.")
