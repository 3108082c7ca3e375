"""Golden GRIP numbers over a fixed symbolic run of every benchmark.

The run is built in the test with the real runner (symbolic ladder B0 … A2, every persona, two
seeds, the first three samples of the mock world and of each bundled benchmark), then scored
through the store's columnar path. Two golden files pin the result:

* ``golden/grip_report.json``: the report cells (benchmark × method) with all eleven metrics and
  Score, each with value, sd, seed count and denominator, plus the role-realism summary;
* ``golden/grip_records.json``: every per-episode record, keyed by (benchmark, sample, method,
  persona, seed) rather than by episode id.

A refactor of the extraction must leave both unchanged. A protocol ruling that changes episodes
changes them on purpose: rewrite them with ``DRIFTBENCH_WRITE_GOLDEN=1`` and say so in review.
Identification and Consistency sample episodes by id (the ids hash the run spec), so a change of
the run's identity (e.g. a new ``ProtocolConfig`` field) can move those two alone.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from core.grip import build_report, grip_frame
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store

GOLDEN = Path(__file__).parent / "golden"
REPORT_FILE = GOLDEN / "grip_report.json"
RECORDS_FILE = GOLDEN / "grip_records.json"
WRITE_ENV = "DRIFTBENCH_WRITE_GOLDEN"

SPEC = RunSpec(
    name="grip-golden",
    benchmarks=("mock", "webshop", "tau2_retail", "tau2_airline"),
    methods=("B0", "A0", "A1", "A2"),
    personas=PERSONAS,
    seeds=(0, 1),
    limit=3,
)
_ID_COLUMNS = ("episode_id", "run_id")
_KEY = ("benchmark", "sample_id", "method", "persona", "seed")


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store.open(tmp_path_factory.mktemp("grip_golden") / "g.db")
    res = run_sweep(store, SPEC, RunOptions(workers=1, progress=False))
    assert res.completed == res.episodes == 480, res
    return store


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def _records(store: Store) -> list[dict[str, Any]]:
    frame = grip_frame(store, ["grip-golden"])
    rows = [
        {k: _plain(v) for k, v in r.items() if k not in _ID_COLUMNS}
        for r in frame.to_dict("records")
    ]
    return sorted(rows, key=lambda r: tuple(str(r[k]) for k in _KEY))


def _report(store: Store) -> dict[str, Any]:
    rep = build_report(
        store, ["grip-golden"], by="benchmark,method", judges="heuristic", use_cache=False
    ).to_json()
    realism = dict(rep["role_realism"])
    realism["held_out"] = sorted(realism.get("held_out", {}).values(), key=json.dumps)
    return {"by": rep["by"], "cells": rep["cells"], "role_realism": realism}


def _dumps(payload: Any) -> str:
    """Readable and diffable: one record per line for lists, indented otherwise."""
    if isinstance(payload, list):
        lines = (json.dumps(r, sort_keys=True, ensure_ascii=False) for r in payload)
        return "[\n" + ",\n".join(lines) + "\n]\n"
    return json.dumps(payload, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _write_or_load(path: Path, payload: Any) -> Any:
    if os.environ.get(WRITE_ENV) == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(_dumps(payload), encoding="utf-8")
        pytest.skip(f"{path.name} rewritten ({WRITE_ENV}=1)")
    if not path.exists():
        pytest.fail(f"{path} missing: record it with {WRITE_ENV}=1 on the unchanged code")
    return json.loads(path.read_text(encoding="utf-8"))


def _diff(got: Any, want: Any, where: str, out: list[str]) -> None:
    """Collect every difference (floats compare to 1e-9 relative)."""
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(want) | set(got)):
            _diff(got.get(k, "<missing>"), want.get(k, "<missing>"), f"{where}.{k}", out)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _diff(g, w, f"{where}[{i}]", out)
    elif (
        isinstance(want, float)
        and isinstance(got, (int, float))
        and not isinstance(got, bool)
        and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)
    ):
        return
    elif got != want or type(got) is not type(want) and not _same_number(got, want):
        out.append(f"{where}: got {got!r}, want {want!r}")


def _same_number(a: Any, b: Any) -> bool:
    nums = (int, float)
    return isinstance(a, nums) and isinstance(b, nums) and not isinstance(a, bool) and a == b


def test_grip_report_is_golden(golden_store: Store) -> None:
    got = _report(golden_store)
    want = _write_or_load(REPORT_FILE, got)
    names = {m for c in want["cells"] for m in c["metrics"]}
    assert len(names) == 13  # the eleven metrics, WebShop's Score and Discovery (grip-3)
    out: list[str] = []
    _diff(json.loads(json.dumps(got)), want, "report", out)
    assert not out, "\n".join(out[:40])


def test_grip_records_are_golden(golden_store: Store) -> None:
    got = _records(golden_store)
    want = _write_or_load(RECORDS_FILE, got)
    assert len(want) == 480
    out: list[str] = []
    _diff(json.loads(json.dumps(got)), want, "records", out)
    assert not out, "\n".join(out[:40])
