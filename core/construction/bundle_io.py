"""The committed benchmark's files: canonical JSON lines, gzip with mtime 0 (byte-stable)."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import ConfigError, pydantic_error_to_config_error
from core.model.base import canonical_json
from core.model.intent import IntentGraph
from core.model.reading import DOCUMENT, open_bounded
from core.model.sample import Sample


def _write_jsonl_gz(path: Path, rows: Iterable[str]) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        for r in rows:
            gz.write(r.encode("utf-8") + b"\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())


def write_graphs(path: Path, graphs: Sequence[IntentGraph]) -> None:
    """Write graphs as canonical JSON lines (gzip, mtime 0)."""
    _write_jsonl_gz(path, (canonical_json(g) for g in sorted(graphs, key=lambda g: g.graph_id)))


def write_samples(path: Path, samples: Sequence[Sample]) -> None:
    """Write samples as canonical JSON lines (gzip, mtime 0)."""
    _write_jsonl_gz(path, (canonical_json(s) for s in sorted(samples, key=lambda s: s.sample_id)))


def _read_jsonl_gz(path: Path) -> list[tuple[int, Any]]:
    if not path.exists():
        raise ConfigError("file is missing (run `driftbench build samples`)", file=path)
    reader, fh = open_bounded(path, DOCUMENT)  # each line is one record (depth, values, size)
    try:
        raw = reader.read().decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise ConfigError(f"not a gzip JSON-lines file: {exc}", file=path) from exc
    finally:
        fh.close()
    out = []
    for i, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((i, json.loads(line)))
        except ValueError as exc:
            raise ConfigError(f"invalid JSON: {exc}", file=path, field=f"line {i}") from exc
    return out


def read_graphs(path: Path) -> list[IntentGraph]:
    """Read a graphs file (ConfigError naming file and line/field on bad rows)."""
    out = []
    for i, obj in _read_jsonl_gz(path):
        try:
            out.append(IntentGraph.model_validate(obj))
        except ValidationError as exc:
            err = pydantic_error_to_config_error(exc, path)
            raise ConfigError(err.detail, file=path, field=f"line {i}.{err.field}") from exc
    return out


def read_samples(path: Path) -> list[Sample]:
    """Read a samples file (ConfigError naming file and line/field on bad rows)."""
    out = []
    for i, obj in _read_jsonl_gz(path):
        try:
            out.append(Sample.model_validate(obj))
        except ValidationError as exc:
            err = pydantic_error_to_config_error(exc, path)
            raise ConfigError(err.detail, file=path, field=f"line {i}.{err.field}") from exc
    return out
