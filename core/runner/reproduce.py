"""``driftbench reproduce``: the paper's experiments as named, resumable runs.

Every experiment is one or more ordinary sweeps (:class:`~core.model.run.RunSpec`) with a
deterministic name, so running the command again resumes whatever is unfinished and a finished
run is never played twice:

| experiment | what runs | paper |
|---|---|---|
| ``main`` | B0 A0 A1 A2 A3 × Rational × single fault × shifts on, the first model | Table 2 |
| ``backbones`` | the main grid per ``--model`` (the first model's is ``main``) | Fig. 3 |
| ``personas`` | the main grid × all five personas | Fig. 6, Fig. 12 / Table 9 |
| ``shifts`` | ``personas`` with silent shifts off (on = the ``personas`` run) | Fig. 11 / Table 8 |
| ``complexity`` | the main grid with k = 2 and k = 4 composites (k = 1 is ``main``) | Fig. 10 |
| ``earned_inferred`` | read from ``personas``: Earned vs Inferred per method | Fig. 9 (left) |
| ``aim_recovery`` | read from ``personas``: A0 → A3 change of Aim and Recovery | Fig. 9 (right) |

``estimate`` plays a small pilot (2 samples per benchmark, one seed, Rational, every method) per
model, measures calls and tokens per episode per method from the episodes' cost ledgers, and
prices the whole plan with litellm's local cost map (no network).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import ConfigError
from core.model.config import ProtocolConfig
from core.model.run import PERSONAS, RunOptions, RunSpec
from core.runner.plan import SampleSource, plan_keys, validate_spec
from core.store import Store

LADDER: tuple[str, ...] = ("B0", "A0", "A1", "A2", "A3")
"""The paper's method ladder (the rows of Table 2)."""

EXPERIMENTS: tuple[str, ...] = (
    "main",
    "backbones",
    "personas",
    "shifts",
    "complexity",
    "earned_inferred",
    "aim_recovery",
)
"""Experiment keys, in the order they run and are reported."""

PILOT_LIMIT = 2
"""Samples per benchmark of the ``--estimate`` pilot."""


def slug(model: str) -> str:
    """A run-name-safe form of a model spec (``openai/gpt-4o-mini`` → ``openai-gpt-4o-mini``)."""
    text = re.sub(r"[^A-Za-z0-9.]+", "-", model.split("@", 1)[0]).strip("-").lower()
    return text or "model"


@dataclass
class Experiment:
    """One experiment: its runs (by role) and the paper figures and tables it feeds."""

    key: str
    title: str
    paper: str
    runs: dict[str, RunSpec] = field(default_factory=dict)


@dataclass
class Plan:
    """Every experiment of a reproduction and the distinct runs they need."""

    name: str
    models: tuple[str, ...]
    benchmarks: tuple[str, ...]
    seeds: tuple[int, ...]
    limit: int | None
    experiments: list[Experiment]
    notes: list[str] = field(default_factory=list)

    def specs(self) -> list[RunSpec]:
        """The distinct runs, in first-use order (a shared run appears once)."""
        out: dict[str, RunSpec] = {}
        for e in self.experiments:
            for spec in e.runs.values():
                out.setdefault(spec.run_id(), spec)
        return list(out.values())


def make_plan(
    models: Sequence[str],
    benchmarks: Sequence[str],
    seeds: int,
    limit: int | None,
    name: str = "paper",
) -> Plan:
    """The runs of every experiment (nothing is played).

    Raises:
        ConfigError: No model, no benchmark, or fewer than one seed.
    """
    if not models:
        raise ConfigError("give at least one --model (or symbolic)", field="--model")
    if not benchmarks:
        raise ConfigError("give at least one benchmark", field="--benchmarks")
    if seeds < 1:
        raise ConfigError("must be at least 1", field="--seeds")
    first = models[0]

    def spec(role: str, model: str, **kw: Any) -> RunSpec:
        base: dict[str, Any] = {
            "name": f"{name}-{role}-{slug(model)}",
            "benchmarks": tuple(benchmarks),
            "methods": LADDER,
            "personas": ("rational",),
            "seeds": tuple(range(seeds)),
            "agent": model,
            "faults": "single",
            "limit": limit,
        }
        base.update(kw)
        return RunSpec(**base)

    main = spec("main", first)
    personas = spec("personas", first, personas=PERSONAS)
    off = spec("shifts-off", first, personas=PERSONAS, config=ProtocolConfig(shifts_enabled=False))
    exps = [
        Experiment("main", "Main grid", "Table 2", {"main": main}),
        Experiment(
            "backbones",
            "Backbone comparison",
            "Fig. 3",
            {m: (main if m == first else spec("main", m)) for m in dict.fromkeys(models)},
        ),
        Experiment("personas", "Persona sweep", "Fig. 6, Fig. 12 / Table 9", {"all": personas}),
        Experiment("shifts", "Shifts off vs on", "Fig. 11 / Table 8", {"on": personas, "off": off}),
        Experiment(
            "complexity",
            "Fault complexity",
            "Fig. 10",
            {
                "k1": main,
                "k2": spec("k2", first, faults="k2"),
                "k4": spec("k4", first, faults="k4"),
            },
        ),
        Experiment("earned_inferred", "Earned vs Inferred", "Fig. 9 (left)", {"all": personas}),
        Experiment("aim_recovery", "Aim → Recovery (A0 → A3)", "Fig. 9 (right)", {"all": personas}),
    ]
    return Plan(name, tuple(models), tuple(benchmarks), tuple(range(seeds)), limit, exps)


def prune_plan(store: Store, plan: Plan) -> None:
    """Drop benchmarks without composite samples from the k = 2 / 4 runs (noted in the plan).

    A benchmark whose store holds no k = 2 (or 4) samples cannot take part in Fig. 10 at
    that k; the run keeps the other benchmarks, or is left out when none remain.
    """
    from core.runner.plan import select_samples

    source = SampleSource(store)
    for exp in plan.experiments:
        if exp.key != "complexity":
            continue
        for role in [r for r in exp.runs if r in ("k2", "k4")]:
            spec = exp.runs[role]
            keep = tuple(b for b in spec.benchmarks if select_samples(source, spec, b))
            if keep == spec.benchmarks:
                continue
            gone = [b for b in spec.benchmarks if b not in keep]
            plan.notes.append(f"{role}: no {role} samples for {', '.join(gone)}; left out")
            if keep:
                exp.runs[role] = spec.model_copy(update={"benchmarks": keep})
            else:
                del exp.runs[role]


def validate_plan(store: Store, plan: Plan) -> dict[str, int]:
    """Check every run before anything plays; return episodes per run id.

    Benchmarks without composites are first pruned from the k = 2 / 4 runs
    (:func:`prune_plan`).

    Raises:
        ConfigError: A run selects no samples (names the flag), or a run name is taken.
    """
    from core.runner.plan import named_spec

    prune_plan(store, plan)
    source = SampleSource(store)
    out: dict[str, int] = {}
    for spec in plan.specs():
        validate_spec(store, spec)
        named_spec(store, spec)  # a name never attaches to another spec
        out[spec.run_id()] = len(plan_keys(source, spec))
    return out


def run_plan(
    store: Store,
    plan: Plan,
    options: RunOptions,
    *,
    say: Callable[[str], None] = lambda _: None,
) -> list[dict[str, Any]]:
    """Play (or resume) every run of the plan; one summary per run."""
    from core.runner import run_sweep
    from core.runner.plan import named_spec

    out = []
    specs = plan.specs()
    for i, spec in enumerate(specs, 1):
        spec = named_spec(store, spec)
        say(f"[{i}/{len(specs)}] {spec.display_name()}")
        res = run_sweep(store, spec, options)
        out.append(
            {
                "run": res.run,
                "run_id": res.run_id,
                "episodes": res.episodes,
                "completed": res.completed,
                "errors": res.errors,
                "seconds": round(res.seconds, 3),
                "cost_usd": round(res.cost_usd, 6),
                "status": res.status,
            }
        )
        if res.status == "paused":
            break
    return out


def _per_method(store: Store, run_id: str) -> dict[str, dict[str, float]]:
    """Mean provider calls and tokens per episode, per method, from the episodes' ledgers."""
    import json

    rows = store.conn.execute(
        "SELECT method, summary FROM episodes WHERE run_id=? AND status='ended'", (run_id,)
    ).fetchall()
    acc: dict[str, list[float]] = {}
    for method, summary in rows:
        try:
            ledger = (json.loads(summary or "{}") or {}).get("cost_by_role") or {}
        except ValueError:
            ledger = {}
        calls = sum(int(v.get("provider_calls") or 0) for v in ledger.values())
        prompt = sum(int(v.get("prompt_tokens") or 0) for v in ledger.values())
        completion = sum(int(v.get("completion_tokens") or 0) for v in ledger.values())
        a = acc.setdefault(str(method), [0.0, 0.0, 0.0, 0.0])
        a[0] += 1
        a[1] += calls
        a[2] += prompt
        a[3] += completion
    return {
        m: {"calls": a[1] / a[0], "prompt_tokens": a[2] / a[0], "completion_tokens": a[3] / a[0]}
        for m, a in acc.items()
        if a[0]
    }


def price_per_token(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token from litellm's local cost map (None when unknown)."""
    from core.model.run import is_symbolic_agent

    if is_symbolic_agent(model):
        return (0.0, 0.0)
    import litellm  # offline: core sets LITELLM_LOCAL_MODEL_COST_MAP before any import

    name = model.split("@", 1)[0]
    cands = [name, name.split("/", 1)[-1]]
    for c in cands:
        info = litellm.model_cost.get(c)
        if isinstance(info, dict) and "input_cost_per_token" in info:
            return (
                float(info.get("input_cost_per_token") or 0.0),
                float(info.get("output_cost_per_token") or 0.0),
            )
    return None


def estimate(
    store: Store, plan: Plan, episodes: dict[str, int], options: RunOptions
) -> dict[str, Any]:
    """Price the plan from a pilot per model (see the module docstring).

    Returns:
        ``{"episodes", "calls", "tokens", "cost_usd", "unpriced", "pilot": {model: {method:
        {"calls", "prompt_tokens", "completion_tokens"}}}, "by_run": [...]}``; ``cost_usd`` is
        None when a model has no price in the local cost map (listed under ``unpriced``).
    """
    from core.runner import run_sweep
    from core.runner.plan import named_spec

    pilot: dict[str, dict[str, dict[str, float]]] = {}
    for model in dict.fromkeys(s.agent for s in plan.specs()):
        spec = RunSpec(
            name=f"{plan.name}-pilot-{slug(model)}",
            benchmarks=plan.benchmarks,
            methods=LADDER,
            personas=("rational",),
            seeds=(0,),
            agent=model,
            faults="single",
            limit=PILOT_LIMIT,
        )
        spec = named_spec(store, spec)
        run_sweep(store, spec, options)
        pilot[model] = _per_method(store, spec.run_id())
    total_calls = total_tokens = 0.0
    cost: float | None = 0.0
    unpriced: list[str] = []
    by_run = []
    for spec in plan.specs():
        n = episodes.get(spec.run_id(), 0)
        per = pilot.get(spec.agent, {})
        per_method = n / max(1, len(spec.methods))
        calls = sum(per.get(m, {}).get("calls", 0.0) * per_method for m in spec.methods)
        p_tok = sum(per.get(m, {}).get("prompt_tokens", 0.0) * per_method for m in spec.methods)
        c_tok = sum(per.get(m, {}).get("completion_tokens", 0.0) * per_method for m in spec.methods)
        price = price_per_token(spec.agent)
        run_cost = None if price is None else p_tok * price[0] + c_tok * price[1]
        if run_cost is None:
            unpriced.append(spec.agent)
            cost = None
        elif cost is not None:
            cost += run_cost
        total_calls += calls
        total_tokens += p_tok + c_tok
        by_run.append(
            {
                "run": spec.display_name(),
                "episodes": n,
                "calls": round(calls, 1),
                "tokens": round(p_tok + c_tok, 1),
                "cost_usd": None if run_cost is None else round(run_cost, 6),
            }
        )
    return {
        "episodes": sum(episodes.values()),
        "calls": round(total_calls, 1),
        "tokens": round(total_tokens, 1),
        "cost_usd": None if cost is None else round(cost, 6),
        "unpriced": sorted(set(unpriced)),
        "pilot": pilot,
        "by_run": by_run,
    }
