"""A tool result in full: readable fields and tables, every id to copy, and a JSON view.

UI only: :func:`core.studio.tool_results.full_result` does the reading; this renders it with
inert widgets (``st.text``, ``st.table``, ``st.code`` — which carries a copy button). The
caller chooses the frame (an expander, a bordered box); this draws no expander itself, so it
can sit inside one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from core.studio.markdown import md_escape
from core.studio.tool_results import FullResult, full_result
from core.studio.toolcalls import describe_call

MAX_STATIC_ROWS = 40  # tables up to this many rows are static (text wraps, nothing cut)


def call_view(tool: str, args: Mapping[str, Any]) -> None:
    """A tool call as people read it: a title and one ``name: value`` line per argument.

    The one rendering of a tool call, shared by the play pages, Inspect and Annotate.
    """
    call = describe_call(tool, args)
    st.markdown(f":material/build: **{md_escape(call.title)}**")
    if call.fields:
        st.text("\n".join(f"{f.name}: {f.value}" for f in call.fields))


def full_tool_result(text: str) -> FullResult:
    """Render one tool result in three tabs: Readable, IDs (copyable) and JSON.

    Returns:
        The parsed result (the caller may use its summary).
    """
    r = full_result(text)
    names = ["Readable", f"IDs ({len(r.ids)})"]
    if r.json_text is not None:
        names.append("JSON")
    tabs = st.tabs(names)
    with tabs[0]:
        if r.fields:
            st.text("\n".join(f"{f.name}: {f.value}" for f in r.fields))
        for table in r.tables:
            st.caption(f"{table.path} ({len(table.rows)})")
            frame = pd.DataFrame(list(table.rows), columns=list(table.columns))
            if len(table.rows) <= MAX_STATIC_ROWS:
                st.table(frame, hide_index=True)
            else:
                st.dataframe(frame, hide_index=True)
        if r.text:
            st.text(r.text)
        if not (r.fields or r.tables or r.text):
            st.text("(empty result)")
    with tabs[1]:
        if not r.ids:
            st.caption("No ids in this result.")
        for ref in r.ids:
            row = st.container(
                horizontal=True,
                horizontal_alignment="left",
                vertical_alignment="center",
                gap="small",
            )
            row.caption(ref.path)
            with row:
                st.code(ref.value, language=None, width="content")
    if r.json_text is not None:
        with tabs[2]:
            st.code(r.json_text, language="json", wrap_lines=True)
    return r
