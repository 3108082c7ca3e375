"""Exports of a run's episodes: JSONL (header, events, outcome per line), CSV and Parquet rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import IO, Any

from core.errors import ConfigError
from core.store import Store


def episode_records(store: Store, run: str) -> list[dict[str, Any]]:
    """Return one ``{"episode_id", "header", "events", "outcome", "summary"}`` per episode.

    Args:
        store: The store.
        run: Run name or id.
    """
    run_id = store.get_run(run)["run_id"]
    out = []
    for row in store.episode_rows(run_id=run_id):
        eid = row["episode_id"]
        out.append(
            {
                "episode_id": eid,
                "header": json.loads(store.header_json(eid)),
                "events": [json.loads(b) for b in store.event_jsons(eid)],
                "outcome": row["outcome"],
                "status": row["status"],
                "summary": row["summary"],
            }
        )
    return out


def flat_rows(store: Store, run: str) -> list[dict[str, Any]]:
    """One flat row per episode (for CSV / Parquet): ids, cell, outcome and summary fields."""
    run_id = store.get_run(run)["run_id"]
    rows = []
    for r in store.episode_rows(run_id=run_id):
        summary = r["summary"] or {}
        rows.append(
            {
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
                "error": summary.get("error"),
            }
        )
    return rows


def export_run(store: Store, run: str, fmt: str, out: Path | IO[str]) -> int:
    """Write a run's episodes to ``out`` in ``fmt`` (jsonl, csv, parquet); return the count.

    Raises:
        ConfigError: For an unknown format, or parquet to a stream.
    """
    if fmt == "jsonl":
        recs = episode_records(store, run)
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
        _write_text(out, lines)
        return len(recs)
    rows = flat_rows(store, run)
    if fmt == "csv":
        import io

        buf = io.StringIO()
        cols = list(rows[0]) if rows else ["episode_id"]
        w = csv.DictWriter(buf, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
        _write_text(out, buf.getvalue())
        return len(rows)
    if fmt == "parquet":
        if not isinstance(out, Path):
            raise ConfigError("parquet needs a file path", field="--out")
        import pandas as pd

        out.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(out, index=False)
        return len(rows)
    raise ConfigError(f"unknown format {fmt!r} (jsonl, csv, parquet)", field="--format")


def _write_text(out: Path | IO[str], text: str) -> None:
    if isinstance(out, Path):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    else:
        out.write(text)
