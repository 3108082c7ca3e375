"""Runner throughput: symbolic sweeps (warm process pool vs one process) and LLM sweeps.

Symbolic: the bundled grid (webshop, tau2_retail, tau2_airline × B0/A0/A2 × 5 personas × 1
seed × N samples), every event written to SQLite. The one-off start-up (loading the bundled
samples and worlds, once per process) is measured separately and excluded from the rates; the
paper-sized grid (150k episodes) is extrapolated from the pool's rate plus that start-up.

LLM: B0 on the mock world against the fake OpenAI-compatible server (200 ms per completion),
run in its own process so its CPU is not charged to the engine. Calls take the direct
OpenAI-compatible path (``core.llm.openai_http``); the 64-wide sweep is also run through litellm
(``DRIFTBENCH_LLM_TRANSPORT=litellm``) as the baseline, and in one process. "Ideal" packs
``concurrency`` episodes per wave, each call taking exactly the latency. Measured sweeps use an
uncached client (every call reaches the server); a separate sweep with the store's response
cache is re-run under another run id and must make zero provider calls.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.model.run import PERSONAS, RunOptions, RunSpec
from core.paths import PROJECT_ROOT
from core.runner import run_sweep
from core.store import Store

BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")
PAPER_GRID = 150_000
LATENCY_S = 0.2


def _grid(limit: int) -> RunSpec:
    return RunSpec(
        benchmarks=BENCHMARKS,
        methods=("B0", "A0", "A2"),
        personas=PERSONAS,
        seeds=(0,),
        limit=limit,
    )


def _startup(spec: RunSpec) -> float:
    """Load the bundled samples and worlds once (what every sweep process pays first)."""
    from core.runner.plan import SampleSource, load_world, select_samples

    t0 = time.perf_counter()
    source = SampleSource(None)
    for b in spec.benchmarks:
        load_world(b)
        select_samples(source, spec, b)
    return time.perf_counter() - t0


def _symbolic(spec: RunSpec, workers: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "s.db")
        t0 = time.perf_counter()
        res = run_sweep(store, spec, RunOptions(workers=workers, progress=False))
        dt = time.perf_counter() - t0
        store.close()
        assert res.completed == res.episodes, res
        return res.episodes / dt, res.episodes


_SERVER = """
import sys
from tests.fakes.openai_server import FakeOpenAIServer
server = FakeOpenAIServer(latency_s=float(sys.argv[1])).start()
server.responder = lambda body: "Action: Answer\\nFinal Answer: done"
print(server.base_url, flush=True)
for _ in sys.stdin:
    print(server.request_count, flush=True)
server.stop()
"""


class _Server:
    """The fake server in a child process; ``count()`` asks it how many calls it answered."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and test fake
            [sys.executable, "-c", _SERVER, str(latency)],
            cwd=PROJECT_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()

    def count(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("?\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _llm_spec(base_url: str, episodes: int) -> RunSpec:
    return RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=tuple(range(max(1, episodes // 11))),  # 11 mock samples per seed
        agent=f"openai/bench-model@{base_url}",
    )


def _timed_client(spec: RunSpec) -> Any:
    """An uncached client (every call reaches the server) that adds up time spent in calls."""
    from core.llm import LLMClient, ModelSpec

    class Timed(LLMClient):
        inside = 0.0

        async def acomplete(self, *a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await super().acomplete(*a, **k)
            finally:
                Timed.inside += time.perf_counter() - t0

    return Timed(ModelSpec.parse(spec.agent))


def _llm(
    server: _Server,
    concurrency: int,
    episodes: int,
    workers: int | None = None,
    transport: str = "auto",
) -> dict[str, float]:
    from core.llm.openai_http import TRANSPORT_ENV

    old = os.environ.get(TRANSPORT_ENV)
    os.environ[TRANSPORT_ENV] = transport
    try:
        return _llm_sweep(server, concurrency, episodes, workers)
    finally:
        if old is None:
            os.environ.pop(TRANSPORT_ENV, None)
        else:
            os.environ[TRANSPORT_ENV] = old


def _llm_sweep(
    server: _Server, concurrency: int, episodes: int, workers: int | None
) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "s.db")
        spec = _llm_spec(server.base_url, episodes)
        client = _timed_client(spec)
        opts = RunOptions(concurrency=concurrency, workers=workers, progress=False)
        before = server.count()
        t0 = time.perf_counter()
        res = run_sweep(store, spec, opts, client=client)
        dt = time.perf_counter() - t0
        calls = server.count() - before
        store.close()
    n = res.episodes
    per_ep = calls / max(1, n)
    ideal = -(-n // concurrency) * per_ep * LATENCY_S
    return {
        "seconds": dt,
        "ideal": ideal,
        "calls": calls,
        "episodes": n,
        "inside": type(client).inside,  # time in client calls (this process only)
    }


def _cached_rerun(server: _Server) -> tuple[int, int]:
    """A sweep with the store's response cache, then the same prompts under another run id."""
    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "s.db")
        spec = _llm_spec(server.base_url, 22)
        opts = RunOptions(concurrency=8, progress=False)
        before = server.count()
        run_sweep(store, spec, opts)
        first = server.count() - before
        res = run_sweep(store, spec.model_copy(update={"a3_generation_size": 7}), opts)
        again = server.count() - before - first
        store.close()
        assert res.completed == res.episodes
    return first, again


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure runner throughput (medians of repetitions)."""
    reps = 1 if quick else 3
    spec = _grid(10 if quick else 40)
    startup = _startup(spec)
    _symbolic(_grid(2), 1)  # warm imports and per-process caches
    single = [_symbolic(spec, 1) for _ in range(reps)]
    pool = [_symbolic(spec, 2) for _ in range(reps)]
    pool_eps = statistics.median(p[0] for p in pool)
    single_eps = statistics.median(s[0] for s in single)
    n_eps = pool[0][1]
    paper_s = startup + PAPER_GRID / pool_eps
    out: list[dict[str, Any]] = [
        {
            "name": "symbolic sweep throughput (2-process pool)",
            "value": pool_eps,
            "unit": "episodes/s",
            "baseline": single_eps,
            "ratio": pool_eps / single_eps if single_eps else None,
            "target": ">= 200 episodes/s",
            "met": pool_eps >= 200,
            "notes": f"{n_eps} episodes (3 bundled benchmarks x B0/A0/A2 x 5 personas x 1 seed "
            f"x {spec.limit} samples), every event written to SQLite; baseline = one process "
            f"({single_eps:.0f} eps/s); start-up {startup:.1f}s excluded; median of {reps}",
        },
        {
            "name": "paper-sized symbolic grid (150k episodes), extrapolated",
            "value": paper_s / 60,
            "unit": "minutes",
            "baseline": (startup + PAPER_GRID / single_eps) / 60,
            "ratio": (startup + PAPER_GRID / single_eps) / paper_s,
            "target": "report",
            "met": None,
            "notes": f"start-up {startup:.1f}s + {PAPER_GRID} / {pool_eps:.0f} eps/s (pool); "
            "baseline = one process",
        },
    ]
    server = _Server(LATENCY_S)
    try:
        _llm(server, 1, 11)  # imports, first HTTP session: outside the measurements
        one = _llm(server, 1, 11)
        eight = _llm(server, 8, 88)
        n64 = 132 if quick else 264
        wide = [_llm(server, 64, n64) for _ in range(reps)]
        wide_single = _llm(server, 64, n64, workers=1)
        _llm(server, 1, 11, transport="litellm")  # import litellm's HTTP stack: not measured
        wide_litellm = _llm(server, 64, n64, transport="litellm")
        first, cached = _cached_rerun(server)
    finally:
        server.close()
    w = sorted(wide, key=lambda r: r["ideal"] / r["seconds"])[len(wide) // 2]
    frac_single = wide_single["ideal"] / wide_single["seconds"]
    frac_litellm = wide_litellm["ideal"] / wide_litellm["seconds"]
    for conc, r in ((1, one), (8, eight), (64, w)):
        frac = r["ideal"] / r["seconds"]
        out.append(
            {
                "name": f"LLM sweep at {conc} concurrent episodes (fake server, 200 ms)",
                "value": frac,
                "unit": "fraction of ideal",
                "baseline": frac_litellm if conc == 64 else None,
                "ratio": frac / frac_litellm if conc == 64 and frac_litellm else None,
                "target": ">= 0.8 at 64" if conc == 64 else "report",
                "met": (frac >= 0.8) if conc == 64 else None,
                "notes": f"{int(r['episodes'])} episodes, {int(r['calls'])} calls, "
                f"{r['seconds']:.2f}s vs ideal {r['ideal']:.2f}s"
                + (
                    f"; baseline = the same sweep through litellm ({frac_litellm:.2f}); "
                    f"in one process: {frac_single:.2f}; median of {reps}"
                    if conc == 64
                    else ""
                ),
            }
        )
    calls1 = max(1, one["calls"])
    engine_ms = (one["seconds"] - one["inside"]) / calls1 * 1000
    client_ms = (one["inside"] - one["calls"] * LATENCY_S) / calls1 * 1000
    out.append(
        {
            "name": "engine overhead per LLM call",
            "value": engine_ms,
            "unit": "ms",
            "baseline": client_ms,
            "ratio": None,
            "target": "< 5 ms",
            "met": engine_ms < 5,
            "notes": "concurrency 1: (wall - time inside client calls) / calls: prompts, "
            "parsing, episode steps, store writes; baseline column = the LLM client's own "
            "overhead per call (time inside the call - 200 ms: request body, HTTP, reply parsing)",
        }
    )
    out.append(
        {
            "name": "cached LLM re-run: provider calls",
            "value": float(cached),
            "unit": "calls",
            "baseline": float(first),
            "ratio": None,
            "target": "0",
            "met": cached == 0,
            "notes": "22 episodes with the store's response cache, then the same prompts under "
            "another run id; baseline = calls of the first run",
        }
    )
    return out


if __name__ == "__main__":
    for row in run(quick="--quick" in sys.argv):
        print(row)
