"""Peak memory: a symbolic sweep, and the studio's dashboard data over a 150k-episode store.

Each measurement runs in a fresh child process and reads its peak resident set size from
``/proc/self/status`` (``VmHWM``, which starts afresh at exec; ``ru_maxrss`` would inherit the
high-water mark of the forked parent). Baselines (same run): a child that only imports the
same modules, so the figure shows what the work itself adds on top of the interpreter and
libraries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from core.paths import PROJECT_ROOT

SWEEP_CODE = """
import sys, json
from pathlib import Path
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store
if sys.argv[2] == "work":
    store = Store.open(Path(sys.argv[1]))
    spec = RunSpec(name="mem", benchmarks=("webshop", "tau2_retail", "tau2_airline"),
                   methods=("B0", "A0", "A2"), personas=PERSONAS, seeds=(0,),
                   limit=int(sys.argv[3]))
    result = run_sweep(store, spec, RunOptions(workers=1, progress=False))
    n = result.episodes
else:
    n = 0
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"rss_kb": hwm, "n": n}))
"""

STUDIO_CODE = """
import sys, json
from pathlib import Path
from core.store import Store
from core.grip import aggregate, figure_frames, grip_frame
if sys.argv[2] == "work":
    store = Store.open(Path(sys.argv[1]))
    frame = grip_frame(store, [sys.argv[3]])
    cells = aggregate(frame)
    figs = figure_frames(frame)
    n = len(frame)
else:
    n = 0
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"rss_kb": hwm, "n": n}))
"""


def _child(code: str, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"DRIFTBENCH_GRIP_WORKERS": "1", **os.environ},
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _rss_row(name: str, work: dict[str, Any], base: dict[str, Any], notes: str) -> dict[str, Any]:
    """A peak-RSS row: the working child against the same child after imports only."""
    return {
        "name": name,
        "value": work["rss_kb"] / 1024,
        "unit": "MB",
        "baseline": base["rss_kb"] / 1024,
        "ratio": work["rss_kb"] / base["rss_kb"],
        "target": "report",
        "met": None,
        "notes": notes,
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    from bench.bench_grip import _replicate, _seed_store

    n_store = 15_000 if quick else 150_000
    limit = 6 if quick else 20
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "sweep.db"
        base = _child(SWEEP_CODE, str(db), "imports", "0")
        work = _child(SWEEP_CODE, str(db), "work", str(limit))
        rows.append(
            _rss_row(
                f"peak RSS, symbolic sweep ({work['n']} episodes, 3 hosts)",
                work,
                base,
                "baseline = same child, imports only; worlds loaded once per process",
            )
        )
        big = Path(tmp) / "big.db"
        store, src = _seed_store(big)
        run_id = _replicate(store, src, n_store)
        store.close()
        base = _child(STUDIO_CODE, str(big), "imports", run_id)
        work = _child(STUDIO_CODE, str(big), "work", run_id)
        rows.append(
            _rss_row(
                f"peak RSS, dashboard data over a {n_store:,}-episode store",
                work,
                base,
                f"grip_frame + aggregate + figure frames over {work['n']:,} episodes",
            )
        )
    return rows
