"""Access to the store from pages: one cached Store per process and path."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.paths import default_store_path
from core.studio.branches import adopt_legacy_branches
from core.studio.store_access import Store


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    store = Store.open(Path(path))
    adopt_legacy_branches(store)  # branches filed under their parent's run get runs of their own
    return store


def get_store() -> Store:
    """Return the process-wide store for ``$DRIFTBENCH_HOME`` (created on first use)."""
    return _store(str(default_store_path()))
