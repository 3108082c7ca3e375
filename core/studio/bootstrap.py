"""First-run initialisation shared by ``driftbench init`` and the studio's first launch.

It creates the store, registers the bundled host worlds, loads the bundled intent graphs and
samples, and (when the store holds no run yet) runs the small symbolic demo sweep, so every page
has real content. Each step reports what it did; a bundle that cannot be loaded is reported as
skipped with the reason, never faked.
"""

from __future__ import annotations

from typing import Any

from core.errors import ConfigError
from core.store import Store

BUNDLED_BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")
"""Benchmarks shipped with project-authored worlds under ``data/``."""


def register_bundled_worlds(store: Store) -> list[str]:
    """Record the bundled worlds in the store (as pointers to ``data/``); return their ids."""
    from core.envs.registry import load_world

    registered: list[str] = []
    known = {w["world_id"] for w in store.list_worlds()}
    for benchmark in BUNDLED_BENCHMARKS:
        try:
            world = load_world(benchmark)
        except (ModuleNotFoundError, ImportError):
            continue
        if world.world_id not in known:
            store.put_world(
                benchmark=benchmark,
                world_id=world.world_id,
                name=f"bundled {benchmark}",
                source="bundled",
                payload={"bundled": True},
                summary={"tools": len(world.tools())},
            )
        registered.append(world.world_id)
    return registered


def load_bundled_samples(store: Store, skipped: list[dict[str, str]] | None = None) -> int:
    """Load the committed graphs and samples of every bundled benchmark into the store.

    Args:
        store: The store to fill.
        skipped: Receives ``{"benchmark", "reason"}`` for each bundle that could not be loaded.

    Returns:
        Number of samples written.
    """
    from core.construction.pipeline import load_bundled

    n_samples = 0
    for benchmark in BUNDLED_BENCHMARKS:
        try:
            graphs, samples = load_bundled(benchmark)
        except ConfigError as exc:
            if skipped is not None:
                skipped.append({"benchmark": benchmark, "reason": str(exc)})
            continue
        n_samples += store.put_graphs_and_samples(graphs, samples, source="bundled")[1]
    return n_samples


def run_demo(store: Store) -> str | None:
    """Run the small symbolic demo sweep when no run exists yet; return its run name."""
    from core.runner import run_demo as demo

    if store.list_runs():
        return None
    result = demo(store)
    return str(result)


def initialise(store: Store, *, demo: bool = True) -> dict[str, Any]:
    """Create/load everything a fresh store needs and report counts.

    Args:
        store: The opened store (schema already created by :meth:`Store.open`).
        demo: Run the demo sweep if the store holds no run yet.

    Returns:
        ``{"store", "worlds", "samples", "runs", "skipped"}`` (the first four as documented
        for ``driftbench init``; ``skipped`` lists bundles that could not be loaded).
    """
    skipped: list[dict[str, str]] = []
    register_bundled_worlds(store)
    load_bundled_samples(store, skipped)
    if demo:
        run_demo(store)
    counts = store.counts()
    return {
        "store": str(store.path),
        "worlds": counts["worlds"],
        "samples": counts["samples"],
        "runs": counts["runs"],
        "skipped": skipped,
    }
