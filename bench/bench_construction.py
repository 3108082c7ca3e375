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
    verify_rows = _verify_and_resolve(reps)
    return [
        *verify_rows,
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


def _verify_and_resolve(reps: int) -> list[dict[str, Any]]:
    """``verify`` per sample, and what resolving each sample's world adds to reading it."""
    import tempfile
    from pathlib import Path

    from core.construction import verify as V
    from core.construction import worlds as W
    from core.construction.pipeline import load_bundled
    from core.model.sample import Sample
    from core.runner.plan import SampleSource
    from core.store import Store

    world = W.bundled("tau2_airline").world
    graphs, samples = load_bundled("tau2_airline")
    by_id = {g.graph_id: g for g in graphs}

    def verify_all() -> None:
        V.clear_cache()
        for s in samples:
            assert V.verify_sample(world, s, by_id[s.graph_id]) is None

    t_verify = _median(verify_all, max(1, reps // 2))
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "b.db")
        store.put_graphs_and_samples(graphs, samples, source="bundled")
        ids = [s.sample_id for s in samples]

        class _NoWorlds(SampleSource):
            """The reads as they were before samples named their world."""

            def _resolve(self, sample: Sample) -> None:
                return None

        def parse_only() -> None:
            src = _NoWorlds(store)
            for sid in ids:
                src.sample("tau2_airline", sid)

        def read_and_resolve() -> None:
            src = SampleSource(store)
            for sid in ids:
                src.world(src.sample("tau2_airline", sid))

        t_parse = _median(parse_only, 3 * reps)
        t_resolve = _median(read_and_resolve, 3 * reps)
        store.close()
    per = t_verify / max(1, len(samples)) * 1000
    return [
        {
            "name": "verify bundled tau2_airline (graph checks + one ORACLE episode per sample)",
            "value": per,
            "unit": "ms/sample",
            "baseline": None,
            "ratio": None,
            "target": "< 50 ms/sample",
            "met": per < 50,
            "notes": f"{len(samples)} samples in {t_verify:.2f} s, graph checks cached per graph",
        },
        {
            "name": "read + resolve the world of every sample (SampleSource)",
            "value": t_resolve,
            "unit": "s",
            "baseline": t_parse,
            "ratio": t_resolve / t_parse if t_parse else None,
            "target": "< 1.25 x the same reads without world resolution",
            "met": t_resolve < 1.25 * t_parse,
            "notes": f"{len(samples)} samples; baseline = SampleSource reads with resolution off",
        },
    ]
