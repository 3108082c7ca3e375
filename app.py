"""Drift-Bench++ Studio: settings, auth seam and navigation. Nothing else lives here."""

from __future__ import annotations

import streamlit as st

from pages.common.auth import current_user

st.set_page_config(page_title="Drift-Bench++ Studio", page_icon="🧭", layout="wide")

user = current_user()
home = st.Page("pages/home.py", title="Home", icon="🏠", default=True)
pages: dict[str, list[st.Page]] = {"Studio": [home]}
st.navigation(pages).run()
