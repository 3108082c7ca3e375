"""The symbolic method ladder re-measured (docs/PROTOCOL.md, "The symbolic ladder").

Runs the offline ladder (B0, L0, A0, A1, A2, A3, RS) on the bundled benchmarks, every persona,
three seeds and the first ``--limit`` samples of each benchmark, then prints GRIP cells
(mean ± sample sd over seeds) and paired deltas with bootstrap 95% intervals (cluster bootstrap
over draw keys, :mod:`core.grip.deltas`). One run; run it under ``nice`` on a shared machine:

    nice python -m bench.ladder_symbolic --limit 15 --out bench/data/ladder_symbolic.json
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from core.grip import aggregate, grip_frame, paired_deltas
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store

BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")
METHODS = ("L0", "B0", "A0", "A1", "A2", "A3", "RS")
METRICS = ("Success", "Earned", "Recovery", "Aim", "Patience")
PAIRS = (("L0", "B0"), ("B0", "A0"), ("A0", "A1"), ("A1", "A2"), ("A2", "A3"), ("B0", "A2"))


def _fmt(v: float, sd: float | None = None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if sd is None or (isinstance(sd, float) and math.isnan(sd)):
        return f"{v:.3f}"
    return f"{v:.3f} ± {sd:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=15)
    ap.add_argument("--gen", type=int, default=25, help="A3 generation size")
    ap.add_argument("--out", default=None)
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated subset")
    args = ap.parse_args()
    methods = tuple(m for m in args.methods.split(",") if m)
    pairs = tuple((a, b) for a, b in PAIRS if a in methods and b in methods)
    spec = RunSpec(
        name="ladder",
        benchmarks=BENCHMARKS,
        methods=methods,
        personas=PERSONAS,
        seeds=(0, 1, 2),
        limit=args.limit,
        a3_generation_size=args.gen,
    )
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "ladder.db")
        t0 = time.perf_counter()
        res = run_sweep(store, spec, RunOptions(workers=1, concurrency=1, progress=False))
        secs = time.perf_counter() - t0
        frame = grip_frame(store, [res.run_id])
        cells = aggregate(frame, by=("benchmark", "method"))
        deltas = [
            paired_deltas(frame, a, b, metrics=("Success", "Earned", "Recovery")) for a, b in pairs
        ]
        store.close()
    out: dict[str, object] = {
        "episodes": res.episodes,
        "seconds": round(secs, 1),
        "limit": args.limit,
        "cells": [
            {k: row[k] for k in ("benchmark", "method", "metric", "value", "sd", "denominator")}
            for row in cells.to_dict("records")
            if row["metric"] in METRICS
        ],
        "deltas": [r for df in deltas for r in df.to_dict("records")],
    }
    print(f"{res.episodes} episodes in {secs:.0f}s\n")
    for bench in BENCHMARKS:
        print(f"### {bench}\n")
        print("| method | " + " | ".join(METRICS) + " |")
        print("|---|" + "---|" * len(METRICS))
        for m in methods:
            vals = []
            for metric in METRICS:
                row = cells[
                    (cells.benchmark == bench) & (cells.method == m) & (cells.metric == metric)
                ]
                vals.append(
                    _fmt(float(row.value.iloc[0]), float(row.sd.iloc[0])) if len(row) else "—"
                )
            print(f"| {m} | " + " | ".join(vals) + " |")
        print()
        print("| pair | metric | n pairs | delta | 95% CI |")
        print("|---|---|---|---|---|")
        for df in deltas:
            for r in df[df.benchmark == bench].to_dict("records"):
                print(
                    f"| {r['method_a']}→{r['method_b']} | {r['metric']} | {r['n_pairs']} | "
                    f"{r['delta']:+.3f} | [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] |"
                )
        print()
    if args.out:
        Path(args.out).write_text(
            json.dumps(out, indent=1, default=float, allow_nan=True) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
