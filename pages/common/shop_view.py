"""The WebShop page a person playing the agent works on, laid out like a shop.

As on WebShop's own site: a search page; a results page with "Back to Search", the page count
and "< Prev" / "Next >", and one row per product — its title (click it to open the product),
its product code, price and rating; a product page with the option groups (the chosen value
highlighted), title, price, rating, the Description / Features / Reviews / Attributes pages and
"Buy Now"; and the purchase confirmation. UI only: it renders the ``PageView`` of
``core.studio.roleplay.shop_page`` and returns the search or click the person chose (an
:class:`~core.model.world.EnvAction`); every text from the catalogue is escaped or inert.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.model.world import EnvAction
from core.studio.markdown import md_escape
from pages.common.play import label_md

_STYLE = """<style>
div[class*="st-key-SHOP_title_"] button { text-align: left; justify-content: flex-start; }
div[class*="st-key-SHOP_title_"] button p {
  white-space: normal; overflow: visible; text-overflow: clip;
  color: #1f5f8b; font-weight: 600; text-align: left;
}
div[class*="st-key-SHOP_title_"] button:hover p { text-decoration: underline; }
</style>"""  # product titles are links that wrap (a button label is one cut line)


def _click(target: str) -> EnvAction:
    return EnvAction(tool="click", args={"target": target})


def _rating(rating: str) -> str:
    return f":material/star: {md_escape(rating)}" if rating not in ("", "N.A.") else "no rating"


def _nav(page: Any, key: str, disabled: bool) -> EnvAction | None:
    chosen: EnvAction | None = None
    nav = st.container(horizontal=True, key=f"{key}_nav")
    for target, label, name, icon in (
        ("back to search", "Back to Search", "back", ":material/search:"),
        ("< prev", "< Prev", "prev", None),
        ("next >", "Next >", "next", None),
    ):
        if target in page.clickables and nav.button(
            label, key=f"{key}_{name}", icon=icon, disabled=disabled
        ):
            chosen = _click(target)
    return chosen


def _results(page: Any, key: str, disabled: bool) -> EnvAction | None:
    r = page.results
    chosen: EnvAction | None = None
    st.html(_STYLE.replace("SHOP", key))
    st.markdown(f"**Page {r.page}** (Total results: {r.total}) · for “{md_escape(r.keywords)}”")
    if not r.items:
        st.text("No products match your search.")
    for i, row in enumerate(r.items):
        with st.container(border=True, key=f"{key}_result_{i}"):
            left, right = st.columns([5, 2], vertical_alignment="top")
            with left:
                if st.button(
                    label_md(row.title),
                    key=f"{key}_title_{row.asin}",
                    type="tertiary",
                    disabled=disabled,
                ):
                    chosen = _click(row.asin.lower())
                st.caption(f"Product code {md_escape(row.asin)}")
            with right:
                st.markdown(f"**{md_escape(row.price_text)}**")
                st.caption(_rating(getattr(row, "rating", "N.A.")))
    return chosen


def _item(page: Any, key: str, disabled: bool) -> EnvAction | None:
    it = page.item
    chosen: EnvAction | None = None
    st.markdown(f"#### {md_escape(it.title)}")
    st.markdown(f"Price: **{md_escape(it.price_text)}** · Rating: {_rating(it.rating)}")
    if page.kind == "item_sub_page" and page.sub_page is not None:
        with st.container(border=True, key=f"{key}_sub_page"):
            st.markdown(f"**{page.sub_page.name.capitalize()}**")
            st.text("\n".join(page.sub_page.lines) or "(nothing here)")
        st.caption("“< Prev” returns to the product.")
        return None
    for gi, group in enumerate(it.options):
        st.markdown(f"**{md_escape(group.name)}**" + ("" if group.selected else " · choose one"))
        row = st.container(horizontal=True, key=f"{key}_group_{gi}")
        for vi, value in enumerate(group.values):
            if row.button(
                label_md(value),
                key=f"{key}_opt_{gi}_{vi}",
                type="primary" if value == group.selected else "secondary",
                icon=":material/check:" if value == group.selected else None,
                disabled=disabled,
            ):
                chosen = _click(value)
    subs = st.container(horizontal=True, key=f"{key}_subs")
    for name in ("description", "features", "reviews", "attributes"):
        if subs.button(name.capitalize(), key=f"{key}_sub_{name}", disabled=disabled):
            chosen = _click(name)
    if st.button(
        "Buy Now",
        key=f"{key}_buy",
        type="primary",
        icon=":material/shopping_cart:",
        disabled=disabled,
    ):
        chosen = _click("buy now")
    return chosen


def shop(page: Any, key: str, *, disabled: bool = False) -> EnvAction | None:
    """Render a WebShop page view model; return the search or click the person chose, if any.

    Args:
        page: The ``PageView`` the agent is on.
        key: Widget-key prefix.
        disabled: Show the page without letting anyone act (the episode has ended).
    """
    chosen: EnvAction | None = None
    if page.notice:
        st.caption("Your last action was not valid:")
        st.text(page.notice)
    if page.kind == "search":
        with st.form(f"{key}_search_form", border=False):
            query = st.text_input(
                "Search the shop", key=f"{key}_query", disabled=disabled, placeholder="keywords"
            )
            if st.form_submit_button(
                "Search", type="primary", icon=":material/search:", disabled=disabled
            ):
                chosen = EnvAction(tool="search", args={"query": query})
        return chosen
    chosen = _nav(page, key, disabled)
    if page.kind == "results" and page.results is not None:
        chosen = _results(page, key, disabled) or chosen
    elif page.item is not None:
        chosen = _item(page, key, disabled) or chosen
    elif page.kind == "done" and page.purchase is not None:
        p = page.purchase
        st.success("Thank you for shopping with us!", icon=":material/check_circle:")
        st.caption("You bought:")
        st.text(f"{p.title}\nProduct code {p.asin} · ${p.price:.2f}")
        if p.options:
            st.text(", ".join(f"{k}: {v}" for k, v in p.options.items()))
    return chosen
