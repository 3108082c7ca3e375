"""Links between pages that stay in the same tab (``st.page_link``).

Pages name each other by page id (``core.studio.pages``). Inside the studio every page is
registered with ``st.navigation`` and the link is a real ``st.page_link``; a page run on its own
(AppTest of a single page) has no navigation, so the same call falls back to a plain relative
link with the same target.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitAPIException

from core.studio.pages import PAGES, page_file


def page_url(page_id: str, query: Mapping[str, str] | None = None) -> str:
    """The relative URL of a page (``/inspect?episode=…``)."""
    path = "/" + PAGES[page_id].url_path
    return path + (f"?{urlencode(dict(query))}" if query else "")


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
