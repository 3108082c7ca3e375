"""Which host world the engine uses for a benchmark: an imported one from the store, or bundled.

``driftbench import tau2|webshop`` stores the imported world's payload; the release importer and
construction commands prefer the most recently imported world of a benchmark and fall back to
the bundled, project-authored one.
"""

from __future__ import annotations

from pathlib import Path

from core.envs.base import HostWorld
from core.envs.registry import load_world
from core.store import Store


def imported_world(store: Store, benchmark: str) -> HostWorld | None:
    """Return the newest imported (non-bundled) world of ``benchmark``, or None."""
    for row in store.list_worlds(benchmark):
        if row["source"] == "bundled":
            continue
        record = store.get_world(row["world_id"])
        if record is None:
            continue
        if benchmark == "webshop":
            from core.envs.webshop import load_webshop_world_from_payload

            return load_webshop_world_from_payload(record.payload)
        if benchmark.startswith("tau2_"):
            from core.envs.tau2 import load_tau2_world_from_payload

            return load_tau2_world_from_payload(benchmark.removeprefix("tau2_"), record.payload)
    return None


def world_for(store: Store | None, benchmark: str, data_dir: Path | None = None) -> HostWorld:
    """Return the world to build on: ``data_dir`` if given, else imported, else bundled."""
    if data_dir is not None:
        return load_world(benchmark, data_dir)
    if store is not None:
        world = imported_world(store, benchmark)
        if world is not None:
            return world
    return load_world(benchmark)
