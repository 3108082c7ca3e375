"""Planning a sweep: samples, worlds and the deterministic list of episode keys.

Samples come from the store's ``samples`` table (bodies via ``sample_json``) with a fallback
to the bundled benchmark (:func:`core.construction.pipeline.load_bundled`) and, for ``mock``,
the mock world's samples. Worlds are loaded once per process and shared read-only.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from core.envs.base import HostWorld
from core.envs.registry import load_world as registry_load_world
from core.errors import ConfigError, NotFoundError
from core.model.intent import Condition, Intent, IntentGraph
from core.model.run import EpisodeKey, RunSpec
from core.model.sample import Sample
from core.store import Store


def load_world(benchmark: str) -> HostWorld:
    """Return the bundled host world of ``benchmark`` (the registry caches it per process).

    Raises:
        ConfigError: For an unknown benchmark.
    """
    return registry_load_world(benchmark)


@lru_cache(maxsize=8)
def _bundled(benchmark: str) -> tuple[dict[str, Sample], dict[str, IntentGraph]]:
    if benchmark == "mock":
        from core.envs.mock import mock_graph, mock_samples

        g = mock_graph()
        return {s.sample_id: s for s in mock_samples()}, {g.graph_id: g}
    try:
        from core.construction.pipeline import load_bundled
    except ImportError:  # pragma: no cover - construction always present in this build
        return {}, {}
    try:
        graphs, samples = load_bundled(benchmark)
    except ConfigError:
        return {}, {}
    return {s.sample_id: s for s in samples}, {g.graph_id: g for g in graphs}


class SampleSource:
    """Samples and graphs for a sweep: the store first, the bundled data as fallback."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self._graphs: dict[str, IntentGraph] = {}
        self._samples: dict[str, Sample] = {}

    def sample_ids(self, benchmark: str) -> list[str]:
        """All sample ids of ``benchmark`` in a stable order (store, else bundled)."""
        if self.store is not None:
            rows = self.store.sample_rows(benchmark)
            if rows:
                return [r["sample_id"] for r in rows]
        samples, _ = _bundled(benchmark)
        return sorted(samples)

    def sample(self, benchmark: str, sample_id: str) -> Sample:
        """Return one sample (NotFoundError if neither source has it)."""
        got = self._samples.get(sample_id)
        if got is not None:
            return got
        s: Sample | None = None
        if self.store is not None:
            try:
                s = Sample.model_validate_json(self.store.sample_json(sample_id))
            except NotFoundError:
                s = None
        if s is None:
            s = _bundled(benchmark)[0].get(sample_id)
        if s is None:
            raise NotFoundError(f"no sample {sample_id} for {benchmark}")
        self._samples[sample_id] = s
        return s

    def graph(self, benchmark: str, graph_id: str) -> IntentGraph:
        """Return one intent graph (NotFoundError if neither source has it)."""
        got = self._graphs.get(graph_id)
        if got is not None:
            return got
        g: IntentGraph | None = None
        if self.store is not None:
            try:
                g = IntentGraph.model_validate_json(self.store.graph_json(graph_id))
            except NotFoundError:
                g = None
        if g is None:
            g = _bundled(benchmark)[1].get(graph_id)
        if g is None:
            raise NotFoundError(f"no graph {graph_id} for {benchmark}")
        self._graphs[graph_id] = g
        return g


def select_samples(source: SampleSource, spec: RunSpec, benchmark: str) -> list[str]:
    """The sample ids of ``benchmark`` a spec runs (explicit ids, else the first ``limit``)."""
    ids = source.sample_ids(benchmark)
    if spec.sample_ids is not None:
        wanted = set(spec.sample_ids)
        return [i for i in ids if i in wanted]
    return ids[: spec.limit] if spec.limit is not None else ids


def plan_keys(source: SampleSource, spec: RunSpec) -> list[EpisodeKey]:
    """Every episode of a spec, in a deterministic order.

    Order: benchmark, persona, seed, method, sample — so that A3's episodes of one unit
    (benchmark × persona × seed) form a contiguous, ordered block (its generations).
    """
    run_id = spec.run_id()
    keys: list[EpisodeKey] = []
    for b in spec.benchmarks:
        ids = select_samples(source, spec, b)
        for p in spec.personas:
            for seed in spec.seeds:
                for m in spec.methods:
                    for sid in ids:
                        keys.append(
                            EpisodeKey(
                                run_id=run_id,
                                benchmark=b,
                                sample_id=sid,
                                method=m,
                                persona=p,
                                seed=seed,
                            )
                        )
    return keys


def validate_spec(store: Store | None, spec: RunSpec) -> None:
    """Check a spec before anything is written (benchmarks, personas, samples).

    Raises:
        ConfigError: Naming the offending flag.
    """
    from core.protocol.personas import load_personas

    personas = load_personas()
    for p in spec.personas:
        if p not in personas:
            raise ConfigError(
                f"unknown persona {p!r}; known: {' '.join(sorted(personas))}", field="--persona"
            )
    source = SampleSource(store)
    for b in spec.benchmarks:
        if b not in ("webshop", "tau2_retail", "tau2_airline", "mock"):
            raise ConfigError(f"unknown benchmark {b!r}", field="--benchmark")
        if not select_samples(source, spec, b):
            raise ConfigError(
                f"no samples for {b}; run 'driftbench init' or 'driftbench build samples'",
                field="--benchmark",
            )


_LITERALS: dict[tuple[int, int], tuple[Sample, IntentGraph, Intent]] = {}


def literal_intent(sample: Sample, graph: IntentGraph) -> Intent:
    """The literal reading of the request as an intent over the request's host task.

    This is what a rule reader extracts from the query text (the sample's first literal
    reading); when a sample carries none, the truthfully stated conditions of the mask.
    Memoised per (sample, graph) object: every episode of a sample reads the same request.
    """
    got = _LITERALS.get((id(sample), id(graph)))
    if got is not None and got[0] is sample and got[1] is graph:
        return got[2]
    intent = _literal_intent(sample, graph)
    if len(_LITERALS) >= 4096:
        _LITERALS.clear()
    _LITERALS[(id(sample), id(graph))] = (sample, graph, intent)
    return intent


def _literal_intent(sample: Sample, graph: IntentGraph) -> Intent:
    if sample.literal_readings:
        conds: tuple[Condition, ...] = sample.literal_readings[0]
    else:
        stated = {m.slot for m in sample.mask if m.kind == "stated"}
        conds = tuple(c for c in graph.root.conditions if c.slot in stated)
    root = graph.node(sample.root_intent_id) if sample.root_intent_id else graph.root
    return Intent.build(
        benchmark=sample.benchmark, env_id=root.env_id, base=root.base, conditions=conds
    )


def entity_words(graph: IntentGraph, sample: Sample) -> set[str]:
    """Entity strings of a sample (condition values, context facts) for leakage checks."""
    out: set[str] = set()
    for node in graph.nodes:
        for c in node.conditions:
            v: Any = c.value
            if isinstance(v, str):
                try:
                    v = json.loads(v)
                except json.JSONDecodeError:
                    pass
            _collect(v, out)
        for val in node.context.values():
            out.add(str(val).lower())
    return {w for w in out if len(w) >= 3}


def _collect(v: Any, out: set[str]) -> None:
    if isinstance(v, dict):
        for x in v.values():
            _collect(x, out)
    elif isinstance(v, list):
        for x in v:
            _collect(x, out)
    elif isinstance(v, str):
        out.add(v.lower())
