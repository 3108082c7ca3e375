"""Tool calls and tool results as people read them (not ``book_reservation(cabin='business', …)``).

A call becomes a title (the tool name with underscores as spaces) and one ``name: value`` line
per argument, with lists and nested objects flattened into short readable text; a result that is
JSON becomes field lines (an object), rows (a list of objects) or a plain line, so the pages can
render it with inert text widgets. Nothing here knows Streamlit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.model.base import Strict

MAX_VALUE_CHARS = 160
"""Longer argument values are cut (with an ellipsis)."""

MAX_ROWS = 50
"""At most this many rows of a list result are kept."""


class Line(Strict):
    """One ``name: value`` line."""

    name: str
    value: str


class ToolCallView(Strict):
    """A tool call ready to show."""

    tool: str
    title: str
    fields: tuple[Line, ...] = ()

    @property
    def summary(self) -> str:
        """One line: ``title — name: value; …`` (for titles and timelines)."""
        if not self.fields:
            return self.title
        return self.title + " — " + "; ".join(f"{f.name}: {f.value}" for f in self.fields)


class ResultView(Strict):
    """A tool result ready to show: field lines, table rows, or plain text."""

    fields: tuple[Line, ...] = ()
    rows: tuple[dict[str, str], ...] = ()
    text: str = ""
    truncated: int = 0


def _cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_text(value: Any) -> str:
    """A value as short readable text: lists joined, objects as ``k: v``, no quotes."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (int, str)):
        return _cut(str(value))
    if isinstance(value, Mapping):
        return _cut(", ".join(f"{k}: {value_text(v)}" for k, v in value.items()) or "—")
    if isinstance(value, Sequence):
        return _cut("; ".join(value_text(v) for v in value) or "—")
    return _cut(str(value))


def tool_title(tool: str) -> str:
    """``book_reservation`` → ``Book reservation``."""
    words = tool.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:] if words else tool


def describe_call(tool: str, args: Mapping[str, Any]) -> ToolCallView:
    """A tool call (name and arguments) as a title and argument lines."""
    return ToolCallView(
        tool=tool,
        title=tool_title(tool),
        fields=tuple(
            Line(name=str(k).replace("_", " "), value=value_text(v)) for k, v in args.items()
        ),
    )


def describe_result(text: str) -> ResultView:
    """A tool result: JSON objects and lists become fields/rows; anything else stays text."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return ResultView(text=text)
    if isinstance(data, Mapping):
        return ResultView(
            fields=tuple(Line(name=str(k), value=value_text(v)) for k, v in data.items())
        )
    if isinstance(data, list) and data and all(isinstance(r, Mapping) for r in data):
        rows = tuple({str(k): value_text(v) for k, v in r.items()} for r in data[:MAX_ROWS])
        return ResultView(rows=rows, truncated=max(0, len(data) - MAX_ROWS))
    return ResultView(text=value_text(data))
