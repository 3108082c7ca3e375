"""Seconds, tokens and malformed rates per episode per method with the default local model.

Not part of ``python -m bench`` (it needs ``make local`` and minutes of CPU). Usage::

    python -m bench.local_ladder [--turn-cap 6] [--benchmarks webshop,tau2_retail]

Starts ``driftbench models local`` in a scratch home, plays one episode per benchmark × method
(JSON format; B0 also in the paper's text format) one after the other, the same episodes with
the symbolic policies, and reads the server's log for prompt-prefix reuse (prompt tokens the
server did not have to evaluate again). Prints a Markdown table (docs/MODELS.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any


def _config(turn_cap: int) -> Any:
    from core.model.config import BenchmarkProtocol, ProtocolConfig

    base = ProtocolConfig()
    caps = {
        n: BenchmarkProtocol(**{**b.model_dump(), "turn_cap": turn_cap})
        for n, b in base.benchmarks.items()
    }
    return base.model_copy(update={"benchmarks": caps})


def _episode(store: Any, spec: Any) -> dict[str, Any]:
    from core.model.run import RunOptions
    from core.runner import run_sweep

    t0 = time.perf_counter()
    run_sweep(store, spec, RunOptions(progress=False, concurrency=1))
    seconds = time.perf_counter() - t0
    (row,) = store.episode_rows(run_id=spec.run_id())
    events = [json.loads(b) for b in store.event_jsons(row["episode_id"])]
    actions = [e for e in events if e["kind"] == "agent_action"]
    malformed = sum(1 for a in actions if a["action"]["kind"] == "malformed")
    summary = json.loads(
        store.conn.execute(
            "SELECT summary FROM episodes WHERE episode_id=?", (row["episode_id"],)
        ).fetchone()[0]
        or "{}"
    )
    ledger = summary.get("cost_by_role") or {}
    tokens = sum(
        int(r.get("prompt_tokens", 0)) + int(r.get("completion_tokens", 0)) for r in ledger.values()
    )
    calls = sum(int(r.get("provider_calls", 0)) for r in ledger.values())
    return {
        "seconds": round(seconds, 1),
        "outcome": row["outcome"],
        "actions": len(actions),
        "malformed": malformed,
        "tokens": tokens,
        "calls": calls,
        "s_per_call": round(sum(float(r.get("seconds", 0)) for r in ledger.values()) / calls, 1)
        if calls
        else None,
    }


_EVAL = re.compile(r"task (\d+) \| prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
_STOP = re.compile(r"task (\d+) \| stop processing: n_tokens = (\d+)")
_GEN = re.compile(r"task (\d+) \| n_gen =\s*(\d+)")


def prefix_reuse(log_text: str) -> tuple[int, int]:
    """(prompt tokens evaluated, prompt tokens in all) over the server's calls."""
    evaluated: dict[str, int] = {}
    total: dict[str, int] = {}
    gen: dict[str, int] = {}
    for m in _EVAL.finditer(log_text):
        evaluated[m.group(1)] = int(m.group(2))
    for m in _GEN.finditer(log_text):
        gen[m.group(1)] = max(gen.get(m.group(1), 0), int(m.group(2)))
    for m in _STOP.finditer(log_text):
        total[m.group(1)] = int(m.group(2)) - gen.get(m.group(1), 0)
    tasks = [t for t in total if t in evaluated and total[t] > 8]
    return sum(evaluated[t] for t in tasks), sum(total[t] for t in tasks)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.local_ladder")
    p.add_argument("--turn-cap", type=int, default=6)
    p.add_argument("--benchmarks", default="webshop,tau2_retail")
    p.add_argument("--methods", default="B0,A0,A2")
    args = p.parse_args(argv)
    os.environ["DRIFTBENCH_HOME"] = tempfile.mkdtemp(prefix="local-ladder-")
    from core.llm import local
    from core.llm.models import configure, run_models
    from core.model.run import RunSpec
    from core.store import Store
    from core.studio.bootstrap import load_bundled_samples

    state = local.start(max_tokens=192)
    configure(state["models_file"])
    store = Store.open(Path(os.environ["DRIFTBENCH_HOME"]) / "ladder.db")
    load_bundled_samples(store)
    rows = []
    try:
        for bench in args.benchmarks.split(","):
            for method in args.methods.split(","):
                for fmt in ("json", "text") if method == "B0" else ("json",):
                    for agent in (state["spec"], "symbolic"):
                        if agent == "symbolic" and fmt == "text":
                            continue
                        spec = RunSpec(
                            name=f"{bench}-{method}-{fmt}-{agent[:8]}",
                            benchmarks=(bench,),
                            methods=(method,),
                            personas=("rational",),
                            seeds=(0,),
                            agent=agent,
                            limit=1,
                            action_format=fmt if agent != "symbolic" else None,
                            config=_config(args.turn_cap),
                            models=run_models({"agent": agent}) if agent != "symbolic" else None,
                        )
                        got = _episode(store, spec)
                        got.update(
                            benchmark=bench,
                            method=method,
                            format=fmt,
                            agent="SmolLM2-135M" if agent != "symbolic" else "symbolic",
                        )
                        rows.append(got)
                        print(json.dumps(got), flush=True)
        log = Path(state["log"]).read_text(errors="replace")
    finally:
        local.stop()
    evaluated, total = prefix_reuse(log)
    print(
        "\n| benchmark | method | agent | format | outcome | actions | malformed | calls | "
        "tokens | seconds | s/call |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['benchmark']} | {r['method']} | {r['agent']} | {r['format']} | "
            f"{r['outcome']} | {r['actions']} | {r['malformed']} | {r['calls']} | "
            f"{r['tokens']} | {r['seconds']} | {r['s_per_call'] or '—'} |"
        )
    if total:
        print(
            f"\nserver prompt-prefix reuse: {1 - evaluated / total:.1%} of {total} prompt "
            f"tokens were not evaluated again ({evaluated} evaluated)"
        )
    print(f"server start to first answer: {state['seconds_to_ready']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
