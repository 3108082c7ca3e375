"""τ² grading cost: copy-on-write replay + incremental hash vs τ²-bench's naive path.

Per task, *grading* = build a fresh database, replay the golden actions, hash the result.

* ours: open a copy-on-write session on the world loaded once per process, replay, hash from
  cached per-record serialisations (only changed records are re-serialised);
* naive (what τ²-bench does per evaluation): load ``db.json`` afresh, type it, replay on the
  full private copy, ``json.dumps`` the whole database and sha256 it.

Both paths are measured in the same run on the same tasks and must give identical hashes.
Uses ../shared/hostdata when present, else the bundled worlds.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from core.envs.tau2 import load_tau2_world
from core.envs.tau2.db import PlainState, clone, naive_hash
from core.envs.tau2.grading import golden_actions, replay
from core.envs.tau2.loader import DOMAINS, type_db
from core.envs.tau2.tasks import Task
from core.envs.tau2.world import bundled_dir
from core.paths import shared_dir

TARGET_RATIO = 20.0


def _data_dir(domain: str) -> tuple[Path, str]:
    shared = shared_dir() / "hostdata" / f"tau2_{domain}"
    if (shared / "db.json").is_file():
        return shared, "shared"
    return bundled_dir(domain), "bundled"


def _naive(domain: str, path: Path, task: Task) -> str:
    with (path / "db.json").open("rb") as fh:
        records = type_db(domain, json.load(fh), path / "db.json")
    tools = DOMAINS[domain](PlainState(records))
    for action in task.actions:
        try:
            tools.invoke(action.name, clone(action.arguments))
        except Exception:  # noqa: BLE001 - golden errors are only logged by τ²
            pass
    return naive_hash(records)


def _median_ms(fn: Any, reps: int) -> tuple[float, Any]:
    times: list[float] = []
    out: Any = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times), out


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure grading per task, ours vs naive, for both domains."""
    results: list[dict[str, Any]] = []
    per_domain = 3 if quick else 8
    reps = 3 if quick else 5
    for domain in ("retail", "airline"):
        path, origin = _data_dir(domain)
        t0 = time.perf_counter()
        world = load_tau2_world(domain, path)
        load_ms = (time.perf_counter() - t0) * 1000.0
        with_writes = [
            t for t in world.tasks if any(world.tool_kind(a.name) == "write" for a in t.actions)
        ]
        step = max(1, len(with_writes) // per_domain)
        sample = with_writes[::step][:per_domain]
        ours: list[float] = []
        naive: list[float] = []
        for task in sample:
            o_ms, o_hash = _median_ms(
                lambda t=task, w=world: replay(w, golden_actions(t), t)[1].state_hash, reps
            )
            n_ms, n_hash = _median_ms(
                lambda t=task, d=domain, p=path: _naive(d, p, t), max(1, reps // 2)
            )
            if o_hash != n_hash:
                raise AssertionError(f"hash mismatch on {domain} task {task.id}")
            ours.append(o_ms)
            naive.append(n_ms)
        all_ms = [
            _median_ms(lambda t=t, w=world: replay(w, golden_actions(t), t)[1].state_hash, 1)[0]
            for t in world.tasks
        ]
        value, baseline = statistics.median(ours), statistics.median(naive)
        ratio = baseline / value if value > 0 else None
        results.append(
            {
                "name": f"tau2_{domain}_grade_per_task",
                "value": round(value, 3),
                "unit": "ms",
                "baseline": round(baseline, 3),
                "ratio": round(ratio, 1) if ratio else None,
                "target": f">= {TARGET_RATIO:.0f}x faster than fresh load + full dump + sha256",
                "met": bool(ratio and ratio >= TARGET_RATIO),
                "notes": (
                    f"{origin} data, median over {len(sample)} tasks with writes "
                    f"(ours {reps} reps, naive {max(1, reps // 2)}); identical hashes; "
                    f"all {len(world.tasks)} tasks: median {statistics.median(all_ms):.2f} ms"
                ),
            }
        )
        results.append(
            {
                "name": f"tau2_{domain}_world_load",
                "value": round(load_ms, 1),
                "unit": "ms",
                "baseline": None,
                "ratio": None,
                "target": "once per process (cached base)",
                "met": None,
                "notes": f"{origin} data: parse + type + serialise + hash checkpoints",
            }
        )
    return results


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
