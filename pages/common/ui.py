"""Small rendering helpers shared by pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from core.errors import DriftBenchError

T = TypeVar("T")


def guarded(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
    """Call a core function; show a DriftBenchError as ``st.error`` and return None."""
    try:
        return fn(*args, **kwargs)
    except DriftBenchError as exc:
        st.error(str(exc))
        return None


def plain(text: str) -> None:
    """Render user-provided text inert (no markdown, no HTML)."""
    st.text(text)
