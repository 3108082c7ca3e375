"""Placing imported release graphs on the worlds this store holds.

A release graph is only as good as the world it runs on. τ² graphs go to the first candidate
world (imported worlds newest first, then the bundled one) on which their root reproduces the
released database state; each child must reproduce its own released state too, or it is
dropped. WebShop graphs need their products in the shop: a graph whose product is missing is
skipped with a reason naming the product; otherwise its nodes are re-based on the shop's goal
for that product and executed there. Surviving nodes carry this world's ground truth and the
customer facts of their writes, and the policy gate (:mod:`core.graph.gate`) removes nodes
that belong to another customer.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.construction.worlds import LoadedWorld
from core.envs.base import HostWorld
from core.envs.webshop.world import WebShopWorld
from core.graph.gate import GateStats, PolicyGate
from core.graph.hosts import adapter_for
from core.model.intent import Edge, Intent, IntentGraph, ShiftOperator


@dataclass
class PlacementStats:
    """What placing graphs on worlds found (part of the import report)."""

    roots_checked: int = 0
    roots_matched: int = 0
    roots_mismatched: list[str] = field(default_factory=list)
    nodes_checked: int = 0
    nodes_kept: int = 0
    nodes_dropped: Counter[str] = field(default_factory=Counter)
    gate: GateStats = field(default_factory=GateStats)
    worlds: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return {
            "checked": self.nodes_checked,
            "kept": self.nodes_kept,
            "dropped": sum(self.nodes_dropped.values()),
            "dropped_by_reason": dict(sorted(self.nodes_dropped.items())),
        }


GATE_MEMO = "construction.release_worlds.gate"
"""The world's memo table holding its policy gate (one entry)."""


def _gate(world: HostWorld) -> PolicyGate:
    memo = world.memo(GATE_MEMO, size=1)
    got: PolicyGate | None = memo.get("gate")
    if got is None:
        got = PolicyGate(adapter_for(world))
        memo.put("gate", got)
    return got


def _execute(world: Any, node: Intent) -> tuple[Any, str | None]:
    try:
        return world.execute(node), None
    except Exception as exc:  # noqa: BLE001 - an unexecutable node is a finding, not a crash
        return None, f"{type(exc).__name__}: {exc}"


def _finish(
    rg_graph: IntentGraph,
    root: Intent,
    children: list[Intent],
    loaded: LoadedWorld,
    st: PlacementStats,
) -> IntentGraph:
    """Rebuild edges for the kept nodes, run the gate and record the world."""
    world = loaded.world
    root = root.model_copy(update={"context": world.context_of(root)})
    children = [c.model_copy(update={"context": world.context_of(c)}) for c in children]
    by_id = {n.intent_id: n for n in (root, *children)}
    edges: list[Edge] = []
    for e in rg_graph.edges:
        if e.dst not in by_id or e.src not in by_id:
            continue
        a, b = by_id[e.src].ground_truth, by_id[e.dst].ground_truth
        moved = a is None or b is None or a.hash != b.hash
        edges.append(e.model_copy(update={"src": by_id[e.src].intent_id, "gt_moved": moved}))
    graph = rg_graph.model_copy(
        update={"root": root, "children": tuple(children), "edges": tuple(edges)}
    )
    graph = _gate(world).filter_graph(graph, st.gate)
    st.nodes_kept += 1 + len(graph.children)
    st.worlds[loaded.ref.world_id] += 1
    return graph.model_copy(update={"world": loaded.ref})


def place_tau2(
    graph: IntentGraph, candidates: Sequence[LoadedWorld], st: PlacementStats
) -> tuple[IntentGraph | None, LoadedWorld | None, str | None]:
    """Place a τ² release graph on the first world where its root reproduces its state."""
    root = graph.root
    st.roots_checked += 1
    chosen: LoadedWorld | None = None
    root_gt = None
    for cand in candidates:
        gt, err = _execute(cand.world, root)
        if err is not None:
            continue
        if root.ground_truth is not None and gt.hash != root.ground_truth.hash:
            continue
        chosen, root_gt = cand, gt
        break
    if chosen is None:
        st.roots_mismatched.append(graph.graph_id)
        names = ", ".join(c.ref.name or c.ref.world_id for c in candidates) or "none"
        return (
            None,
            None,
            f"host world {graph.benchmark!r} is not loaded: the root of graph "
            f"{graph.graph_id} reproduces its released state on none of the worlds here "
            f"({names}); import the host domain it was built on",
        )
    st.roots_matched += 1
    st.nodes_checked += 1 + len(graph.children)
    kept: list[Intent] = []
    for child in graph.children:
        gt, err = _execute(chosen.world, child)
        if err is not None:
            st.nodes_dropped["does not execute"] += 1
            continue
        if child.ground_truth is not None and gt.hash != child.ground_truth.hash:
            st.nodes_dropped["reproduces a different state"] += 1
            continue
        kept.append(child.model_copy(update={"ground_truth": gt}))
    root = root.model_copy(update={"ground_truth": root_gt})
    return _finish(graph, root, kept, chosen, st), chosen, None


def _first_asin(node: Intent) -> str | None:
    gt = node.ground_truth
    for row in gt.value if gt is not None else []:
        try:
            got = json.loads(row)
        except ValueError:
            continue
        if isinstance(got, list) and got and isinstance(got[0], str):
            return got[0]
    return None


def place_webshop(
    graph: IntentGraph,
    products: dict[str, str],
    candidates: Sequence[LoadedWorld],
    st: PlacementStats,
) -> tuple[IntentGraph | None, LoadedWorld | None, str | None]:
    """Place a WebShop release graph on a shop that sells its product (re-based on its goal)."""
    root = graph.root
    asin = products.get(root.intent_id) or _first_asin(root)
    if asin is None:
        return None, None, f"graph {graph.graph_id} names no product"
    reason = None
    for cand in candidates:
        shop = cand.world if isinstance(cand.world, WebShopWorld) else None
        by_asin = shop.catalogue.by_asin if shop is not None else {}
        label = cand.ref.name or cand.ref.world_id
        if asin not in by_asin:
            reason = (
                f"product {asin} of graph {graph.graph_id} is not in the webshop world '{label}'"
            )
            continue
        goals = {g.asin: g for g in shop.goals} if shop is not None else {}
        goal = goals.get(asin)
        if goal is None:
            reason = f"product {asin} of graph {graph.graph_id} has no goal in '{label}'"
            continue
        placed = _rebase_webshop(graph, products, goals, cand, st)
        if placed is not None:
            return placed, cand, None
        reason = f"the root of graph {graph.graph_id} has no answer in '{label}'"
    return None, None, reason or f"no webshop world holds product {asin}"


def _rebase_webshop(
    graph: IntentGraph,
    products: dict[str, str],
    goals: dict[str, Any],
    loaded: LoadedWorld,
    st: PlacementStats,
) -> IntentGraph | None:
    world = loaded.world
    pivot_of = {e.dst for e in graph.edges if e.operator is ShiftOperator.PIVOT}

    def rebase(node: Intent, goal: Any) -> Intent:
        return Intent.build(
            benchmark=node.benchmark,
            env_id=goal.query,
            base=goal.goal_id,
            conditions=node.conditions,
            is_seed=node.is_seed,
            source_record=node.source_record,
            context={"product": goal.query},
        )

    root_goal = goals[products.get(graph.root.intent_id) or _first_asin(graph.root) or ""]
    root = rebase(graph.root, root_goal)
    st.roots_checked += 1
    gt, err = _execute(world, root)
    if err is not None or gt is None or not gt.value:
        return None
    st.roots_matched += 1
    root = root.model_copy(update={"ground_truth": gt})
    ids = {graph.root.intent_id: root.intent_id}
    kept: list[Intent] = []
    st.nodes_checked += 1 + len(graph.children)
    for child in graph.children:
        goal = root_goal
        if child.intent_id in pivot_of:
            goal = goals.get(products.get(child.intent_id, ""))
            if goal is None:
                st.nodes_dropped["product not in the shop"] += 1
                continue
        node = rebase(child, goal)
        cgt, cerr = _execute(world, node)
        if cerr is not None or cgt is None or not cgt.value:
            st.nodes_dropped["no answer in the shop"] += 1
            continue
        ids[child.intent_id] = node.intent_id
        kept.append(node.model_copy(update={"ground_truth": cgt}))
    edges = tuple(
        e.model_copy(update={"src": ids[e.src], "dst": ids[e.dst]})
        for e in graph.edges
        if e.src in ids and e.dst in ids
    )
    base = graph.model_copy(update={"edges": edges, "env_id": root.env_id})
    return _finish(base, root, kept, loaded, st)
