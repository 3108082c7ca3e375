"""Tool calls as people read them (not ``book_reservation(cabin='business', …)``).

A call becomes a title (the tool name with underscores as spaces) and one ``name: value`` line
per argument, with lists and nested objects flattened into short readable text
(:func:`value_text`, the full text :func:`cell_text` cut), so the pages can render it with
inert text widgets. Tool results are shown in full by :mod:`core.studio.tool_results`. Nothing
here knows Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.model.base import Strict

MAX_VALUE_CHARS = 160
"""Longer argument values are cut (with an ellipsis)."""


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


def _cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cell_text(value: Any) -> str:
    """A value as full text for a field or a cell (nothing cut, no quotes)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {cell_text(v)}" for k, v in value.items()) or "—"
    if isinstance(value, Sequence):
        return "; ".join(cell_text(v) for v in value) or "—"
    return str(value)


def value_text(value: Any) -> str:
    """A value as short readable text: :func:`cell_text` cut to :data:`MAX_VALUE_CHARS`."""
    return _cut(cell_text(value))


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
