"""The one bounded JSON reading layer: depth, size and count limits checked while streaming.

Every JSON file the project reads goes through :class:`BoundedReader` before any parser builds
an object from it: whole documents (:func:`load_json` — τ² domains, release samples and graphs,
world files, ``build graphs --data``) and record streams (:func:`iter_json` — WebShop's
``items_shuffle*.json`` and friends, parsed one record at a time by ijson). The reader checks
each chunk *as it is read*, at C speed (a regex drops the strings, ``bytes.translate`` keeps the
structural bytes, numpy counts them), so a hostile file stops at the first chunk that breaks a
limit — never after the parser has built it:

* **depth** — nesting deeper than :attr:`JsonLimits.depth` (400 KB of ``[`` used to take ijson
  to 7.9 GB: its path prefixes grow with the square of the depth);
* **values** — more than :attr:`JsonLimits.values` containers and list/object members in one
  record (a record of a stream, or the whole document);
* **string** — one string (or key) longer than :attr:`JsonLimits.string` bytes;
* **bytes** — a (decompressed) file larger than :attr:`JsonLimits.bytes`, and a gzip member
  that expands more than :data:`MAX_GZIP_RATIO` times.

The limits and the tests that prove them are listed in ``docs/RELIABILITY.md``.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from core.errors import ConfigError
from core.model.bounds import MAX_JSON_DEPTH, check_text, json_problem

CHUNK = 1 << 16
"""Bytes read (and checked) at a time."""

MAX_GZIP_RATIO = 200
"""A gzip file may expand at most this many times (plus 1 MiB) before it is refused."""


@dataclass(frozen=True)
class JsonLimits:
    """Limits of one JSON input (see the module docstring)."""

    depth: int = MAX_JSON_DEPTH
    values: int = 5_000_000
    string: int = 16 * 1024**2
    bytes: int = 512 * 1024**2
    record_depth: int = 1
    """Nesting level at which a *record* starts (1: the whole document is one record; 2: each
    element of the top-level list or object is one)."""


DOCUMENT = JsonLimits()
"""A whole document (a τ² ``db.json``, a release file, a world file): at most 512 MiB,
5 million values, depth 256, 16 MiB strings."""

RECORDS = JsonLimits(values=1_000_000, record_depth=2, bytes=64 * 1024**3)
"""A stream of records (WebShop's product list): each record at most 1 million values and
depth 256; the file at most 64 GiB (the real ``items_shuffle.json`` is about 5 GB)."""

SMALL = JsonLimits(values=100_000, string=1024**2, bytes=4 * 1024**2)
"""A small state or configuration file (sign-in revocations, a credentials file)."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
"""A complete string (escapes respected)."""
_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"')
"""The rest of a string that began in an earlier chunk, through its closing quote."""
_KEEP = bytes(range(256)).translate(None, delete=b"[]{},")
"""Every byte except the structural ones (deleted by ``bytes.translate``)."""


class BoundedReader:
    """A binary file wrapper that checks :class:`JsonLimits` on every chunk read through it.

    Args:
        raw: The file (already decompressed) to read from.
        limits: What to enforce.
        name: The file, for error messages.
    """

    def __init__(self, raw: IO[bytes], limits: JsonLimits, name: Path | str) -> None:
        self.raw = raw
        self.limits = limits
        self.name = name
        self.pos = 0
        self.lines = 1
        self._in_string = False
        self._escape = False
        self._string_len = 0
        self._depth = 0
        self._record_values = 0

    def _fail(self, what: str) -> ConfigError:
        return ConfigError(
            f"{what} (the limit; see docs/RELIABILITY.md), near line {self.lines} "
            f"(byte {self.pos:,})",
            file=self.name,
        )

    def read(self, n: int = -1) -> bytes:
        """Read up to ``n`` bytes (``-1``: everything, in checked chunks)."""
        if n is None or n < 0:
            parts: list[bytes] = []
            while True:
                part = self.read(CHUNK)
                if not part:
                    return b"".join(parts)
                parts.append(part)
        data = self.raw.read(n)
        if data:
            self.pos += len(data)
            self.lines += data.count(b"\n")
            if self.pos > self.limits.bytes:
                raise self._fail(f"file is larger than {self.limits.bytes:,} bytes")
            self._scan(data)
        return data

    def _scan(self, data: bytes) -> None:
        lim = self.limits
        if self._escape:  # the previous chunk ended on a backslash inside a string
            data = data[1:]
        inside = self._in_string
        # inside strings, escapes pair from the left: drop "\\" pairs, then escaped quotes,
        # so every quote left is a string delimiter (outside strings JSON has no backslash)
        unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in data else data
        parts = unescaped.split(b'"')
        first_outside = 1 if inside else 0
        strings = parts[1 - first_outside :: 2]
        ends_inside = (len(parts) % 2 == 0) != inside
        lengths = list(map(len, strings))
        if inside and lengths:
            lengths[0] += self._string_len
        if lengths and max(lengths) > lim.string:
            raise self._fail(f"a string is longer than {lim.string:,} bytes")
        if ends_inside:
            self._string_len = lengths[-1]
            self._escape = _odd_backslashes(data)
        else:
            self._string_len, self._escape = 0, False
        self._in_string = ends_inside
        clean = b"".join(parts[first_outside::2])
        structural = clean.translate(None, delete=_KEEP)
        if not structural:
            return
        arr = np.frombuffer(structural, dtype=np.uint8)
        opens = (arr == 91) | (arr == 123)
        closes = (arr == 93) | (arr == 125)
        delta = opens.astype(np.int32) - closes.astype(np.int32)
        depth = self._depth + np.cumsum(delta)
        if int(depth.max()) > lim.depth:
            raise self._fail(f"JSON nested too deeply: deeper than {lim.depth} levels")
        # values of a record: members (commas) and containers inside it
        inner = depth >= lim.record_depth
        weight = ((arr == 44) & inner) | (opens & (depth > lim.record_depth))
        starts = opens & (depth == lim.record_depth)
        record = np.cumsum(starts)
        counts = np.bincount(record, weights=weight, minlength=1)
        counts[0] += self._record_values
        if float(counts.max()) > lim.values:
            raise self._fail(f"a record holds more than {lim.values:,} values")
        self._depth = int(depth[-1])
        self._record_values = int(counts[-1]) if self._depth >= lim.record_depth else 0


def _odd_backslashes(data: bytes) -> bool:
    """Whether ``data`` (inside a string) ends with a pending escape (an odd backslash run)."""
    return (len(data) - len(data.rstrip(b"\\"))) % 2 == 1


def _is_gzip(path: Path, head: bytes) -> bool:
    return path.suffix == ".gz" or head[:2] == b"\x1f\x8b"


class _GzipCap(io.RawIOBase):
    """A gzip stream that refuses to expand beyond :data:`MAX_GZIP_RATIO` times its file."""

    def __init__(self, gz: Any, compressed: int, name: Path) -> None:
        self.gz = gz
        self.cap = compressed * MAX_GZIP_RATIO + 1024**2
        self.out = 0
        self.name = name

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data: bytes = self.gz.read(n)
        self.out += len(data)
        if self.out > self.cap:
            raise ConfigError(
                f"gzip data expands more than {MAX_GZIP_RATIO} times (a compression bomb?)",
                file=self.name,
            )
        return data


def open_bounded(path: Path, limits: JsonLimits) -> tuple[BoundedReader, IO[bytes]]:
    """(checked reader of the decompressed content, the file to close).

    Raises:
        ConfigError: The file is missing, a directory or unreadable.
    """
    try:
        fh = path.open("rb")
    except IsADirectoryError:
        raise ConfigError("is a directory, not a file", file=path) from None
    except OSError as exc:
        raise ConfigError(f"cannot read file: {exc.strerror or exc}", file=path) from None
    head = fh.read(2)
    fh.seek(0)
    raw: IO[bytes] = fh
    if _is_gzip(path, head):
        size = path.stat().st_size
        raw = _GzipCap(gzip.GzipFile(fileobj=fh, mode="rb"), size, path)  # type: ignore[assignment]
    return BoundedReader(raw, limits, path), fh


def load_json(path: Path, limits: JsonLimits = DOCUMENT) -> Any:
    """Parse a whole JSON file (optionally gzip), checking ``limits`` while it is read.

    Refused besides the limits: invalid JSON, ``NaN``/``Infinity``, integers over 4300 digits,
    lone surrogates, non-UTF-8 text.

    Raises:
        ConfigError: One line naming the file (and where).
    """
    reader, fh = open_bounded(path, limits)
    try:
        raw = reader.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise ConfigError(f"not a valid gzip file: {exc}", file=path) from None
    finally:
        fh.close()
    return parse_json_bytes(raw, path)


def parse_json_bytes(raw: bytes, name: Path | str) -> Any:
    """Parse JSON bytes that were read through a :class:`BoundedReader`.

    A number too large for a float (``1e999``) is refused naming its field, like ``NaN``.

    Raises:
        ConfigError: Naming ``name`` (and the field of a non-finite number).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start}: {exc.reason})", file=name) from None
    overflow: list[str] = []

    def number(literal: str) -> float:
        value = float(literal)
        if not math.isfinite(value):
            overflow.append(literal)
        return value

    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=number)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=name
        ) from None
    except (RecursionError, ValueError) as exc:
        raise ConfigError(json_problem(exc) or str(exc), file=name) from None
    if overflow:
        raise ConfigError(
            f"{overflow[0][:40]} is not a finite number (too large for a float)",
            file=name,
            field=non_finite_path(data) or None,
        )
    try:
        check_text(data)
    except ValueError as exc:
        raise ConfigError(str(exc), file=name) from None
    return data


def non_finite_path(value: Any) -> str:
    """The dotted path of the first non-finite float inside ``value`` ("" when none)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return path or "(top level)"
        if isinstance(v, dict):
            stack.extend((c, f"{path}.{k}" if path else str(k)) for k, c in reversed(v.items()))
        elif isinstance(v, list):
            stack.extend(
                (c, f"{path}.{i}" if path else str(i)) for i, c in reversed(list(enumerate(v)))
            )
    return ""


def loads_bounded(text: str | bytes, limits: JsonLimits, name: Path | str) -> Any:
    """Parse JSON text held in memory under ``limits`` (checked before parsing).

    Raises:
        ConfigError: Naming ``name``.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    reader = BoundedReader(io.BytesIO(raw), limits, name)
    while reader.read(CHUNK):
        pass
    return parse_json_bytes(raw, name)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
