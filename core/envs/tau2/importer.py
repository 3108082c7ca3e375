"""``driftbench import tau2``: validate a τ²-bench domain directory and store it as a world."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.envs.tau2.grading import golden_report
from core.envs.tau2.loader import read_domain_dir
from core.envs.tau2.world import load_tau2_world_from_payload
from core.store import Store


def import_domain(domain: str, src: Path, store: Store) -> dict[str, Any]:
    """Import a τ²-bench domain directory into the store.

    Validates everything first (nothing is written on failure), builds the world, checks that
    its golden actions replay, then stores the payload.

    Args:
        domain: ``retail`` or ``airline``.
        src: The domain directory (``db.json``, ``tasks.json``, optional ``split_tasks.json``
            and ``policy.md``).
        store: Where to put the world.

    Returns:
        ``{"domain", "tasks", "initial_state_hash"}``.

    Raises:
        ConfigError: naming the file and field of the first problem.
    """
    src = Path(src)
    payload = read_domain_dir(domain, src)
    world = load_tau2_world_from_payload(domain, payload)
    report = golden_report(world)
    db = world.base.records
    summary = {
        "domain": domain,
        "tasks": len(world.tasks),
        "initial_state_hash": world.state_hash(),
        "records": {coll: len(recs) for coll, recs in db.items()},
        "splits": {name: len(ids) for name, ids in world.split_tasks.items()},
        "golden_actions": sum(len(t.actions) for t in world.tasks),
        "golden_tool_errors": sum(int(r["tool_errors"]) for r in report["tasks"]),
    }
    store.put_world(
        benchmark=world.benchmark,
        world_id=world.world_id,
        name=src.name,
        source=str(src),
        payload=payload,
        summary=summary,
    )
    return {
        "domain": domain,
        "tasks": len(world.tasks),
        "initial_state_hash": world.state_hash(),
    }
