"""Links between pages that stay in the same tab (``st.page_link``).

Pages name each other by page id (``core.studio.pages``). Inside the studio every page is
registered with ``st.navigation`` and the link is a real ``st.page_link``; a page run on its own
(AppTest of a single page) has no navigation, so the same call falls back to a plain relative
link with the same target.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

from core.studio.pages import PAGES, page_file


def page_url(page_id: str, query: Mapping[str, str] | None = None) -> str:
    """The relative URL of a page (``/inspect?episode=…``)."""
    path = "/" + PAGES[page_id].url_path
    return path + (f"?{urlencode(dict(query))}" if query else "")


def reload_link(
    page_id: str,
    label: str,
    query: Mapping[str, str] | None = None,
    *,
    icon: str | None = None,
    key: str | None = None,
) -> None:
    """A link that loads ``page_id`` with ``query`` as a fresh page (same tab).

    ``st.page_link`` to the page already shown keeps the current URL (Streamlit treats it as
    "already here"), so a link from a page to another record of the same page (Inspect's
    "Open the branch") is a plain anchor: its address is the target's URL, it can be copied or
    opened in a new tab, and following it reloads the page at that URL.
    """
    href = html.escape(PAGES[page_id].url_path + (f"?{urlencode(dict(query))}" if query else ""))
    mark = f"{icon} " if icon else ""
    target = st.container(key=key) if key else st.container()
    target.markdown(
        f'{mark}<a href="{href}" target="_self">{html.escape(label)}</a>',
        unsafe_allow_html=True,
    )


def link(
    page_id: str,
    label: str,
    query: Mapping[str, str] | None = None,
    *,
    icon: str | None = None,
    disabled: bool = False,
    help: str | None = None,  # noqa: A002 - mirrors st.page_link
) -> None:
    """A same-tab link to another page of the studio, with query parameters."""
    try:
        st.page_link(
            page_file(page_id),
            label=label,
            icon=icon,
            query_params=dict(query) if query else None,
            disabled=disabled,
            help=help,
        )
    except StreamlitAPIException:
        st.markdown(f"[{label}]({page_url(page_id, query)})")
