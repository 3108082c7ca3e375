"""Construction benchmarks: graph building, generate-then-verify, bundled loading."""

from __future__ import annotations

import statistics
import time
from typing import Any


def _median(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run(quick: bool = False) -> list[dict[str, Any]]:
    from core.construction.pipeline import build_graphs, build_samples, bundled_world, load_bundled

    reps = 2 if quick else 5
    world = bundled_world("tau2_airline")
    graphs, _ = build_graphs(world)
    t_graphs = _median(lambda: build_graphs(world), reps)
    t_samples = _median(lambda: build_samples(world, graphs), reps)
    n_samples = len(build_samples(world, graphs)[0])
    load_bundled.cache_clear()
    t_cold = _median(lambda: (load_bundled.cache_clear(), load_bundled("tau2_retail")), reps)
    t_warm = _median(lambda: load_bundled("tau2_retail"), reps)
    return [
        {
            "name": "build_graphs tau2_airline (bundled)",
            "value": t_graphs,
            "unit": "s",
            "baseline": None,
            "ratio": None,
            "target": "< 5 s",
            "met": t_graphs < 5,
            "notes": f"{len(graphs)} graphs",
        },
        {
            "name": "build_samples k=1 tau2_airline (template + rule)",
            "value": t_samples / max(1, n_samples) * 1000,
            "unit": "ms/sample",
            "baseline": None,
            "ratio": None,
            "target": "< 50 ms/sample",
            "met": t_samples / max(1, n_samples) < 0.05,
            "notes": f"{n_samples} samples in {t_samples:.2f} s",
        },
        {
            "name": "load_bundled tau2_retail (cached)",
            "value": t_warm,
            "unit": "s",
            "baseline": t_cold,
            "ratio": t_cold / t_warm if t_warm else None,
            "target": "cached load < 10% of cold load",
            "met": t_warm < 0.1 * t_cold,
            "notes": "baseline = cold load (parse + validate)",
        },
    ]
