"""The production-session JSONL format (docs/SESSIONS.md) and its line-by-line validation."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from core.model import bounds
from core.model.base import Strict

Role = Literal["system", "developer", "user", "assistant", "tool"]


class FunctionCall(Strict):
    """The function part of an OpenAI-style tool call."""

    name: str = Field(min_length=1)
    arguments: str = Field(default="{}", description="JSON text (an object is serialised).")

    @field_validator("arguments", mode="before")
    @classmethod
    def _args_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        return "{}" if value is None else value


class SessionToolCall(Strict):
    """One tool call made by the assistant."""

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class SessionMessage(Strict):
    """One OpenAI-style chat message."""

    role: Role
    content: str | None = None
    tool_calls: tuple[SessionToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    refusal: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _content_parts(cls, value: Any) -> Any:
        # OpenAI also allows a list of content parts; keep the text parts.
        if isinstance(value, list):
            texts = []
            for part in value:
                if not isinstance(part, dict) or part.get("type") not in ("text", "input_text"):
                    raise ValueError("content parts must be text parts ({'type': 'text', ...})")
                texts.append(str(part.get("text", "")))
            return "\n".join(texts)
        return value

    @field_validator("tool_calls", mode="before")
    @classmethod
    def _null_calls(cls, value: Any) -> Any:
        return () if value is None else value

    @model_validator(mode="after")
    def _shape(self) -> SessionMessage:
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant messages carry tool_calls (role is {self.role})")
        if self.role == "user" and not (self.content or "").strip():
            raise ValueError("a user message needs non-empty content")
        return self


class SessionRecord(Strict):
    """One real agent session: messages, optional platform score and metadata."""

    session_id: str = Field(min_length=1, max_length=200)
    messages: tuple[SessionMessage, ...] = Field(min_length=1)
    score: float | None = Field(default=None, description="Platform score (any scale).")
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("score must be a finite number")
        return value

    @model_validator(mode="after")
    def _has_user(self) -> SessionRecord:
        if not any(m.role == "user" for m in self.messages):
            raise ValueError("a session needs at least one user message")
        return self

    @property
    def n_tool_calls(self) -> int:
        """Tool calls the assistant made."""
        return sum(len(m.tool_calls) for m in self.messages)

    @property
    def n_user_turns(self) -> int:
        """User messages."""
        return sum(1 for m in self.messages if m.role == "user")

    @property
    def user_texts(self) -> list[str]:
        """Texts of the user messages, in order."""
        return [m.content or "" for m in self.messages if m.role == "user"]


class LineError(Strict):
    """One malformed line of a sessions file."""

    line: int = Field(ge=1, description="1-based line number.")
    message: str


def _describe(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        msg = str(err.get("msg", "invalid"))
        if err.get("type") == "extra_forbidden":
            msg = "unknown field (put extra data under 'metadata')"
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def parse_session_lines(
    lines: Iterable[str],
) -> Iterator[tuple[int, SessionRecord | None, LineError | None]]:
    """Validate a sessions file line by line.

    Blank lines are skipped; a repeated ``session_id`` is an error on the later line. A line
    nested too deeply, with an over-long integer, ``NaN``, or a lone surrogate in its text is
    an error on that line (limits in :mod:`core.model.bounds`).

    Args:
        lines: The file's lines.

    Yields:
        (line number, record or None, error or None) for each non-blank line.
    """
    return _parse_numbered((n, raw, None) for n, raw in enumerate(lines, start=1))


def _parse_numbered(
    lines: Iterable[tuple[int, str | None, str | None]],
) -> Iterator[tuple[int, SessionRecord | None, LineError | None]]:
    seen: dict[str, int] = {}
    for number, raw, problem in lines:
        if raw is None:
            yield number, None, LineError(line=number, message=problem or "unreadable line")
            continue
        text = raw.strip()
        if not text:
            continue
        try:
            data = bounds.loads(text)
        except ValueError as exc:
            yield number, None, LineError(line=number, message=str(exc))
            continue
        if not isinstance(data, dict):
            msg = f"expected a JSON object, got {type(data).__name__}"
            yield number, None, LineError(line=number, message=msg)
            continue
        try:
            record = SessionRecord.model_validate(data)
        except ValidationError as exc:
            yield number, None, LineError(line=number, message=_describe(exc))
            continue
        if record.session_id in seen:
            first = seen[record.session_id]
            msg = f"duplicate session_id {record.session_id!r} (first on line {first})"
            yield number, None, LineError(line=number, message=msg)
            continue
        seen[record.session_id] = number
        yield number, record, None


def read_sessions_file(path: Path) -> tuple[list[SessionRecord], list[LineError]]:
    """Read and validate a sessions JSONL file, streaming (bounded memory per line).

    Returns:
        (valid records, errors with line numbers; a line that is not UTF-8 is one of them).

    Raises:
        ConfigError: The file is missing, a directory, or over a size limit (a line over
            :data:`core.model.bounds.MAX_LINE_BYTES`, the file over
            :data:`core.model.bounds.MAX_INPUT_FILE_BYTES`).
    """
    records: list[SessionRecord] = []
    errors: list[LineError] = []
    for _, rec, err in _parse_numbered(bounds.read_lines(Path(path))):
        if rec is not None:
            records.append(rec)
        if err is not None:
            errors.append(err)
    return records, errors
