"""LLM construction: calls per admitted sample and concurrency, against the fake server.

``build samples`` with a language-model writer and two language-model extractors on bundled
τ² retail graphs, through the real client and HTTP to the fake OpenAI-compatible server with a
fixed per-call latency (the relays of :mod:`bench.build_relay` answer as the offline writer and
extractors would, so the counts measure the pipeline, not a model). Baseline: the same build
one graph at a time, in the same run.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

LATENCY_S = 0.5
CONCURRENCY = 8


def run(quick: bool = False) -> list[dict[str, Any]]:
    from bench.build_relay import relay_build
    from core.construction.pipeline import build_graphs, bundled_world
    from tests.fakes.openai_server import FakeOpenAIServer

    os.environ.setdefault("DRIFTBENCH_HOME", tempfile.mkdtemp(prefix="bench-build-llm-"))
    world = bundled_world("tau2_retail")
    graphs = sorted(build_graphs(world)[0], key=lambda g: g.graph_id)[: 8 if quick else 32]
    with FakeOpenAIServer(latency_s=LATENCY_S) as server:
        server.responder = lambda body: "ok"
        seq = relay_build(world, graphs, server.base_url, concurrency=1)
        par = relay_build(world, graphs, server.base_url, concurrency=CONCURRENCY)
    speedup = seq["seconds"] / par["seconds"] if par["seconds"] else None
    # graphs are the units (a graph's calls are sequential, for its own random stream): with
    # n graphs on c slots the best possible speedup is n / ceil(n / c) (19 on 8: 6.33x)
    n = len(graphs)
    ideal = n / -(-n // CONCURRENCY)
    efficiency = speedup / ideal if speedup else None
    return [
        {
            "name": "build samples k=1 tau2_retail, LLM writer + 2 LLM extractors (relay fake)",
            "value": par["calls_per_sample"],
            "unit": "calls/admitted sample",
            "baseline": None,
            "ratio": None,
            "target": "<= 6",
            "met": par["calls_per_sample"] is not None and par["calls_per_sample"] <= 6,
            "notes": f"{par['calls']} calls, {par['candidates']} candidates, {par['samples']} "
            f"samples on {len(graphs)} graphs",
        },
        {
            "name": f"build samples concurrency {CONCURRENCY} vs 1 ({LATENCY_S:g} s per call)",
            "value": par["seconds"],
            "unit": "s",
            "baseline": seq["seconds"],
            "ratio": speedup,
            "target": f">= 0.8 of ideal ({ideal:.2f}x for {n} graphs on {CONCURRENCY})",
            "met": efficiency is not None and efficiency >= 0.8,
            "notes": f"efficiency {efficiency:.2f} of ideal ({speedup / CONCURRENCY:.2f} of "
            f"{CONCURRENCY}x); calls in flight on average "
            f"{par['busy_seconds'] / par['seconds']:.1f}",
        },
    ]
