"""Runner throughput: symbolic sweeps (pool vs single process) and LLM sweeps (asyncio)."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store


def _bench_benchmark() -> str:
    try:
        from core.construction import load_bundled

        load_bundled("tau2_retail")
        return "tau2_retail"
    except Exception:  # noqa: BLE001 - fall back to the mock world
        return "mock"


def _symbolic(workers: int, limit: int, seeds: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "s.db")
        spec = RunSpec(
            benchmarks=(_bench_benchmark(),),
            methods=("B0", "A0", "A2", "RS"),
            personas=PERSONAS,
            seeds=tuple(range(seeds)),
            limit=limit,
        )
        t0 = time.perf_counter()
        res = run_sweep(store, spec, RunOptions(workers=workers, progress=False))
        dt = time.perf_counter() - t0
        store.close()
        return res.episodes / dt, res.episodes


def _llm(concurrency: int, episodes: int, latency: float) -> dict[str, float]:
    from tests.fakes.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=latency) as server, tempfile.TemporaryDirectory() as d:
        server.responder = lambda body: "Action: Answer\nFinal Answer: done"
        store = Store.open(Path(d) / "s.db")
        n_seeds = max(1, episodes // 11)
        spec = RunSpec(
            benchmarks=("mock",),
            methods=("B0",),
            personas=("rational",),
            seeds=tuple(range(n_seeds)),
            agent=f"openai/bench-model@{server.base_url}",
        )
        from core.llm import LLMClient, ModelSpec

        client = LLMClient(ModelSpec.parse(spec.agent))  # no cache: every call reaches the server
        client.complete([{"role": "user", "content": "warm-up"}])  # import litellm first
        server.requests.clear()
        t0 = time.perf_counter()
        res = run_sweep(
            store, spec, RunOptions(concurrency=concurrency, progress=False), client=client
        )
        dt = time.perf_counter() - t0
        calls = len(server.requests)
        rows = store.episode_rows(run_id=res.run_id)
        per_ep = calls / max(1, len(rows))
        # ideal: every call waits exactly `latency`, `concurrency` episodes perfectly packed
        waves = -(-len(rows) // concurrency)
        ideal = waves * per_ep * latency
        store.close()
        return {"seconds": dt, "ideal": ideal, "calls": calls, "episodes": len(rows)}


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure runner throughput (medians of repetitions)."""
    reps = 1 if quick else 3
    limit, seeds = (4, 1) if quick else (8, 2)
    pool = [_symbolic(2, limit, seeds) for _ in range(reps)]
    single = [_symbolic(1, limit, seeds) for _ in range(reps)]
    pool_eps = statistics.median(p[0] for p in pool)
    single_eps = statistics.median(s[0] for s in single)
    out: list[dict[str, Any]] = [
        {
            "name": "symbolic sweep throughput (2-process pool)",
            "value": pool_eps,
            "unit": "episodes/s",
            "baseline": single_eps,
            "ratio": pool_eps / single_eps if single_eps else None,
            "target": ">= 200 episodes/s",
            "met": pool_eps >= 200,
            "notes": f"{pool[0][1]} episodes ({_bench_benchmark()}, B0/A0/A2/RS x 5 personas); "
            "baseline = single process; includes writing every event to SQLite",
        }
    ]
    latency = 0.2
    n = 22 if quick else 66
    one = _llm(1, 11, latency)
    overhead_ms = (one["seconds"] - one["ideal"]) / max(1, one["calls"]) * 1000
    for conc in (1, 8, 64):
        r = one if conc == 1 else _llm(conc, n, latency)
        frac = r["ideal"] / r["seconds"]
        out.append(
            {
                "name": f"LLM sweep at {conc} concurrent episodes (fake server, 200 ms)",
                "value": frac,
                "unit": "fraction of ideal",
                "baseline": None,
                "ratio": None,
                "target": ">= 0.8 at 64" if conc == 64 else "report",
                "met": (frac >= 0.8) if conc == 64 else None,
                "notes": f"{int(r['episodes'])} episodes, {int(r['calls'])} calls, "
                f"{r['seconds']:.2f}s vs ideal {r['ideal']:.2f}s",
            }
        )
    out.append(
        {
            "name": "engine overhead per LLM call",
            "value": overhead_ms,
            "unit": "ms",
            "baseline": latency * 1000,
            "ratio": None,
            "target": "report (small against model latency)",
            "met": None,
            "notes": "concurrency 1: (wall - calls x latency) / calls",
        }
    )
    return out


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
