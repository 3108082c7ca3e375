"""Which host world a graph or sample belongs to, and loading exactly that world.

Every graph and sample built or imported since schema v2 records a
:class:`~core.model.intent.WorldRef`: the benchmark, the world id (``bundled:<benchmark>`` for
the project's bundled worlds, the store's world id for imported ones) and the content
fingerprint of the world's data at build time. Every consumer — sweeps (inline, pool or Ray
workers: they open the same store), Watch live, both Play pages, ``env golden``, ``verify`` —
loads a sample's world through :func:`resolve_sample_world`, which refuses (a
:class:`WorldRefusedError`, exit code 2) a world that is missing from the store or whose data now
hashes to a different fingerprint. Nothing ever falls back to another world.

Samples without a world (schema v1, stored before world identity existed) are resolved by
evidence: the candidate worlds of their benchmark (the store's imported worlds, newest first,
then the bundled world) are tried, and the first on which the sample's root reproduces its
recorded ground truth is used; when none does, the sample is refused. The mock test world has a
single world and needs no evidence.

Imported worlds are kept in the store's ``worlds`` table (payload and summary); building on a
``--data DIR`` first imports that directory, so the world a sample names is always loadable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.envs.base import HostWorld
from core.envs.registry import load_world
from core.envs.webshop.world import WebShopWorld
from core.errors import ConfigError
from core.model.intent import BUNDLED_WORLD_PREFIX, IntentGraph, WorldRef
from core.model.sample import Sample
from core.store import Store

WorldLoader = Callable[[str], HostWorld]
"""What the episode engine calls to get a world (``benchmark -> HostWorld``)."""


class WorldRefusedError(ConfigError):
    """A sample's (or graph's) world is missing or its data changed: nothing may run on it."""


@dataclass(frozen=True)
class LoadedWorld:
    """A loaded host world and the reference that names it."""

    world: HostWorld
    ref: WorldRef


_LOCK = threading.Lock()
_STORED: dict[tuple[str, str, tuple[str, int]], HostWorld] = {}
_LEGACY: dict[tuple[str, str, str], WorldRef | None] = {}


def fingerprint(world: HostWorld) -> str:
    """The content fingerprint of a loaded world's data (its content-hash ``world_id``)."""
    return str(world.world_id)


def bundled(benchmark: str) -> LoadedWorld:
    """The project's bundled world of ``benchmark`` (cached per process by the registry)."""
    world = load_world(benchmark)
    return LoadedWorld(world, WorldRef.bundled(benchmark, fingerprint(world)))


def ref_for(world: HostWorld) -> WorldRef:
    """A reference for an already loaded world: the bundled one's, else its content id.

    A world loaded from a directory that was never imported gets ``world_id`` = its
    fingerprint; it resolves only once a store holds it under that id.
    """
    fp = fingerprint(world)
    try:
        if fingerprint(load_world(world.benchmark)) == fp:
            return WorldRef.bundled(world.benchmark, fp)
    except ConfigError:
        pass
    return WorldRef(
        benchmark=world.benchmark,
        world_id=fp,
        fingerprint=fp,
        name=Path(world.source).name,
    )


def _from_payload(benchmark: str, payload: dict[str, Any]) -> HostWorld:
    if payload.get("bundled") is True:
        return load_world(benchmark)
    if benchmark == "webshop":
        from core.envs.webshop import load_webshop_world_from_payload

        return load_webshop_world_from_payload(payload)
    if benchmark.startswith("tau2_"):
        from core.envs.tau2 import load_tau2_world_from_payload

        return load_tau2_world_from_payload(benchmark.removeprefix("tau2_"), payload)
    raise ConfigError(f"cannot load a stored {benchmark!r} world", field="benchmark")


def stored(store: Store, world_id: str) -> LoadedWorld | None:
    """The stored world ``world_id`` (loaded once per process and store row), or None."""
    stamp = store.world_stamp(world_id)
    if stamp is None:
        return None
    key = (str(store.path), world_id, stamp)
    with _LOCK:
        hit = _STORED.get(key)
    record = None
    if hit is None:
        record = store.get_world(world_id)
        if record is None:
            return None
        hit = _from_payload(record.benchmark, record.payload)
        with _LOCK:
            _STORED[key] = hit
    rows = [r for r in store.list_worlds(hit.benchmark) if r["world_id"] == world_id]
    name = rows[0]["name"] if rows else (record.name if record else "")
    ref = WorldRef(
        benchmark=hit.benchmark, world_id=world_id, fingerprint=fingerprint(hit), name=name
    )
    return LoadedWorld(hit, ref)


def imported_worlds(store: Store, benchmark: str) -> list[LoadedWorld]:
    """Every imported (non-bundled) world of ``benchmark`` in the store, newest first."""
    out = []
    for row in store.list_worlds(benchmark):
        if row["source"] == "bundled":
            continue
        got = stored(store, row["world_id"])
        if got is not None:
            out.append(got)
    return out


def import_directory(store: Store, benchmark: str, data_dir: Path) -> LoadedWorld:
    """Keep a host-data directory's world in the store (so later commands load exactly it).

    τ² directories go through the τ²-bench importer (validation and golden replay); a WebShop
    world folder stores the payload it loads to.
    """
    if benchmark.startswith("tau2_"):
        from core.envs.tau2 import import_domain, load_tau2_world

        import_domain(benchmark.removeprefix("tau2_"), data_dir, store)
        world_id = load_tau2_world(benchmark.removeprefix("tau2_"), data_dir).world_id
    elif benchmark == "webshop":
        world = load_world(benchmark, data_dir)
        payload = world.payload if isinstance(world, WebShopWorld) else None
        if payload is None:
            raise ConfigError("this webshop world has no storable payload", file=data_dir)
        store.put_world(
            benchmark=benchmark,
            world_id=world.world_id,
            name=Path(data_dir).name,
            source=str(data_dir),
            payload=payload.model_dump(mode="json"),
            summary={"products": len(world.products) if isinstance(world, WebShopWorld) else 0},
        )
        world_id = world.world_id
    else:
        raise ConfigError(f"cannot import a {benchmark!r} directory", field="--data")
    got = stored(store, world_id)
    assert got is not None
    return got


def world_for(
    store: Store | None,
    benchmark: str,
    data_dir: Path | None = None,
    world: str | None = None,
) -> LoadedWorld:
    """The world to build on.

    Args:
        store: The store (None: only the bundled world is available).
        benchmark: Benchmark id.
        data_dir: A host-data directory: imported into the store first, then used.
        world: ``bundled`` or a stored world id (exact, or a unique prefix).

    Returns:
        An explicit choice when given; else the newest imported world; else the bundled one.

    Raises:
        ConfigError: An unknown ``world``, or one of another benchmark.
    """
    if data_dir is not None:
        if store is None:
            raise ConfigError("building on --data needs a store", field="--data")
        return import_directory(store, benchmark, data_dir)
    if world is not None and world != "bundled" and world != BUNDLED_WORLD_PREFIX + benchmark:
        if store is None:
            raise ConfigError(f"no store holds world {world!r}", field="--world")
        ids = [r["world_id"] for r in store.list_worlds(benchmark)]
        hits = [i for i in ids if i == world] or [i for i in ids if i.startswith(world)]
        if len(hits) != 1:
            known = ", ".join(["bundled", *ids]) or "bundled"
            raise ConfigError(
                f"no single {benchmark} world {world!r}; known: {known}", field="--world"
            )
        got = stored(store, hits[0])
        assert got is not None
        return got
    if world is None and store is not None:
        imported = imported_worlds(store, benchmark)
        if imported:
            return imported[0]
    return bundled(benchmark)


# ---------------------------------------------------------------------------------- resolution
def _describe(what: str, ref: WorldRef) -> str:
    label = f" '{ref.name}'" if ref.name and ref.name != "bundled" else ""
    return f"{what} was built on {ref.benchmark} world {ref.world_id}{label}"


def resolve_ref(store: Store | None, ref: WorldRef, *, what: str = "this sample") -> LoadedWorld:
    """Load exactly the world ``ref`` names, checking its fingerprint.

    Raises:
        WorldRefusedError: The world is not available, or its data changed since the build.
    """
    if ref.is_bundled:
        got: LoadedWorld | None = bundled(ref.benchmark)
    else:
        got = stored(store, ref.world_id) if store is not None else None
        if got is None:
            raise WorldRefusedError(
                f"{_describe(what, ref)}, which is not in this store; import that world again "
                f"(driftbench import …) or rebuild the samples on a world you have"
            )
    assert got is not None
    if got.ref.fingerprint != ref.fingerprint:
        raise WorldRefusedError(
            f"{_describe(what, ref)}, whose data has changed (fingerprint {ref.fingerprint} at "
            f"build time, {got.ref.fingerprint} now); rebuild the samples "
            f"(driftbench build samples …) — they never run on a different world"
        )
    return LoadedWorld(got.world, ref)


def _reproduces(world: HostWorld, sample: Sample, graph: IntentGraph | None) -> bool:
    """Whether a world-less sample's root reproduces its recorded ground truth on ``world``."""
    gt = sample.root_ground_truth
    if graph is None or gt is None:
        return False
    try:
        root = graph.node(sample.root_intent_id)
        got = world.execute(root)
    except Exception:  # noqa: BLE001 - a root that does not execute is evidence against
        return False
    return bool(got.hash == gt.hash)


def _legacy(store: Store | None, sample: Sample, graph: IntentGraph | None) -> LoadedWorld:
    key = (str(store.path) if store is not None else "", sample.sample_id, sample.benchmark)
    with _LOCK:
        known = key in _LEGACY
        ref = _LEGACY.get(key)
    if known:
        if ref is None:
            raise _legacy_refusal(sample)
        return resolve_ref(store, ref, what=f"sample {sample.sample_id}")
    ids: list[str | None] = []
    if store is not None:
        ids = [
            r["world_id"] for r in store.list_worlds(sample.benchmark) if r["source"] != "bundled"
        ]
    ids.append(None)  # the bundled world last
    found: LoadedWorld | None = None
    for wid in ids:
        try:
            cand = bundled(sample.benchmark) if wid is None else stored(store, wid)  # type: ignore[arg-type]
        except ConfigError:
            continue
        if cand is not None and _reproduces(cand.world, sample, graph):
            found = cand
            break
    with _LOCK:
        _LEGACY[key] = found.ref if found is not None else None
    if found is None:
        raise _legacy_refusal(sample)
    return found


def _legacy_refusal(sample: Sample) -> WorldRefusedError:
    return WorldRefusedError(
        f"sample {sample.sample_id} ({sample.benchmark}, {sample.source}) records no world and "
        f"its ground truth does not reproduce on any {sample.benchmark} world available; "
        f"rebuild or re-import it"
    )


def resolve_sample_world(
    store: Store | None, sample: Sample, graph: IntentGraph | None = None
) -> LoadedWorld:
    """Load the world ``sample`` was built on (see the module docstring for the rules).

    Args:
        store: The store holding imported worlds (None: bundled worlds only).
        sample: The sample.
        graph: Its intent graph (used for a graph-level world and for v1 evidence).

    Raises:
        WorldRefusedError: Missing world, changed fingerprint, or a v1 sample without evidence.
    """
    if sample.benchmark == "mock":
        return bundled("mock")
    ref = sample.world or (graph.world if graph is not None else None)
    if ref is not None:
        if ref.benchmark != sample.benchmark:
            raise WorldRefusedError(
                f"sample {sample.sample_id} ({sample.benchmark}) names a {ref.benchmark} world"
            )
        return resolve_ref(store, ref, what=f"sample {sample.sample_id}")
    return _legacy(store, sample, graph)


def sample_world_loader(world: HostWorld) -> WorldLoader:
    """A world loader for the episode engine that always returns ``world``."""

    def loader(benchmark: str) -> HostWorld:
        if benchmark != world.benchmark:
            raise WorldRefusedError(
                f"episode of {benchmark} cannot run on a {world.benchmark} world"
            )
        return world

    return loader


def episode_world(store: Store | None, log: Any, episode_id: str) -> HostWorld:
    """The world of a stored episode (from the sample and graph in its first event)."""
    from core.model.events import EpisodeStarted

    for ev in log.events(episode_id):
        if isinstance(ev, EpisodeStarted):
            return resolve_sample_world(store, ev.sample, ev.graph).world
        break
    raise WorldRefusedError(f"episode {episode_id} has no start event")


def episode_world_loader(store: Store | None, log: Any, episode_id: str) -> WorldLoader:
    """A world loader bound to the world of ``episode_id`` (resolved once, lazily)."""
    cell: list[HostWorld] = []

    def loader(benchmark: str) -> HostWorld:
        if not cell:
            cell.append(episode_world(store, log, episode_id))
        return sample_world_loader(cell[0])(benchmark)

    return loader


def clear_cache() -> None:
    """Forget loaded stored worlds and v1 resolutions (tests)."""
    with _LOCK:
        _STORED.clear()
        _LEGACY.clear()
