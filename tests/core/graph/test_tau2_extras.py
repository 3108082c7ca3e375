"""Ruling: irrelevant information is realisable on real τ² builds (issue 31).

Before, an extra request came only from another task of the same customer, which few τ²
customers have (9 retail, 1 airline irrelevant-information samples on a real build). The
customer's own open records now supply extra writes too.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from core.construction.pipeline import build_graphs, build_samples, load_bundled
from core.envs.registry import load_world
from core.graph.hosts import adapter_for
from tests.conftest import require_hostdata


@pytest.mark.parametrize("bench", ["tau2_retail", "tau2_airline"])
def test_most_roots_offer_an_executable_extra_request(bench: str) -> None:
    world = load_world(bench)
    adapter = adapter_for(world)
    graphs, _ = load_bundled(bench)
    roots = [g.root for g in graphs if g.root.ground_truth is not None]
    offered = 0
    for root in roots:
        extras = adapter.own_record_extras(root)
        taken = {str(adapter.decoded(c.value)) for c in root.conditions}
        for bundle in extras:
            ids = {
                str(adapter.decoded(c.value))
                for c in bundle
                if c.slot.endswith(("order_id", "reservation_id"))
            }
            assert not ids & taken  # never a record the request already names
        offered += bool(extras)
    assert offered >= 0.6 * len(roots), (offered, len(roots))
    # the bundle counts: irrelevant information is no longer a rarity. Like the whole-message
    # types it yields at most one sample per graph, so it is compared with them
    _, samples = load_bundled(bench)
    single = Counter(s.faults[0].value for s in samples if len(s.faults) == 1)
    assert single["irrelevant_information"] >= 0.5 * _per_graph_ceiling(single)


def _per_graph_ceiling(by: dict[str, int]) -> int:
    """How many samples a one-per-graph type reaches (the whole-message types do)."""
    return max(by.get("contextual_irrelevance", 0), by.get("indirect_intent", 0))


@pytest.mark.slow
@pytest.mark.parametrize("bench", ["tau2_airline", "tau2_retail"])
def test_real_build_has_irrelevant_information_comparable_to_other_types(
    bench: str, tmp_path: Path
) -> None:
    """On the real τ² data: before 9 retail / 1 airline; measured now 55 / 24 (docs)."""
    from core.construction.worlds import world_for
    from core.store import Store

    data = require_hostdata(bench)
    loaded = world_for(Store.open(tmp_path / "s.db"), bench, data)
    graphs, _ = build_graphs(loaded.world, ref=loaded.ref)
    _, stats = build_samples(loaded.world, graphs, ref=loaded.ref)
    by = stats["by_fault_type"]
    assert by["irrelevant_information"] >= 0.5 * _per_graph_ceiling(by), by
