"""Grow one depth-1 intent graph per seed: retrieve, enumerate, execute, admit, rank.

1. The root (a host seed) must execute to a non-empty answer and be valid for its host.
2. **Retrieval first**: every other seed of the same environment that classifies as a branch
   becomes a REAL candidate (pivots are retrieval-only).
3. **Enumeration**: relaxations drop one condition; refinements add a *witness* condition
   (held by some but not all current answers, so the answer shrinks but stays non-empty);
   substitutions swap a value for another from the slot's domain.
4. The policy gate (:mod:`core.graph.gate`) removes candidates that reference another
   customer or change the persona's facts; the removals are counted per operator.
5. Every candidate is executed; admission = executes and non-empty; ``gt_moved`` is labelled.
6. Balanced ranking: ``branching / 4`` per operator, REAL first, moved first, larger movement
   first, then a seeded hash tie-break. A graph needs at least one moved edge.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from core.graph.gate import PolicyGate
from core.graph.hosts.base import HostAdapter
from core.model.base import canonical_json, content_hash
from core.model.intent import Edge, GroundTruth, Intent, IntentGraph, Provenance, ShiftOperator
from core.model.shift import OPERATOR_ORDER, classify_shift

GRAPH_BUILDER_VERSION = "graph-2"
"""Bumped whenever construction changes what a graph contains."""

CAP_RELAX = 12
CAP_REFINE = 24
CAP_SUBSTITUTE = 24
CAP_PIVOT = 12
SUBSTITUTES_PER_SLOT = 4


@dataclass
class Candidate:
    """One proposed child of a root."""

    intent: Intent
    operator: ShiftOperator
    delta: str
    provenance: Provenance
    gt: GroundTruth | None = None
    moved: bool = False
    movement: float = 0.0


@dataclass
class GraphStats:
    """Counters of one graph-building pass."""

    tasks: int = 0
    roots_rejected: int = 0
    graphs: int = 0
    candidates: int = 0
    admitted: int = 0
    rejected_unexecutable: int = 0
    rejected_empty: int = 0
    no_moved_edge: int = 0
    gate_removed: Counter[str] = field(default_factory=Counter)
    gate_reasons: Counter[str] = field(default_factory=Counter)
    by_operator: Counter[str] = field(default_factory=Counter)
    by_provenance: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready view (operators in canonical order)."""
        return {
            "tasks": self.tasks,
            "executable_seeds": self.tasks - self.roots_rejected,
            "graphs": self.graphs,
            "roots_rejected": self.roots_rejected,
            "candidates": self.candidates,
            "admitted": self.admitted,
            "rejected_unexecutable": self.rejected_unexecutable,
            "rejected_empty": self.rejected_empty,
            "no_moved_edge": self.no_moved_edge,
            "gate_removed": sum(self.gate_removed.values()),
            "gate_removed_by_operator": {
                op.value: self.gate_removed.get(op.value, 0) for op in OPERATOR_ORDER
            },
            "gate_reasons": dict(sorted(self.gate_reasons.items())),
            "by_operator": {op.value: self.by_operator.get(op.value, 0) for op in OPERATOR_ORDER},
            "by_provenance": dict(sorted(self.by_provenance.items())),
        }


def _movement(adapter: HostAdapter, root_gt: GroundTruth, gt: GroundTruth) -> float:
    a, b = adapter.answer_view(root_gt), adapter.answer_view(gt)
    if a is None or b is None:
        return 0.0 if root_gt.hash == gt.hash else 1.0
    union = a | b
    return 1.0 - (len(a & b) / len(union)) if union else 0.0


def retrieve(adapter: HostAdapter, root: Intent) -> list[Candidate]:
    """REAL candidates: sibling seeds that classify as a branch of ``root``."""
    out: list[Candidate] = []
    for sib in adapter.siblings(root):
        rel = classify_shift(root, sib)
        if rel is None:
            continue
        out.append(Candidate(sib, rel[0], rel[1], "REAL"))
    return out


def enumerate_candidates(
    adapter: HostAdapter, root: Intent, root_gt: GroundTruth, seed: int
) -> list[Candidate]:
    """SYNTHETIC candidates: drop a condition, add a witness, substitute a domain value."""
    out: list[Candidate] = []

    def add(conds: list, op: ShiftOperator) -> None:  # type: ignore[type-arg]
        node = adapter.make_intent(root, conds)
        rel = classify_shift(root, node)
        if rel is not None and rel[0] is op and adapter.is_valid(node):
            out.append(Candidate(node, op, rel[1], "SYNTHETIC"))

    conds = list(root.conditions)
    for relaxed in adapter.relaxations(root)[:CAP_RELAX]:
        add(relaxed, ShiftOperator.RELAX)
    for w in _seeded(adapter.witnesses(root, root_gt), seed, root.intent_id, "ref")[:CAP_REFINE]:
        add([*conds, *w], ShiftOperator.REFINE)
    subs: list[list] = []  # type: ignore[type-arg]
    for i, c in enumerate(conds):
        values = _seeded(adapter.domain(root, c.slot), seed, root.intent_id, c.slot)
        for v in values[:SUBSTITUTES_PER_SLOT]:
            subs.append(conds[:i] + [c.model_copy(update={"value": v})] + conds[i + 1 :])
    for s in _seeded(subs, seed, root.intent_id, "sub")[:CAP_SUBSTITUTE]:
        add(s, ShiftOperator.SUBSTITUTE)
    return out


def _seeded(items: list, seed: int, *salt: str) -> list:  # type: ignore[type-arg]
    """Deterministic seeded order of ``items`` (hash of seed, salt and canonical content)."""
    return sorted(items, key=lambda x: content_hash([seed, list(salt), canonical_json(x)]))


def build_graph(
    adapter: HostAdapter,
    root: Intent,
    *,
    seed: int = 42,
    branching: int = 8,
    stats: GraphStats | None = None,
    gate: PolicyGate | None = None,
) -> IntentGraph | None:
    """Build the intent graph rooted at ``root`` (None when the root is not admissible).

    Args:
        adapter: Construction hooks of the host.
        root: A seed intent.
        seed: Seed of the ranking tie-break and enumeration order.
        branching: Children kept (balanced ``branching // 4`` per operator).
        stats: Counters to update.
        gate: The policy gate (one per adapter; built when None).

    Returns:
        The graph, or None (root unexecutable/empty/invalid, or no moved edge).
    """
    st = stats if stats is not None else GraphStats()
    gate = gate if gate is not None else PolicyGate(adapter)
    root_gt = adapter.execute(root)
    if root_gt is None or adapter.is_empty(root_gt) or not adapter.is_valid(root):
        st.roots_rejected += 1
        return None
    quota = max(1, branching // 4)
    pool = _pool(adapter, root, root_gt, seed, quota)
    chosen = _rank(_admit(adapter, gate, root, root_gt, pool, st), quota, seed)
    if not any(c.moved for c in chosen):
        st.no_moved_edge += 1
        return None
    st.graphs += 1
    world_id = adapter.world.world_id
    return _assemble(root, root_gt, chosen, st, seed=seed, branching=branching, world_id=world_id)


def _pool(
    adapter: HostAdapter, root: Intent, root_gt: GroundTruth, seed: int, quota: int
) -> list[Candidate]:
    """REAL candidates, then SYNTHETIC ones for operators retrieval left below quota."""
    real = retrieve(adapter, root)
    real_ops = {c.operator for c in real}
    pool = list(real)
    for c in enumerate_candidates(adapter, root, root_gt, seed):
        if c.operator not in real_ops or sum(r.operator is c.operator for r in real) < quota:
            pool.append(c)
    return pool


def _admit(
    adapter: HostAdapter,
    gate: PolicyGate,
    root: Intent,
    root_gt: GroundTruth,
    pool: list[Candidate],
    st: GraphStats,
) -> list[Candidate]:
    """Dedupe (REAL first wins), gate, execute and admit non-empty answers, labelling movement."""
    seen: set[str] = {root.intent_id}
    admitted: list[Candidate] = []
    for c in pool:
        if c.intent.intent_id in seen:
            continue
        seen.add(c.intent.intent_id)
        st.candidates += 1
        why = gate.reason(root, c.intent)
        if why is not None:
            st.gate_removed[c.operator.value] += 1
            st.gate_reasons[why] += 1
            continue
        gt = adapter.execute(c.intent)
        if gt is None:
            st.rejected_unexecutable += 1
            continue
        if adapter.is_empty(gt):
            st.rejected_empty += 1
            continue
        c.gt = gt
        c.moved = gt.hash != root_gt.hash
        c.movement = _movement(adapter, root_gt, gt)
        admitted.append(c)
        st.admitted += 1
    return admitted


def _rank(admitted: list[Candidate], quota: int, seed: int) -> list[Candidate]:
    """Balanced ranking: ``quota`` per operator, REAL, moved, larger movement, hash tie-break."""
    chosen: list[Candidate] = []
    for op in OPERATOR_ORDER:
        group = [c for c in admitted if c.operator is op]
        group.sort(
            key=lambda c: (
                c.provenance != "REAL",
                not c.moved,
                -c.movement,
                content_hash([seed, c.intent.intent_id]),
            )
        )
        chosen.extend(group[:quota])
    return chosen


def _assemble(
    root: Intent,
    root_gt: GroundTruth,
    chosen: list[Candidate],
    st: GraphStats,
    *,
    seed: int,
    branching: int,
    world_id: str,
) -> IntentGraph:
    """The graph: the root with its answer, the chosen children and their root edges."""
    root_node = root.model_copy(update={"ground_truth": root_gt, "is_seed": True})
    children: list[Intent] = []
    edges: list[Edge] = []
    for c in chosen:
        node = c.intent.model_copy(update={"ground_truth": c.gt, "is_seed": c.provenance == "REAL"})
        children.append(node)
        edges.append(
            Edge(
                src=root.intent_id,
                dst=node.intent_id,
                operator=c.operator,
                delta=c.delta,
                provenance=c.provenance,
                gt_moved=c.moved,
            )
        )
        st.by_operator[c.operator.value] += 1
        st.by_provenance[c.provenance] += 1
    config: dict[str, str | int | float | bool] = {
        "builder": GRAPH_BUILDER_VERSION,
        "branching": branching,
        "depth": 1,
        "seed": seed,
        "min_gt_moved_edges": 1,
    }
    gid = content_hash(
        {
            "env": root.env_id,
            "root": root.intent_id,
            "children": sorted(n.intent_id for n in children),
            "config": config,
            # the same tasks on different data are different graphs (and samples)
            "world": world_id,
        }
    )
    return IntentGraph(
        graph_id=gid,
        benchmark=root.benchmark,
        env_id=root.env_id,
        root=root_node,
        children=tuple(children),
        edges=tuple(edges),
        config=config,
    )


def build_all(
    adapter: HostAdapter, *, seed: int = 42, branching: int = 8, limit: int | None = None
) -> tuple[list[IntentGraph], GraphStats]:
    """Build graphs for every seed of the adapter's world (optionally the first ``limit``)."""
    st = GraphStats()
    graphs: list[IntentGraph] = []
    seeds = adapter.seeds()
    if limit is not None:
        seeds = seeds[:limit]
    gate = PolicyGate(adapter)
    for s in seeds:
        st.tasks += 1
        g = build_graph(adapter, s, seed=seed, branching=branching, stats=st, gate=gate)
        if g is not None:
            graphs.append(g)
    graphs.sort(key=lambda g: g.graph_id)
    return graphs, st
