"""Exports of a run's episodes: JSONL (header, events, outcome per line), CSV and Parquet rows.

Exports stream: episodes are read from the store one at a time through a cursor and written as
they are read (Parquet in batches of :data:`PARQUET_BATCH` rows), so memory stays flat however
many episodes a run holds. A file output is written through a temporary file and renamed into
place (:func:`core.store.outputs.write_atomically`); every line passes the redaction of
:func:`core.llm.secrets.redact` on its way out.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from core.errors import ConfigError
from core.llm.secrets import redact
from core.store import Store
from core.store.outputs import write_atomically

PARQUET_BATCH = 1000
"""Rows per Parquet row group (the most an export holds in memory at once)."""

_ROW_SQL = (
    "SELECT episode_id, run_id, sample_id, benchmark, method, persona_id, seed, status, "
    "outcome, n_events, summary FROM episodes WHERE run_id=? ORDER BY created_at, episode_id"
)


def _rows(store: Store, run: str) -> Iterator[dict[str, Any]]:
    """The run's episode index rows, one at a time (a dedicated cursor, never fetchall)."""
    run_id = store.get_run(run)["run_id"]
    cur = store.conn.cursor()
    try:
        cur.execute(_ROW_SQL, (run_id,))
        cols = [d[0] for d in cur.description]
        for r in cur:
            d = dict(zip(cols, r, strict=True))
            d["summary"] = json.loads(d["summary"]) if d["summary"] else None
            yield d
    finally:
        cur.close()


def iter_episode_records(store: Store, run: str) -> Iterator[dict[str, Any]]:
    """Yield one ``{"episode_id", "header", "events", "outcome", "status", "summary"}`` each.

    Each episode's events are read only when it is its turn (constant memory).
    """
    for row in _rows(store, run):
        eid = row["episode_id"]
        yield {
            "episode_id": eid,
            "header": json.loads(store.header_json(eid)),
            "events": [json.loads(b) for b in store.event_jsons(eid)],
            "outcome": row["outcome"],
            "status": row["status"],
            "summary": row["summary"],
        }


def _flat(r: dict[str, Any]) -> dict[str, Any]:
    summary = r["summary"] or {}
    return {
        "episode_id": r["episode_id"],
        "run_id": r["run_id"],
        "benchmark": r["benchmark"],
        "sample_id": r["sample_id"],
        "method": r["method"],
        "persona": r["persona_id"],
        "seed": r["seed"],
        "status": r["status"],
        "outcome": r["outcome"],
        "n_events": r["n_events"],
        "turns": summary.get("turns"),
        "patience_left": summary.get("patience_left"),
        "questions": summary.get("questions"),
        "proposals": summary.get("proposals"),
        "shifts": summary.get("shifts"),
        "error": redact(summary["error"]) if summary.get("error") else summary.get("error"),
    }


FLAT_COLUMNS = tuple(
    _flat(
        {
            k: None
            for k in (
                "episode_id run_id benchmark sample_id method persona_id seed status outcome "
                "n_events summary"
            ).split()
        }
    )
)
"""The columns of a CSV / Parquet export, in order."""


def iter_flat_rows(store: Store, run: str) -> Iterator[dict[str, Any]]:
    """One flat row per episode (for CSV / Parquet): ids, cell, outcome and summary fields."""
    for r in _rows(store, run):
        yield _flat(r)


def export_run(store: Store, run: str, fmt: str, out: Path | IO[str]) -> int:
    """Stream a run's episodes to ``out`` in ``fmt`` (jsonl, csv, parquet); return the count.

    Raises:
        ConfigError: For an unknown format, or parquet to a stream.
    """
    if fmt not in ("jsonl", "csv", "parquet"):
        raise ConfigError(f"unknown format {fmt!r} (jsonl, csv, parquet)", field="--format")
    store.get_run(run)  # an unknown run fails before any file is created
    if fmt == "parquet":
        if not isinstance(out, Path):
            raise ConfigError("parquet needs a file path", field="--out")
        return _parquet(store, run, out)
    if isinstance(out, Path):
        with write_atomically(out) as fh:
            return _text(store, run, fmt, fh)
    return _text(store, run, fmt, out)


def _text(store: Store, run: str, fmt: str, fh: IO[str]) -> int:
    n = 0
    if fmt == "jsonl":
        for rec in iter_episode_records(store, run):
            fh.write(redact(json.dumps(rec, ensure_ascii=False)) + "\n")
            n += 1
        return n
    w = csv.DictWriter(fh, fieldnames=list(FLAT_COLUMNS))
    w.writeheader()
    for r in iter_flat_rows(store, run):
        w.writerow({k: "" if v is None else v for k, v in r.items()})
        n += 1
    return n


def _parquet(store: Store, run: str, out: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = out.with_name(f".{out.name}.part")
    n = 0
    writer: Any = None
    batch: list[dict[str, Any]] = []
    try:
        for r in iter_flat_rows(store, run):
            batch.append(r)
            if len(batch) >= PARQUET_BATCH:
                writer = _write_batch(pa, pq, writer, tmp, batch)
                n += len(batch)
                batch = []
        if batch or writer is None:
            writer = _write_batch(pa, pq, writer, tmp, batch)
            n += len(batch)
        writer.close()
        writer = None
        tmp.replace(out)
    finally:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)
    return n


_SCHEMA_TYPES = {
    "seed": "int64",
    "n_events": "int64",
    "turns": "int64",
    "patience_left": "float64",
    "questions": "int64",
    "proposals": "int64",
    "shifts": "int64",
}


def _write_batch(pa: Any, pq: Any, writer: Any, path: Path, rows: list[dict[str, Any]]) -> Any:
    fields = [pa.field(c, getattr(pa, _SCHEMA_TYPES.get(c, "string"))()) for c in FLAT_COLUMNS]
    schema = pa.schema(fields)
    cols = {
        c: [None if r[c] is None else (r[c] if c in _SCHEMA_TYPES else str(r[c])) for r in rows]
        for c in FLAT_COLUMNS
    }
    table = pa.Table.from_pydict(cols, schema=schema)
    if writer is None:
        writer = pq.ParquetWriter(str(path), schema)
    writer.write_table(table)
    return writer
