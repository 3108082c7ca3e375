"""The input files of a WebShop data folder: finding them and streaming their records.

:class:`Sources` finds ``items_ins_v2*.json``, ``items_human_ins.json``,
``items_shuffle*.json`` and ``human_goals.json`` in a folder; :func:`read_records` streams one
file's records with ijson (plain or gzipped; a JSON list, or an object's key/value pairs) while
:class:`Progress` reports bytes read, rate and ETA. :func:`validate_record` turns a record into
its model, naming the file and the record on an error. The importer that writes them into a
catalogue file is :mod:`core.envs.webshop.stream`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import ijson
from pydantic import TypeAdapter, ValidationError

from core.envs.webshop.importer import _pick
from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.reading import RECORDS, open_bounded


class Progress:
    """A one-line progress bar on stderr: percent of bytes, records, rate and ETA."""

    def __init__(
        self, label: str, total: int, enabled: bool = True, out: TextIO | None = None
    ) -> None:
        """Track ``total`` bytes of work under ``label``."""
        self.label, self.total, self.enabled = label, max(1, total), enabled
        self.out = out or sys.stderr
        self.start = time.monotonic()
        self._last = 0.0
        self._tty = bool(getattr(self.out, "isatty", lambda: False)())

    def line(self, done_bytes: int, records: int) -> str:
        """Render the bar for ``done_bytes`` and ``records`` (no side effects)."""
        elapsed = max(1e-6, time.monotonic() - self.start)
        frac = min(1.0, done_bytes / self.total)
        rate = records / elapsed
        eta = (elapsed / frac - elapsed) if frac > 0 else 0.0
        bar = "#" * int(frac * 20)
        return (
            f"{self.label:<9} [{bar:<20}] {frac * 100:5.1f}%  {records:,} records  "
            f"{rate:,.0f}/s  ETA {int(eta) // 60:d}:{int(eta) % 60:02d}"
        )

    def update(self, done_bytes: int, records: int, *, final: bool = False) -> None:
        """Redraw at most twice a second (every 10 s when stderr is not a terminal)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not final and now - self._last < (0.5 if self._tty else 10.0):
            return
        self._last = now
        end = "\n" if final or not self._tty else ""
        self.out.write(("\r" if self._tty else "") + self.line(done_bytes, records) + end)
        self.out.flush()


def _first_char(path: Path) -> str:
    reader, close = open_bounded(path, RECORDS)
    try:
        while True:
            chunk = reader.raw.read(64)
            if not chunk:
                return ""
            text = chunk.lstrip()
            if text:
                return chr(text[0])
    except (OSError, EOFError) as exc:
        raise ConfigError(f"not a valid gzip file: {exc}", file=path) from exc
    finally:
        close.close()


def read_records(
    path: Path, kind: str, progress: Progress | None, skip: int = 0
) -> Iterator[tuple[int, Any]]:
    """Yield ``(position, record)`` of a JSON list (``kind='list'``) or ``(key, value)`` pairs.

    The file is read through :class:`core.model.reading.BoundedReader` (``RECORDS`` limits:
    depth, values per record, string length, file size), checked chunk by chunk before ijson
    builds anything from it.

    Raises:
        ConfigError: the top level has the wrong type, a limit is broken, or the JSON/gzip is
            broken (naming the record after which it broke).
    """
    want = "[" if kind == "list" else "{"
    first = _first_char(path)
    if first != want:
        what = "list of products" if kind == "list" else "object keyed by asin"
        raise ConfigError(f"expected a JSON {what} at the top level", file=path)
    reader, close = open_bounded(path, RECORDS)
    i = -1
    try:
        it = (
            ijson.items(reader, "item", use_float=True)
            if kind == "list"
            else ijson.kvitems(reader, "", use_float=True)
        )
        for i, rec in enumerate(it):
            if i >= skip:
                yield i, rec
            if progress is not None and i % 500 == 0:
                progress.update(close.tell(), i + 1)
    except ijson.JSONError as exc:
        why = " ".join(str(exc).splitlines()[:1]).strip() or type(exc).__name__
        raise ConfigError(
            f"invalid JSON near line {reader.lines} (byte {reader.pos:,}), after record "
            f"{i + 1}: {why}",
            file=path,
        ) from exc
    except (OSError, EOFError) as exc:
        raise ConfigError(f"not a valid gzip file: {exc}", file=path) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text: {exc}", file=path) from exc
    finally:
        close.close()
    if progress is not None:
        progress.update(progress.total, i + 1, final=True)


def validate_record(model: Any, obj: Any, file: Path, where: str) -> Any:
    """Validate ``obj`` as ``model`` (a model class or a TypeAdapter); errors name ``where``."""
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(obj)
        return model.model_validate(obj)
    except ValidationError as exc:
        err = pydantic_error_to_config_error(exc, file)
        raise ConfigError(
            err.detail, file=file, field=f"{where}.{err.field}" if err.field else where
        ) from exc


class Sources:
    """The input files of one WebShop data folder."""

    def __init__(self, src: Path) -> None:
        """Find the files in ``src``.

        Raises:
            ConfigError: ``src`` is not a folder or holds no product file.
        """
        if not src.is_dir():
            raise ConfigError("not a folder", file=src)
        self.src = src
        items = _pick(src, ("items_shuffle_1000.json", "items_shuffle.json"), "items_shuffle*.json")
        if items is None:
            extra = (
                "; human_goals.json alone holds instruction text only, no products (give the "
                "folder of WebShop's product files; `driftbench env catalogue --out NEW_FOLDER` "
                "writes a synthetic catalogue into a new, empty folder)"
                if (src / "human_goals.json").is_file()
                else ""
            )
            raise ConfigError("no items_shuffle*.json product file" + extra, file=src)
        self.items: Path = items
        self.attrs = _pick(
            src, ("items_ins_v2_1000.json", "items_ins_v2.json"), "items_ins_v2*.json"
        )
        human = src / "items_human_ins.json"
        self.human = human if human.is_file() else None
        order = src / "human_goals.json"
        self.order = order if order.is_file() else None

    def files(self) -> list[Path]:
        """Every input file, in import order."""
        return [p for p in (self.attrs, self.human, self.items, self.order) if p is not None]

    def fingerprint(self) -> str:
        """Names, sizes and modification times of the inputs (a change restarts an import)."""
        parts = [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in self.files()]
        return json.dumps(parts)
