"""Access to the store from pages: one cached Store per process and path."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import streamlit as st

from core.errors import DriftBenchError
from core.paths import default_store_path
from core.studio.branches import adopt_legacy_branches
from core.studio.health import store_problem_text
from core.studio.store_access import Store


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    store = Store.open(Path(path))
    adopt_legacy_branches(store)  # branches filed under their parent's run get runs of their own
    return store


def get_store() -> Store:
    """Return the process-wide store for ``$DRIFTBENCH_HOME`` (created on first use).

    A store that cannot be opened (corrupt, truncated, disk full) shows a plain page saying
    so and stops the script, instead of a traceback.
    """
    path = default_store_path()
    try:
        return _store(str(path))
    except (DriftBenchError, sqlite3.Error) as exc:
        store_error_page(path, exc)
        raise  # pragma: no cover - store_error_page stops the script


def store_error_page(path: Path, exc: BaseException) -> None:
    """Show why the store cannot be used and stop the page."""
    st.error(store_problem_text(path, exc))
    st.stop()
