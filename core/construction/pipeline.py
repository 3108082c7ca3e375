"""Benchmark construction: graphs and verified samples from host worlds, bundled data, reports.

Public API (called by the CLI and the rest of the engine):

* :func:`build_graphs` — intent graphs for every seed of a world.
* :func:`build_samples` — generate-then-verify faulty requests (k = 1, 2 or 4 faults).
* :func:`build_bundled` / :func:`load_bundled` — the committed benchmark under
  ``data/benchmark/<benchmark>/`` (gzip, mtime 0, byte-identical rebuilds).
* :func:`construction_report` — Table-4-shaped statistics.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.construction.bundle_io import (
    read_graphs,
    read_samples,
    write_graphs,
    write_samples,
)
from core.construction.concurrent import map_graphs
from core.construction.splits import split_of, task_splits
from core.envs.base import HostWorld
from core.errors import ConfigError
from core.faults.align import AlignmentExtractor
from core.faults.composite import assign_slots, draw_types
from core.faults.extract import Extractor, RuleExtractor
from core.faults.generate import (
    CandidateBudget,
    GenStats,
    attempts_for,
    extraction_context,
    generate_sample,
    sub_seed,
)
from core.faults.plan import FaultPlan, candidate_plans
from core.faults.taxonomy import draw_single
from core.faults.writer import TemplateWriter, Writer
from core.graph.build import build_all
from core.graph.classify import OPERATOR_ORDER
from core.graph.hosts import adapter_for
from core.graph.hosts.base import HostAdapter
from core.model.intent import IntentGraph, WorldRef
from core.model.reading import DOCUMENT, load_json
from core.model.sample import FaultType, Sample
from core.paths import DATA_DIR

BENCHMARKS: tuple[str, ...] = ("webshop", "tau2_retail", "tau2_airline")
"""The three bundled benchmarks."""

BUNDLED_DIR = DATA_DIR / "benchmark"

BUNDLED_PLAN: dict[str, dict[str, Any]] = {
    # per_graph for single faults (None = one per applicable type), composite draws per graph
    "webshop": {"per_graph": None, "k2": 1, "k4": 1},
    "tau2_retail": {"per_graph": 30, "k2": 3, "k4": 3},
    "tau2_airline": {"per_graph": 30, "k2": 3, "k4": 3},
    "mock": {"per_graph": None, "k2": 1, "k4": 1},
}


# ---------------------------------------------------------------------------------- worlds
def host_task_count(world: HostWorld) -> int:
    """Number of host tasks of a world (τ² tasks, shop goals; else its seeds)."""
    return world.task_count()


# ---------------------------------------------------------------------------------- graphs
def build_graphs(
    world: HostWorld,
    *,
    seed: int = 42,
    branching: int = 8,
    limit: int | None = None,
    ref: WorldRef | None = None,
) -> tuple[list[IntentGraph], dict[str, Any]]:
    """Build one intent graph per admissible seed of ``world``.

    Args:
        world: A loaded host world.
        seed: Seed of enumeration order and ranking tie-breaks.
        branching: Children per graph (balanced ``branching // 4`` per operator).
        limit: Only the first ``limit`` seeds (tests).
        ref: The world's reference, recorded on every graph (None: not recorded).

    Returns:
        ``(graphs sorted by id, stats)`` with stats keys ``benchmark``, ``host_tasks``,
        ``tasks`` (seeds), ``executable_seeds``, ``graphs``, ``by_operator``, ``candidates``,
        the policy gate's removals and admission counters.
    """
    adapter = adapter_for(world)
    graphs, st = build_all(adapter, seed=seed, branching=branching, limit=limit)
    if ref is not None:
        graphs = [g.model_copy(update={"world": ref}) for g in graphs]
    stats: dict[str, Any] = {
        "benchmark": world.benchmark,
        "host_tasks": host_task_count(world),
        **st.as_dict(),
    }
    return graphs, stats


# ---------------------------------------------------------------------------------- samples
LLM_CANDIDATES_PER_SAMPLE = 4
"""Default candidate allowance of a language-model build, per sample a graph wants."""

OFFLINE_EXTRACTORS = ("rule", "align")


def is_llm_build(writer: str, extractors: Sequence[str]) -> bool:
    """Whether a build calls a language model (writer or any extractor)."""
    return writer != "template" or any(e not in OFFLINE_EXTRACTORS for e in extractors)


def make_writer(spec: str, temperature: float | None = None) -> Writer:
    """``template`` → the offline writer; anything else is an LLM model spec.

    Args:
        spec: ``template`` or a model spec (settings from the models file's entry).
        temperature: Sampling temperature of an LLM writer (None: the models file's, else
            0.7, the reference's).
    """
    if spec == "template":
        return TemplateWriter()
    from core.faults.llm import LLMWriter

    writer: Writer = LLMWriter(spec, temperature=temperature)
    return writer


def make_extractor(spec: str, index: int = 0) -> Extractor:
    """``rule`` / ``align`` → the two offline extractors; anything else is an LLM model spec."""
    if spec == "rule":
        return RuleExtractor("rule")
    if spec == "align":
        return AlignmentExtractor("align")
    from core.faults.llm import LLMExtractor

    extractor: Extractor = LLMExtractor(spec)
    return extractor


def check_extractor_pair(extractors: tuple[str, str], *, allow_same_family: bool = False) -> None:
    """Refuse two extractors that are not independent.

    The same reader or model twice is refused, and (unless allowed) two models of one family
    (:mod:`core.model.families`).
    """
    from core.model.families import check_independent

    check_independent(
        extractors[0],
        extractors[1],
        what="extractors",
        field="extractors",
        allow_same_family=allow_same_family,
    )


def applicable_plans(
    adapter: HostAdapter, graph: IntentGraph, rng: random.Random
) -> dict[FaultType, list[FaultPlan]]:
    """Candidate plans per applicable fault type for a graph's root."""
    root = graph.root
    assert root.ground_truth is not None
    out: dict[FaultType, list[FaultPlan]] = {}
    for t in FaultType:
        plans = candidate_plans(adapter, root, root.ground_truth, t, random.Random(rng.random()))
        if plans:
            out[t] = plans
    return out


def _single_samples(
    adapter: HostAdapter,
    graph: IntentGraph,
    *,
    writer: Writer,
    extractors: tuple[Extractor, Extractor],
    seed: int,
    per_graph: int | None,
    stats: GenStats,
    frugal: bool = False,
    allowance: int | None = None,
) -> list[Sample]:
    rng = random.Random(sub_seed(seed, graph.graph_id, "k1"))
    options = applicable_plans(adapter, graph, rng)
    ctx = extraction_context(adapter, graph)
    budget = per_graph if per_graph is not None else len(options)
    cap = CandidateBudget(allowance * max(1, budget)) if allowance is not None else None
    out: list[Sample] = []
    seen: set[str] = set()
    rounds = 0
    while len(out) < budget and rounds < 8:
        remaining = set(options)
        while remaining and len(out) < budget:
            t = draw_single(rng, remaining)
            assert t is not None
            remaining.discard(t)
            plans = options[t]
            if rounds >= len(plans):
                continue
            rotated = plans[rounds:] + plans[:rounds]
            s = generate_sample(
                adapter,
                graph,
                [(p,) for p in rotated],
                writer=writer,
                extractors=extractors,
                rng=rng,
                attempts=attempts_for([t]),
                stats=stats,
                ctx=ctx,
                frugal=frugal,
                budget=cap,
            )
            if s is not None and s.sample_id not in seen:
                seen.add(s.sample_id)
                out.append(s)
        rounds += 1
        if per_graph is None:
            break
    return out


def _composite_samples(
    adapter: HostAdapter,
    graph: IntentGraph,
    *,
    k: int,
    writer: Writer,
    extractors: tuple[Extractor, Extractor],
    seed: int,
    draws: int,
    stats: GenStats,
    frugal: bool = False,
    allowance: int | None = None,
) -> list[Sample]:
    rng = random.Random(sub_seed(seed, graph.graph_id, f"k{k}"))
    cap = CandidateBudget(allowance * max(1, draws)) if allowance is not None else None
    options = applicable_plans(adapter, graph, rng)
    root = graph.root
    assert root.ground_truth is not None
    ctx = extraction_context(adapter, graph)
    out: list[Sample] = []
    seen: set[tuple[str, ...]] = set()
    for _ in range(draws * 3):
        if len(out) >= draws:
            break
        draw, broken = draw_types(
            sorted(options, key=lambda t: t.value), k, rng, len(root.conditions), adapter.host_class
        )
        stats.reasons.update(f"draw:{b}" for b in broken)
        if draw is None:
            break
        key = tuple(t.value for t in draw)
        if key in seen:
            continue
        seen.add(key)
        plan_sets = assign_slots(adapter, root, root.ground_truth, draw, rng)
        if not plan_sets:
            stats.reasons["assign:no slot assignment"] += 1
            continue
        s = generate_sample(
            adapter,
            graph,
            plan_sets,
            writer=writer,
            extractors=extractors,
            rng=rng,
            attempts=attempts_for(draw),
            stats=stats,
            ctx=ctx,
            frugal=frugal,
            budget=cap,
        )
        if s is not None:
            out.append(s)
    return out


def build_samples(
    world: HostWorld,
    graphs: Sequence[IntentGraph],
    *,
    writer: str = "template",
    extractors: tuple[str, str] = ("rule", "align"),
    k: int = 1,
    seed: int = 42,
    per_graph: int | None = None,
    ref: WorldRef | None = None,
    writer_temperature: float | None = None,
    writer_instance: Writer | None = None,
    allow_same_family: bool = False,
    concurrency: int = 1,
    allowance: int | None = None,
    on_graph: Callable[[IntentGraph, list[Sample]], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[list[Sample], dict[str, Any]]:
    """Generate-then-verify faulty opening requests over ``graphs``.

    Args:
        world: The host world the graphs were built from (executes literal readings).
        graphs: Intent graphs (roots carry executed ground truth).
        writer: ``template`` or an LLM model spec.
        extractors: Two different extractor specs (``rule``, ``align`` or LLM model specs);
            the same reader or model twice is refused.
        k: Faults per request (1, 2 or 4).
        seed: Seed of draws, plans and variants.
        per_graph: k = 1: samples per graph (None = one per applicable type);
            k > 1: composite draws per graph (None = 1).
        ref: The world's reference, recorded on every sample (default: the graph's).
        writer_temperature: Sampling temperature of an LLM writer (None: the models file's,
            else 0.7).
        writer_instance: An already built writer to reuse (``build_bundled`` shares one over
            k = 1, 2 and 4, so off-topic passages are not reused within a graph).
        allow_same_family: Accept two LLM extractors of one model family.
        concurrency: Graphs built at once (language-model builds only; the template writer
            keeps state across graphs and always builds one graph after the other).
        allowance: Candidates per wanted sample of a graph (language-model builds; default
            :data:`LLM_CANDIDATES_PER_SAMPLE`); the graph stops once it is spent.
        on_graph: Receives each graph's samples as soon as they are verified (in graph order).
        stop: Checked before each graph starts; True leaves the remaining graphs unbuilt.

    A language-model build is *frugal* (free checks before paid calls, see
    :func:`core.faults.generate.generate_sample`); a writer or extractor that fails rejects
    that candidate and the build goes on.

    Every sample gets the split of its root's host task (:func:`task_splits`).

    Returns:
        ``(samples sorted by id, stats)``; stats keys ``benchmark``, ``k``, ``graphs``,
        ``candidates``, ``rejected_by_step`` {"1","2","3"}, ``rejection_rate``, ``samples``,
        ``by_fault_type`` and per-type candidate/rejection counts.
    """
    if k not in (1, 2, 4):
        raise ConfigError("k must be 1, 2 or 4", field="k")
    check_extractor_pair(extractors, allow_same_family=allow_same_family)
    adapter = adapter_for(world)
    w = writer_instance or make_writer(writer, writer_temperature)
    ex = (make_extractor(extractors[0], 0), make_extractor(extractors[1], 1))
    frugal = not isinstance(w, TemplateWriter) or is_llm_build("template", extractors)
    if frugal and allowance is None:
        allowance = LLM_CANDIDATES_PER_SAMPLE

    splits = task_splits(world)

    def stamp(g: IntentGraph, got: list[Sample]) -> list[Sample]:
        return [
            smp.model_copy(update={"split": split_of(splits, g.root), "world": ref or g.world})
            for smp in got
        ]

    def one(g: IntentGraph) -> tuple[list[Sample], GenStats]:
        st = GenStats()
        if k == 1:
            got = _single_samples(
                adapter,
                g,
                writer=w,
                extractors=ex,
                seed=seed,
                per_graph=per_graph,
                stats=st,
                frugal=frugal,
                allowance=allowance,
            )
        else:
            got = _composite_samples(
                adapter,
                g,
                k=k,
                writer=w,
                extractors=ex,
                seed=seed,
                draws=per_graph or 1,
                stats=st,
                frugal=frugal,
                allowance=allowance,
            )
        return stamp(g, got), st

    todo = [g for g in sorted(graphs, key=lambda g: g.graph_id) if g.root.ground_truth is not None]
    stats = GenStats()
    stamped: list[Sample] = []
    report = (lambda g, res: on_graph(g, res[0])) if on_graph is not None else None
    width = concurrency if frugal else 1
    for got, st in map_graphs(todo, one, concurrency=width, on_graph=report, stop=stop):
        stamped += got
        stats.merge(st)
    stamped.sort(key=lambda s: s.sample_id)
    return stamped, gen_stats_dict(world.benchmark, k, len(graphs), stats)


def gen_stats_dict(benchmark: str, k: int, graphs: int, st: GenStats) -> dict[str, Any]:
    """JSON-ready generation statistics."""
    rejected = {s: st.rejected.get(s, 0) for s in ("1", "2", "3")}
    extra: dict[str, Any] = {}
    if st.llm_failures or st.plans_refused:  # language-model builds only (bundled stats unchanged)
        extra = {"llm_failures": st.llm_failures, "plans_refused_before_writing": st.plans_refused}
    return {
        "benchmark": benchmark,
        "k": k,
        "graphs": graphs,
        "candidates": st.candidates,
        "rejected_by_step": rejected,
        "rejection_rate": round(sum(rejected.values()) / st.candidates, 4)
        if st.candidates
        else None,
        "samples": st.samples,
        "by_fault_type": dict(sorted(st.by_fault_type.items())),
        "candidates_by_fault_type": dict(sorted(st.candidates_by_type.items())),
        "rejected_by_fault_type": dict(sorted(st.rejected_by_type.items())),
        "rejection_reasons": dict(sorted(st.reasons.items())),
        **extra,
    }


# ---------------------------------------------------------------------------------- bundled
def bundled_world(benchmark: str) -> HostWorld:
    """Load the bundled world of a benchmark."""
    if benchmark == "webshop":
        from core.envs.webshop import load_webshop_world  # type: ignore[attr-defined,unused-ignore]

        return load_webshop_world()  # type: ignore[no-any-return,unused-ignore]
    if benchmark in ("tau2_retail", "tau2_airline"):
        from core.envs.tau2.world import load_tau2_world

        return load_tau2_world(benchmark.split("_", 1)[1])
    if benchmark == "mock":
        from core.envs.mock import load_mock_world  # type: ignore[attr-defined,unused-ignore]

        return load_mock_world()  # type: ignore[no-any-return,unused-ignore]
    raise ConfigError(f"unknown benchmark {benchmark!r}", field="benchmark")


def build_bundled(benchmark: str, out_dir: Path = BUNDLED_DIR, *, seed: int = 42) -> dict[str, Any]:
    """Build the committed graphs and samples of ``benchmark`` from its bundled world.

    Writes ``<out_dir>/<benchmark>/graphs.jsonl.gz``, ``samples.jsonl.gz`` (k = 1, 2 and 4
    together; gzip mtime 0, canonical JSON, sorted) and ``stats.json``. Rebuilding is
    byte-identical.

    Returns:
        The stats written to ``stats.json``.
    """
    world = bundled_world(benchmark)
    ref = WorldRef.bundled(benchmark, world.world_id)
    plan = BUNDLED_PLAN.get(benchmark, {"per_graph": None, "k2": 1, "k4": 1})
    graphs, gstats = build_graphs(world, seed=seed, ref=ref)
    w = TemplateWriter()
    s1, st1 = build_samples(
        world, graphs, k=1, seed=seed, per_graph=plan["per_graph"], writer_instance=w
    )
    s2, st2 = build_samples(world, graphs, k=2, seed=seed, per_graph=plan["k2"], writer_instance=w)
    s4, st4 = build_samples(world, graphs, k=4, seed=seed, per_graph=plan["k4"], writer_instance=w)
    samples = sorted({s.sample_id: s for s in s1 + s2 + s4}.values(), key=lambda s: s.sample_id)
    samples = [s.model_copy(update={"source": "bundled"}) for s in samples]
    d = out_dir / benchmark
    write_graphs(d / "graphs.jsonl.gz", graphs)
    write_samples(d / "samples.jsonl.gz", samples)
    stats = {
        "benchmark": benchmark,
        "world_id": ref.world_id,
        "fingerprint": ref.fingerprint,
        "seed": seed,
        "graphs": gstats,
        "samples": {"k1": st1, "k2": st2, "k4": st4},
        "totals": {
            "samples": len(samples),
            "single": len(s1),
            "k2": len(s2),
            "k4": len(s4),
            "splits": dict(sorted(Counter(s.split for s in samples).items())),
        },
    }
    (d / "stats.json").write_text(
        json.dumps(stats, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    load_bundled.cache_clear()
    return stats


@lru_cache(maxsize=8)
def _load_cached(
    benchmark: str, directory: str, stamp: tuple[int, int]
) -> tuple[tuple[IntentGraph, ...], tuple[Sample, ...]]:
    d = Path(directory) / benchmark
    return tuple(read_graphs(d / "graphs.jsonl.gz")), tuple(read_samples(d / "samples.jsonl.gz"))


class _Loader:
    """``load_bundled`` with a ``cache_clear`` hook."""

    def __call__(
        self, benchmark: str, directory: Path = BUNDLED_DIR
    ) -> tuple[list[IntentGraph], list[Sample]]:
        d = directory / benchmark
        if not d.is_dir():
            raise ConfigError(
                f"no bundled benchmark {benchmark!r} (run `driftbench build samples`)", file=d
            )
        stamps = []
        for name in ("graphs.jsonl.gz", "samples.jsonl.gz"):
            p = d / name
            stamps.append(p.stat().st_mtime_ns if p.exists() else 0)
        g, s = _load_cached(benchmark, str(directory), (stamps[0], stamps[1]))
        return list(g), list(s)

    def cache_clear(self) -> None:
        _load_cached.cache_clear()


load_bundled = _Loader()
"""``load_bundled(benchmark) -> (graphs, samples)``: the committed benchmark (cached per mtime)."""


def bundled_stats(directory: Path = BUNDLED_DIR) -> dict[str, dict[str, Any]]:
    """Read every ``<directory>/<benchmark>/stats.json`` (benchmark → stats)."""
    out: dict[str, dict[str, Any]] = {}
    if not directory.is_dir():
        return out
    for p in sorted(directory.glob("*/stats.json")):
        out[p.parent.name] = load_json(p, DOCUMENT)
    return out


# ---------------------------------------------------------------------------------- report
def construction_report(stats_by_benchmark: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Table-4-shaped statistics: tasks → graphs → candidates → rejected per step → samples.

    Args:
        stats_by_benchmark: benchmark → stats as written by :func:`build_bundled` (or a dict
            with ``graphs`` and ``samples`` entries shaped like it).

    Returns:
        ``{"benchmarks": [{"benchmark", "tasks", "graphs", "candidates", "rejected_by_step",
        "rejection_rate", "samples", "by_fault_type", "by_operator", "by_k"}]}``.
    """
    rows = []
    for bench in sorted(stats_by_benchmark):
        st = stats_by_benchmark[bench]
        g = st.get("graphs", {})
        parts = st.get("samples", {})
        if isinstance(parts, dict) and "candidates" in parts:
            parts = {"k1": parts}
        rej: Counter[str] = Counter()
        by_type: Counter[str] = Counter()
        cands = 0
        n = 0
        by_k = {}
        for key, p in sorted(parts.items()):
            cands += int(p.get("candidates", 0))
            n += int(p.get("samples", 0))
            rej.update({k: int(v) for k, v in p.get("rejected_by_step", {}).items()})
            by_type.update(p.get("by_fault_type", {}))
            by_k[key] = int(p.get("samples", 0))
        rejected = {s: rej.get(s, 0) for s in ("1", "2", "3")}
        rows.append(
            {
                "benchmark": bench,
                "tasks": g.get("tasks"),
                "graphs": g.get("graphs"),
                "by_operator": g.get("by_operator", {op.value: 0 for op in OPERATOR_ORDER}),
                "candidates": cands,
                "rejected_by_step": rejected,
                "rejection_rate": round(sum(rejected.values()) / cands, 4) if cands else None,
                "samples": n,
                "by_k": by_k,
                "by_fault_type": dict(sorted(by_type.items())),
            }
        )
    return {"benchmarks": rows}
