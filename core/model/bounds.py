"""Documented limits on what the project reads and stores, and the checks that enforce them.

Every limit turns an input that would otherwise exhaust memory, hang, or end in a traceback
into one :class:`~core.errors.ConfigError` line naming the file (and line or field). The table
of limits, and the test that proves each, is in ``docs/RELIABILITY.md``.

Readers:

* :func:`read_lines` — a text file line by line, with a cap on each line and on the whole
  file (``/dev/zero`` or a 20 GB file without newlines stops at the first cap);
* :func:`loads` — ``json.loads`` whose depth, integer-digit and surrogate faults are errors;
* :func:`load_yaml` — YAML without anchors/aliases (no "billion laughs"), size-capped;
* :func:`read_text` — a whole small file as UTF-8, size-capped, naming binary content.

Values:

* :func:`check_text` — a string that cannot be stored as UTF-8 (a lone surrogate);
* :func:`cap_stored_text` — the size cap for a stored reply (events, the LLM cache).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from core.errors import ConfigError

MAX_INPUT_FILE_BYTES = 2 * 1024**3
"""Largest input file read line by line (sessions, interpreter audits): 2 GiB."""
MAX_LINE_BYTES = 16 * 1024**2
"""Longest line of a line-oriented input file (one session, one audit line): 16 MiB."""
MAX_SMALL_FILE_BYTES = 1024**2
"""Largest hand-written configuration file (a persona, a credentials file): 1 MiB."""
MAX_JSON_DEPTH = 256
"""Deepest JSON nesting accepted in a line-oriented input (a session has depth < 10)."""
MAX_INT_DIGITS = 4300
"""Longest integer literal (Python's own ``int`` conversion limit, made a one-line error)."""
MAX_STORED_TEXT_CHARS = 1_000_000
"""Longest model reply kept in a stored row (the LLM cache; events have their own cap)."""
TRUNCATION_MARK = "\n…[truncated: {n} more characters]"
"""Appended to a stored reply cut at :data:`MAX_STORED_TEXT_CHARS`."""

MAX_SEEDS = 10_000
"""Most seeds one sweep may ask for (``--seeds``)."""
MAX_COUNT = 1_000_000
"""Largest value of a count flag (``--limit``, ``--per-graph``, ``--workers`` …)."""


# ---------------------------------------------------------------------------------- files
def _regular_file(path: Path) -> os.stat_result:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ConfigError("no such file", file=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError("is a directory, not a file", file=path)
    return st


def read_lines(
    path: Path,
    *,
    max_line: int = MAX_LINE_BYTES,
    max_total: int = MAX_INPUT_FILE_BYTES,
) -> Iterator[tuple[int, str | None, str | None]]:
    """Yield ``(line number, text, problem)`` for each line, reading in bounded pieces.

    A line that is not UTF-8 yields a problem for that line only (``text`` None). A line over
    ``max_line`` bytes, or a file over ``max_total``, stops the read with an error.

    Raises:
        ConfigError: Missing file, a directory, a line or a file over its cap.
    """
    _regular_file(path)
    total = 0
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    with fh:
        number = 0
        while True:
            raw = fh.readline(max_line + 1)
            if not raw:
                return
            number += 1
            total += len(raw)
            if len(raw) > max_line and not raw.endswith(b"\n"):
                raise ConfigError(
                    f"line {number} is longer than {max_line // 1024**2} MiB "
                    "(the line limit; see docs/RELIABILITY.md)",
                    file=path,
                )
            if total > max_total:
                raise ConfigError(
                    f"file is larger than {max_total // 1024**3} GiB (the input limit)", file=path
                )
            try:
                yield number, raw.decode("utf-8"), None
            except UnicodeDecodeError as exc:
                yield number, None, f"not UTF-8 text (byte {exc.start}: {exc.reason})"


def read_text(path: Path, *, max_bytes: int = MAX_SMALL_FILE_BYTES, what: str = "file") -> str:
    """A small text file as UTF-8, refusing directories, binary content and oversize files.

    Raises:
        ConfigError: Naming the file and what is wrong.
    """
    st = _regular_file(path)
    if st.st_size > max_bytes:
        raise ConfigError(
            f"{what} is {st.st_size} bytes; the limit is {max_bytes} (see docs/RELIABILITY.md)",
            file=path,
        )
    try:
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from None
    if len(raw) > max_bytes:  # a special file whose size stat does not tell
        raise ConfigError(f"{what} is larger than {max_bytes} bytes (the limit)", file=path)
    if b"\x00" in raw:
        raise ConfigError(f"{what} is binary, not text", file=path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{what} is not UTF-8 text (byte {exc.start}: {exc.reason})", file=path
        ) from None


# ---------------------------------------------------------------------------------- JSON
def json_problem(exc: BaseException) -> str | None:
    """The one-line reason for a parse failure ``json.loads`` can raise; None for others."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read (see docs/RELIABILITY.md)"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return f"an integer has more than {MAX_INT_DIGITS} digits (the limit)"
    return None


def depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of parsed JSON, counting no further than ``limit + 1`` (iterative)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            children = v.values() if isinstance(v, dict) else v
            stack.extend((c, d + 1) for c in children if isinstance(c, dict | list))
    return deepest


def loads(text: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` with its hostile-input faults as :class:`ValueError` one-liners.

    Refused: nesting deeper than ``max_depth``, integers over :data:`MAX_INT_DIGITS` digits,
    ``NaN``/``Infinity`` literals, and strings that are not valid Unicode (lone surrogates).

    Raises:
        ValueError: With a one-line reason (callers add the file and line).
    """
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (RecursionError, ValueError) as exc:
        raise ValueError(json_problem(exc) or str(exc)) from None
    if depth(data, max_depth) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth} levels (the limit)")
    check_text(data)
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_text(value: Any) -> None:
    """Refuse strings (anywhere inside ``value``) that cannot be stored as UTF-8.

    Raises:
        ValueError: Naming the first lone surrogate found.
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = v[exc.start]
                raise ValueError(
                    f"text contains a lone surrogate (\\u{ord(bad):04x}), which is not valid "
                    "Unicode"
                ) from None
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)


def finite(value: float, what: str) -> float:
    """``value`` if it is a finite number.

    Raises:
        ValueError: For NaN or ±infinity.
    """
    if not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, not {value}")
    return value


# ---------------------------------------------------------------------------------- model specs
_API_BASE = re.compile(r"@(https?://\S+)$")
_MODEL_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+\-]*$")


def check_model_spec(value: str, *, field: str, keywords: frozenset[str] = frozenset()) -> str:
    """Refuse a ``MODEL[@API_BASE]`` spec that cannot name a model (before any run exists).

    The model is split from an API base exactly as :meth:`core.llm.ModelSpec.parse` does (only
    ``@http(s)://…`` splits, so ``vertex_ai/claude@20240620`` stays one name); every
    ``/``-separated part of the model must start with a letter or digit. So ``openai/@``,
    ``@@@``, ``openai/`` and ``/x`` are refused; ``keywords`` (``symbolic``, ``template`` …)
    pass.

    Raises:
        ConfigError: Naming ``field``.
    """
    text = value.strip()
    if text.lower() in keywords:
        return text
    m = _API_BASE.search(text)
    model = text[: m.start()] if m else text
    parts = model.split("/")
    if not model or not all(_MODEL_SEGMENT.match(p) for p in parts):
        raise ConfigError(
            f"{value!r} does not name a model (expected [provider/]model[@http(s)://API_BASE])",
            field=field,
        )
    return text


# ---------------------------------------------------------------------------------- YAML
class _NoAliasLoader(yaml.SafeLoader):
    """A safe loader that refuses anchors and aliases (they let a tiny file expand hugely)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.YAMLError(
                f"aliases (*{event.anchor}) are not allowed, line {event.start_mark.line + 1}"
            )
        return super().compose_node(parent, index)


def load_yaml(path: Path, *, max_bytes: int = MAX_SMALL_FILE_BYTES, what: str = "file") -> Any:
    """Parse a small YAML file: size-capped, UTF-8, no anchors or aliases.

    Raises:
        ConfigError: Naming the file and what is wrong.
    """
    return parse_yaml(read_text(path, max_bytes=max_bytes, what=what), file=path)


def parse_yaml(text: str, *, file: Path | str) -> Any:
    """Parse YAML text without anchors or aliases (every YAML the project reads comes here).

    Raises:
        ConfigError: Naming ``file``: invalid YAML, an alias, or nesting too deep.
    """
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {' '.join(str(exc).split())}", file=file) from None
    except RecursionError:
        raise ConfigError("YAML nested too deeply to read", file=file) from None


# ---------------------------------------------------------------------------------- stored text
def fits_stored_cap(text: str, limit: int = MAX_STORED_TEXT_CHARS) -> bool:
    """Whether a reply may be stored whole.

    A cache skips larger replies: a later identical request asks the provider again rather
    than replaying a cut reply.
    """
    return len(text) <= limit


def cap_stored_text(text: str, limit: int = MAX_STORED_TEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a visible mark (what a store row keeps).

    Lone surrogates become ``?`` so the text can always be stored as UTF-8.
    """
    if len(text) > limit:
        text = text[:limit] + TRUNCATION_MARK.format(n=len(text) - limit)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text
