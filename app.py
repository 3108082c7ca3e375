"""Drift-Bench++ Studio: settings, auth seam and navigation by role. Nothing else lives here."""

from __future__ import annotations

import streamlit as st

from core.studio.auth import pages_for
from pages.common.auth import current_user, login_page, logout

st.set_page_config(page_title="Drift-Bench++ Studio", page_icon="🧭", layout="wide")

# id -> (file, title, icon, section). Explicit entries only: no automatic page discovery.
PAGES: dict[str, tuple[str, str, str, str]] = {
    "home": ("pages/home.py", "Home", "🏠", "Studio"),
    "play_user": ("pages/play_user.py", "Play as user", "🎭", "Play"),
    "play_agent": ("pages/play_agent.py", "Play as agent", "🕹️", "Play"),
    "annotate": ("pages/annotate.py", "Annotate", "✍️", "Play"),
    "watch": ("pages/watch.py", "Watch live", "📡", "Research"),
    "inspect": ("pages/inspect.py", "Inspect", "🔍", "Research"),
    "grip": ("pages/grip.py", "GRIP dashboard", "📊", "Research"),
    "construction": ("pages/construction.py", "Construction", "🧱", "Research"),
    "runs": ("pages/runs.py", "Runs", "🚀", "Research"),
    "agreement": ("pages/agreement.py", "Agreement & QA", "🤝", "Research"),
    "sessions": ("pages/sessions.py", "Sessions", "📥", "Research"),
    "data": ("pages/data.py", "Data", "🗄️", "Admin"),
}

user = current_user()
if user is None:
    st.navigation([st.Page(login_page, title="Sign in", icon="🔑", url_path="login")]).run()
else:
    sections: dict[str, list[st.Page]] = {}
    for page_id in pages_for(user.role):
        if page_id not in PAGES:
            continue
        file, title, icon, section = PAGES[page_id]
        sections.setdefault(section, []).append(
            st.Page(file, title=title, icon=icon, default=page_id == "home")
        )
    with st.sidebar:
        st.caption(f"{user.name} · {user.role}")
        if st.session_state.get("auth_user"):
            st.button("Sign out", on_click=logout, key="sign-out")
    st.navigation(sections).run()
