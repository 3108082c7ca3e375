"""Drift-Bench++ Studio: settings, auth seam and navigation by role. Nothing else lives here."""

from __future__ import annotations

import sqlite3

import streamlit as st

from core.errors import ConfigError
from core.model.redaction import install_log_redaction
from core.paths import default_store_path
from core.studio.auth import pages_for
from core.studio.pages import PAGES
from pages.common.auth import can_sign_out, cookie_scripts, current_user, login_page, logout

st.set_page_config(page_title="Drift-Bench++ Studio", page_icon=":material/explore:", layout="wide")
install_log_redaction()  # no key (nor a fragment of one) reaches the studio's logs

try:
    user = current_user()
except ConfigError as exc:
    st.error(f"The studio is misconfigured: {exc}")
    st.stop()

if user is None:
    # Every page path leads to the sign-in form while nobody is signed in, so a deep link keeps
    # its page and query parameters through the sign-in (the rerun after it resolves the same
    # path to the real page).
    stubs = [
        st.Page(
            login_page,
            title="Sign in",
            icon=":material/key:",
            url_path=spec.url_path or None,
            default=spec.page_id == "home",
        )
        for spec in PAGES.values()
    ]
    with st.sidebar:
        cookie_scripts()
    st.navigation(stubs, position="hidden").run()
else:
    sections: dict[str, list[st.Page]] = {}
    for page_id in pages_for(user.role):
        spec = PAGES.get(page_id)
        if spec is None:
            continue
        sections.setdefault(spec.section, []).append(
            st.Page(
                spec.file,
                title=spec.title,
                icon=spec.icon,
                url_path=spec.page_id,  # Home (the default page) is served at "/"
                default=page_id == "home",
            )
        )
    with st.sidebar:
        st.caption(f"{user.name} · {user.role}")
        if can_sign_out():
            st.button("Sign out", on_click=logout, key="sign-out")
        cookie_scripts()
    try:
        st.navigation(sections).run()
    except sqlite3.DatabaseError as exc:  # a page met a damaged store: say so, not a traceback
        from pages.common.store import store_error_page

        store_error_page(default_store_path(), exc)
