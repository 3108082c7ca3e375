"""Real-model readiness: prompt size and prefix reuse per episode; wide LLM sweeps on Ray.

Prompts: a deterministic scripted model plays B0, A0, A1, A2 and RS on the three bundled
benchmarks (14 environment operations, a question where the method may ask, then an answer),
so episodes are long enough for the old renderer's observation window to move. Per method and
benchmark: prompt tokens per episode (characters / 4: no tokenizer offline) and the prefix
reuse of consecutive requests — the share of each previous request that the next one repeats
as its prefix (what a provider prompt cache can hit) — for the append-only conversation, with
the previous renderer (one re-rendered user message keeping the last 8 observations) as the
baseline in the same run.

Sweeps: B0 on the mock world against the fake OpenAI-compatible server (200 ms per
completion, in its own process), 64 and 256 concurrent episodes on the local backend (forked
processes) and on Ray (async actors, 2 workers; ``ray.init`` outside the measurement, actor
start-up inside). "Ideal" packs ``concurrency`` episodes per wave, each call taking exactly the
latency. Uncached clients: every call reaches the server.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from core.agents.llm_agent import LLMAgent
from core.agents.prompts import prefix_reuse, system_prompt, turn_prompt
from core.llm import ScriptedLLM
from core.model.run import RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store

BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")
METHODS = ("B0", "A0", "A1", "A2", "RS")
OPS = 14


def _reply(messages: list[dict[str, Any]], tools: Any) -> str:
    """Search/read OPS times (one question when allowed), then answer."""
    system = str(messages[0].get("content") or "")
    text = "\n".join(str(m.get("content") or "") for m in messages[1:])
    done = text.count("Action: Operation")
    asked = "Action: Clarify" in text
    if done >= OPS:
        return "Action: Answer\nFinal Answer: the best match found"
    if done == 2 and not asked and "Action: Clarify" in system:
        return "Action: Clarify\nContent: Which size and colour would you like?"
    if "search[" in system:
        return f"Action: Operation\n```\nsearch[teal shirt size {done}]\n```"
    tool = re.search(r"^- ([a-z_]+)\(", system, re.M)
    name = tool.group(1) if tool else "noop"
    return f'Action: Operation\n```\n{name}(user_id="user_{done}")\n```'


class _OldRender:
    """The previous renderer: system + one re-rendered user message (last 8 observations)."""

    def messages(self: Any, view: Any) -> list[dict[str, Any]]:
        intent = self.intent_feed() if (self.method.informed and self.intent_feed) else ""
        system = system_prompt(
            self.method, view.benchmark or self.benchmark, view.tools, intent=intent
        )
        user = turn_prompt(view, view.benchmark or self.benchmark, memory=self.memory)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _prompt_stats(old: bool) -> dict[tuple[str, str], dict[str, float]]:
    import core.agents.factory as factory

    llm = ScriptedLLM(_reply, cycle=True)
    saved = factory.LLMAgent, factory.InformedLLMAgent
    if old:
        factory.LLMAgent = type("OldLLMAgent", (_OldRender, LLMAgent), {})  # type: ignore[misc]
        factory.InformedLLMAgent = type(  # type: ignore[misc]
            "OldInformedLLMAgent", (_OldRender, saved[1]), {}
        )
    try:
        with tempfile.TemporaryDirectory() as d:
            store = Store.open(Path(d) / "s.db")
            spec = RunSpec(
                benchmarks=BENCHMARKS,
                methods=METHODS,
                personas=("rational",),
                seeds=(0,),
                agent="openai/bench-scripted",
                limit=2,
            )
            run_sweep(store, spec, RunOptions(concurrency=1, progress=False), client=llm)
            store.close()
    finally:
        factory.LLMAgent, factory.InformedLLMAgent = saved  # type: ignore[misc]
    by_ep: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    owner: dict[str, tuple[str, str]] = {}
    for call in llm.calls:
        msgs = call.messages
        sys_text = str(msgs[0]["content"])
        bench = (
            "webshop"
            if "online shop" in sys_text
            else ("tau2_airline" if "flight" in sys_text.lower() else "tau2_retail")
        )
        query = next(
            (ln for ln in str(msgs[1]["content"]).splitlines() if ln.startswith("USER:")), ""
        )
        method = _method_of(sys_text)
        key = f"{method}|{bench}|{query}"
        owner[key] = (method, bench)
        by_ep[key].append(msgs)
    out: dict[tuple[str, str], dict[str, float]] = {}
    grouped: dict[tuple[str, str], list[list[list[dict[str, Any]]]]] = defaultdict(list)
    for key, reqs in by_ep.items():
        grouped[owner[key]].append(reqs)
    for cell, episodes in grouped.items():
        tokens = [sum(len(str(m.get("content") or "")) for r in e for m in r) / 4 for e in episodes]
        out[cell] = {
            "tokens": statistics.mean(tokens),
            "reuse": statistics.mean(prefix_reuse(e) for e in episodes),
            "cached_share": statistics.mean(prefix_reuse(e, of="current") for e in episodes),
            "requests": statistics.mean(len(e) for e in episodes),
        }
    return out


_GUIDANCE: dict[str, str] = {}


def _method_of(system: str) -> str:
    from core.agents.prompts import load_prompt

    if not _GUIDANCE:
        for m in METHODS:
            _GUIDANCE[m] = load_prompt(m).split("{", 1)[0].strip()[:80]
    for m, head in sorted(_GUIDANCE.items(), key=lambda kv: -len(kv[1])):
        if head and head in system:
            return m
    return "?"


def _sweep(server: Any, concurrency: int, episodes: int, backend: str) -> dict[str, float]:
    from bench.bench_runner import LATENCY_S, _llm_spec
    from core.llm import LLMClient, ModelSpec

    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "s.db")
        spec = _llm_spec(server.base_url, episodes)
        client = LLMClient(ModelSpec.parse(spec.agent))
        opts = RunOptions(
            concurrency=concurrency,
            workers=2,
            progress=False,
            backend=backend,  # type: ignore[arg-type]
        )
        before = server.count()
        t0 = time.perf_counter()
        res = run_sweep(store, spec, opts, client=client)
        dt = time.perf_counter() - t0
        calls = server.count() - before
        store.close()
    n = res.episodes
    ideal = -(-n // concurrency) * (calls / max(1, n)) * LATENCY_S
    return {"seconds": dt, "ideal": ideal, "calls": calls, "episodes": n}


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Prompt sizes and reuse by method × benchmark; 64/256-wide sweeps, local and Ray."""
    new, old = _prompt_stats(False), _prompt_stats(True)
    out: list[dict[str, Any]] = []
    for method, bench in sorted(new):
        n, o = new[(method, bench)], old.get((method, bench))
        out.append(
            {
                "name": f"prompt prefix reuse, {method} on {bench}",
                "value": round(n["reuse"], 4),
                "unit": "share of previous request",
                "baseline": round(o["reuse"], 4) if o else None,
                "ratio": round(n["reuse"] / o["reuse"], 4) if o and o["reuse"] else None,
                "target": ">= 0.9",
                "met": n["reuse"] >= 0.9,
                "notes": f"{n['requests']:.0f} requests/episode, {n['tokens']:.0f} prompt "
                f"tokens/episode (chars/4; old renderer {o['tokens']:.0f})"
                if o
                else "",
            }
        )
        out[-1]["notes"] += f"; cached share of each prompt {n['cached_share']:.2f}" + (
            f" (old {o['cached_share']:.2f})" if o else ""
        )
    from bench.bench_runner import _Server

    server = _Server(0.2)
    try:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
        _sweep(server, 8, 22, "local")  # imports and first sessions: not measured
        rows = []
        for conc, eps in ((64, 132 if quick else 264), (256, 512 if quick else 1024)):
            local = _sweep(server, conc, eps, "local")
            on_ray = _sweep(server, conc, eps, "ray")
            rows.append((conc, local, on_ray))
        ray.shutdown()
    finally:
        server.close()
    for conc, local, on_ray in rows:
        fl, fr = local["ideal"] / local["seconds"], on_ray["ideal"] / on_ray["seconds"]
        for backend, frac, r in (("local", fl, local), ("ray", fr, on_ray)):
            out.append(
                {
                    "name": f"LLM sweep at {conc} concurrent episodes, {backend} backend",
                    "value": round(frac, 4),
                    "unit": "fraction of ideal",
                    "baseline": round(fl, 4) if backend == "ray" else None,
                    "ratio": round(fr / fl, 4) if backend == "ray" and fl else None,
                    "target": "report",
                    "met": None,
                    "notes": f"{int(r['episodes'])} episodes, {int(r['calls'])} calls, "
                    f"{r['seconds']:.2f}s vs ideal {r['ideal']:.2f}s (fake server, 200 ms)"
                    + ("; baseline = the local backend in the same run" if backend == "ray" else "")
                    + ("; Ray actor start-up included" if backend == "ray" else ""),
                }
            )
    return out
