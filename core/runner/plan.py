"""Planning a sweep: which samples, on which worlds, and the deterministic list of episode keys.

Samples come from the store's ``samples`` table (bodies via ``sample_json``) with a fallback
to the bundled benchmark (:func:`core.construction.pipeline.load_bundled`) and, for ``mock``,
the mock world's samples.

**Selection** (``driftbench run --source/--split/--limit``): ``source`` keeps samples of one
provenance — ``bundled`` (shipped with the project; the committed files when the store holds
none), ``built`` (built in this store), ``release`` (imported from a release) or an import's
name (``release:NAME`` or ``NAME``); ``split`` keeps one split (``learn``, ``eval``, ``test``);
``limit`` then keeps the first N sample ids in sorted order, per benchmark — deterministic, the
same on every machine and every resume.

**Worlds**: every sample runs on the world it was built on
(:func:`core.construction.worlds.resolve_sample_world`); :func:`validate_spec` resolves every
selected sample's world before anything is written and refuses a missing world or a changed
fingerprint. Worlds are loaded once per process and shared read-only.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from core.construction.report import source_matches
from core.construction.worlds import (
    WorldLoader,
    WorldRefusedError,
    resolve_ref,
    resolve_sample_world,
    sample_world_loader,
)
from core.envs.base import HostWorld
from core.envs.registry import load_world as registry_load_world
from core.errors import ConfigError, NotFoundError
from core.model.intent import Condition, Intent, IntentGraph, WorldRef
from core.model.run import OFFLINE_AGENT_NAMES, EpisodeKey, RunSpec, faults_match
from core.model.sample import Sample
from core.store import Store

KNOWN_SPLITS: tuple[str, ...] = ("learn", "eval", "test")
"""Split names samples carry (τ²-bench ``train`` tasks become ``learn``)."""


def load_world(benchmark: str) -> HostWorld:
    """Return the bundled host world of ``benchmark`` (the registry caches it per process).

    Episodes never use this directly: they run on :meth:`SampleSource.world` (the sample's own
    world). It remains for warming the bundled worlds before a pool forks.

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


def _row_matches(row: dict[str, Any], source: str | None, split: str | None) -> bool:
    if source is not None and not source_matches(source, str(row["source"])):
        return False
    return split is None or row["split"] == split


class SampleSource:
    """Samples, graphs and worlds for a sweep: the store first, the bundled data as fallback."""

    def __init__(self, store: Store | None) -> None:
        self.store = store
        self._graphs: dict[str, IntentGraph] = {}
        self._samples: dict[str, Sample] = {}
        self._worlds: dict[str, HostWorld] = {}
        self._by_ref: dict[tuple[str, str], HostWorld] = {}
        self._refused: dict[str, WorldRefusedError] = {}

    def rows(
        self, benchmark: str, source: str | None = None, split: str | None = None
    ) -> list[dict[str, Any]]:
        """Index rows (sample_id, source, split, world …) of the selection, sorted by id.

        The store's rows when it holds any of ``benchmark`` that match; the committed bundled
        samples otherwise (for ``source`` None or ``bundled``).
        """
        if self.store is not None:
            rows = [r for r in self.store.sample_index(benchmark) if _row_matches(r, source, split)]
            if rows:
                return rows
        if source is not None and not source_matches(source, "bundled"):
            return []
        samples, _ = _bundled(benchmark)
        out = []
        for sid in sorted(samples):
            s = samples[sid]
            row = {
                "sample_id": sid,
                "benchmark": benchmark,
                "source": s.source,
                "split": s.split,
                "world_id": s.world.world_id if s.world else None,
                "world_fingerprint": s.world.fingerprint if s.world else None,
                "world_name": s.world.name if s.world else None,
                "k": len(s.faults),
            }
            if _row_matches(row, None, split):
                out.append(row)
        return out

    def sample_ids(
        self, benchmark: str, source: str | None = None, split: str | None = None
    ) -> list[str]:
        """Sample ids of ``benchmark`` in a stable order (store, else bundled), selected."""
        return [r["sample_id"] for r in self.rows(benchmark, source, split)]

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
        self._resolve(s)
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

    def _resolve(self, sample: Sample) -> None:
        """Resolve (and remember) a sample's world as soon as the sample is read.

        Sweeps read every sample in the parent before worker processes fork, so the workers
        inherit resolved worlds and never query the store through an inherited connection. A
        refusal is kept and raised when the world is asked for.
        """
        if sample.sample_id in self._worlds or sample.sample_id in self._refused:
            return
        ref = sample.world
        key = (ref.world_id, ref.fingerprint) if ref is not None else None
        if key is not None and key in self._by_ref:
            self._worlds[sample.sample_id] = self._by_ref[key]
            return
        try:
            graph = self.graph(sample.benchmark, sample.graph_id)
            world = resolve_sample_world(self.store, sample, graph).world
        except WorldRefusedError as exc:
            self._refused[sample.sample_id] = exc
            return
        except NotFoundError:
            return  # no graph: the episode start reports it
        self._worlds[sample.sample_id] = world
        if key is not None:
            self._by_ref[key] = world

    def world(self, sample: Sample) -> HostWorld:
        """The world ``sample`` was built on (WorldRefusedError when missing or changed)."""
        got = self._worlds.get(sample.sample_id)
        if got is None:
            refused = self._refused.get(sample.sample_id)
            if refused is not None:
                raise refused
            graph = self.graph(sample.benchmark, sample.graph_id)
            got = resolve_sample_world(self.store, sample, graph).world
            self._worlds[sample.sample_id] = got
        return got

    def world_loader(self, sample: Sample) -> WorldLoader:
        """A world loader for the episode engine bound to ``sample``'s world."""
        return sample_world_loader(self.world(sample))


def selected_rows(source: SampleSource, spec: RunSpec, benchmark: str) -> list[dict[str, Any]]:
    """Index rows of ``benchmark`` that a spec's selectors keep, before the limit.

    The selectors: the source that applies to this benchmark (``spec.source_for``), the split
    and the fault condition (``spec.faults``: single, composite, k1, k2, k4).
    """
    rows = source.rows(benchmark, spec.source_for(benchmark), spec.split)
    if spec.faults is None:
        return rows
    return [r for r in rows if faults_match(spec.faults, int(r.get("k") or 1))]


def select_samples(source: SampleSource, spec: RunSpec, benchmark: str) -> list[str]:
    """The sample ids of ``benchmark`` a spec runs.

    Explicit ids when given; else the selection (source, split, fault condition) in sorted
    id order, cut to the first ``spec.limit``.
    """
    ids = [r["sample_id"] for r in selected_rows(source, spec, benchmark)]
    if spec.sample_ids is not None:
        wanted = set(spec.sample_ids)
        return [i for i in ids if i in wanted]
    return ids[: spec.limit] if spec.limit is not None else ids


def describe_selection(source: SampleSource, spec: RunSpec) -> list[dict[str, Any]]:
    """What a spec selects, per benchmark: the run header (``sources`` in ``run --json``).

    Each entry: ``benchmark``, ``source`` (the selector, ``all`` when none), ``split``,
    ``limit``, ``samples`` (selected), ``available`` (before the limit), ``by_source`` and
    ``worlds`` (world id → selected samples).
    """
    out = []
    for b in spec.benchmarks:
        rows = selected_rows(source, spec, b)
        chosen = set(select_samples(source, spec, b))
        picked = [r for r in rows if r["sample_id"] in chosen]
        out.append(
            {
                "benchmark": b,
                "source": spec.source_for(b) or "all",
                "split": spec.split or "all",
                "faults": spec.faults or "all",
                "shifts": spec.shifts,
                "limit": spec.limit,
                "samples": len(picked),
                "available": len(rows),
                "by_source": dict(sorted(Counter(str(r["source"]) for r in picked).items())),
                "worlds": dict(
                    sorted(
                        Counter(
                            str(r.get("world_id") or ("mock" if b == "mock" else "unrecorded"))
                            for r in picked
                        ).items()
                    )
                ),
            }
        )
    return out


def check_worlds(
    source: SampleSource,
    benchmark: str,
    sample_ids: list[str],
    selector: str | None = None,
    split: str | None = None,
) -> int:
    """Resolve the world of every listed sample up front; return how many worlds they use.

    Samples that record their world are checked once per distinct world (missing from the
    store, or a changed fingerprint, is refused); a sample that records none is resolved on
    its own (see :mod:`core.construction.worlds`).

    Raises:
        WorldRefusedError: The first sample whose world cannot be used.
    """
    if benchmark == "mock":
        return 1
    wanted = set(sample_ids)
    by_ref: dict[tuple[str, str], tuple[str, str]] = {}
    legacy: list[str] = []
    for r in source.rows(benchmark, selector, split):
        if r["sample_id"] not in wanted:
            continue
        if r.get("world_id") and r.get("world_fingerprint"):
            key = (str(r["world_id"]), str(r["world_fingerprint"]))
            by_ref.setdefault(key, (r["sample_id"], str(r.get("world_name") or "")))
        else:
            legacy.append(r["sample_id"])
    for (wid, fp), (sid, name) in sorted(by_ref.items()):
        ref = WorldRef(benchmark=benchmark, world_id=wid, fingerprint=fp, name=name)
        resolve_ref(source.store, ref, what=f"sample {sid}")
    for sid in legacy:
        source.world(source.sample(benchmark, sid))
    return len(by_ref) + (1 if legacy else 0)


def plan_size(source: SampleSource, spec: RunSpec) -> int:
    """How many episodes a spec plans, counted without generating them."""
    per_sample = len(spec.personas) * len(spec.seeds) * len(spec.methods)
    return sum(len(select_samples(source, spec, b)) * per_sample for b in spec.benchmarks)


def check_plan_size(source: SampleSource, spec: RunSpec) -> int:
    """The plan's size, refused before any work when over ``DRIFTBENCH_MAX_RUN_EPISODES``.

    Raises:
        ConfigError: One line with the count, the limit and how to change either.
    """
    from core.settings import env_name, settings

    n = plan_size(source, spec)
    limit = settings().max_run_episodes
    if n > limit:
        raise ConfigError(
            f"this run plans {n:,} episodes ({len(spec.benchmarks)} benchmark(s) × "
            f"{len(spec.methods)} method(s) × {len(spec.personas)} persona(s) × "
            f"{len(spec.seeds)} seed(s) × their samples), more than {limit:,} "
            f"({env_name('max_run_episodes')}); use fewer --seeds/--method/--persona or "
            "--limit, or raise the limit",
            field="--seeds",
        )
    return n


def iter_plan_keys(source: SampleSource, spec: RunSpec) -> Iterator[EpisodeKey]:
    """Every episode of a spec, generated lazily in a deterministic order.

    Order: benchmark, persona, seed, method, sample — so that A3's episodes of one unit
    (benchmark × persona × seed) form a contiguous, ordered block (its generations).
    """
    run_id = spec.run_id()
    for b in spec.benchmarks:
        ids = select_samples(source, spec, b)
        for p in spec.personas:
            for seed in spec.seeds:
                for m in spec.methods:
                    for sid in ids:
                        yield EpisodeKey(
                            run_id=run_id,
                            benchmark=b,
                            sample_id=sid,
                            method=m,
                            persona=p,
                            seed=seed,
                        )


def plan_keys(source: SampleSource, spec: RunSpec) -> list[EpisodeKey]:
    """Every episode of a spec as a list (checked against the plan bound first).

    Raises:
        ConfigError: The plan is larger than ``DRIFTBENCH_MAX_RUN_EPISODES``.
    """
    check_plan_size(source, spec)
    return list(iter_plan_keys(source, spec))


def validate_spec(store: Store | None, spec: RunSpec) -> None:
    """Check a spec before anything is written (benchmarks, personas, samples, their worlds).

    Raises:
        ConfigError: Naming the offending flag.
        WorldRefusedError: A selected sample's world is missing or its data changed.
    """
    from core.model.bounds import check_model_spec
    from core.protocol.personas import load_personas

    check_model_spec(spec.agent, field="--agent", keywords=OFFLINE_AGENT_NAMES | {"human"})
    check_model_spec(
        spec.user_voice, field="--user-voice", keywords=frozenset({"template", "mute", "human"})
    )
    if spec.interpreter is not None:
        check_model_spec(spec.interpreter, field="--interpreter", keywords=frozenset({"offline"}))
    personas = load_personas()
    for p in spec.personas:
        if p not in personas:
            raise ConfigError(
                f"unknown persona {p!r}; known: {' '.join(sorted(personas))}", field="--persona"
            )
    if spec.split is not None and spec.split not in KNOWN_SPLITS:
        raise ConfigError(
            f"unknown split {spec.split!r}; known: {' '.join(KNOWN_SPLITS)}", field="--split"
        )
    source = SampleSource(store)
    for b in spec.benchmarks:
        if b not in ("webshop", "tau2_retail", "tau2_airline", "mock"):
            raise ConfigError(f"unknown benchmark {b!r}", field="--benchmark")
        ids = select_samples(source, spec, b)
        if not ids:
            have = Counter(f"{r['source']}/{r['split']}" for r in source.rows(b))
            listed = ", ".join(f"{k} {v}" for k, v in sorted(have.items())) or "none"
            sel = spec.source_for(b)
            wanted = " ".join(
                x
                for x in (
                    f"source {sel!r}" if sel else "",
                    f"split {spec.split!r}" if spec.split else "",
                    f"faults {spec.faults!r}" if spec.faults else "",
                )
                if x
            )
            before = source.rows(b, sel, spec.split)
            if spec.faults and before:  # the fault condition emptied it
                have = Counter(f"k={r.get('k') or 1}" for r in before)
                listed = ", ".join(f"{k} {v}" for k, v in sorted(have.items()))
                field = "--faults"
            else:
                field = "--source" if sel else "--split" if spec.split else "--benchmark"
            raise ConfigError(
                f"no samples for {b}"
                + (f" with {wanted} (available: {listed})" if wanted else "")
                + "; run 'driftbench init' or 'driftbench build samples'",
                field=field,
            )
        check_worlds(source, b, ids, spec.source_for(b), spec.split)
    check_plan_size(source, spec)


def named_spec(store: Store, spec: RunSpec) -> RunSpec:
    """The spec a run by ``spec.name`` continues: the stored one when the name exists.

    A name never attaches to another spec: a stored run of that name must have the same
    identity (then its stored, pinned spec is returned and resuming keeps its id).

    Raises:
        ConfigError: The name is taken by a run of a different spec.
    """
    if not spec.name:
        return spec
    rows = [r for r in store.list_runs() if r["name"] == spec.name]
    if not rows:
        return spec
    old = stored_spec(store, rows[0]["run_id"])
    if old.identity() != spec.identity():
        raise ConfigError(
            f"run name {spec.name!r} is taken by a different spec (run {rows[0]['run_id']}); "
            f"choose another name or --resume {spec.name}",
            field="--name",
        )
    return old


def stored_spec(store: Store, run: str) -> RunSpec:
    """The spec of a stored run, pinned to its stored id (runs made before names were hashed).

    Raises:
        NotFoundError: No run by that name or id.
    """
    row = store.get_run(run)
    spec = RunSpec.model_validate_json(row["spec"])
    if spec.run_id() != row["run_id"]:
        spec = spec.model_copy(update={"pinned_run_id": row["run_id"]})
    if spec.name is None and row["name"] != row["run_id"]:
        spec = spec.model_copy(update={"name": row["name"]})
    return spec


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
