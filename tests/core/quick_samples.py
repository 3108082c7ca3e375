"""A quick sample builder for any host world (the conformance tests run it on every world).

Real samples come from the construction pipeline (``core/graph`` + ``core/faults``); this
builder only makes a small executable graph around one seed intent (relaxations of each
condition, pivots to sibling seeds) and an *insufficient information* sample that withholds
one slot, so every registered world can run episodes before real samples exist.
"""

from __future__ import annotations

from core.envs.base import HostWorld
from core.model.base import content_hash
from core.model.intent import Edge, Intent, IntentGraph
from core.model.sample import FaultType, MaskEntry, Sample
from core.model.shift import classify_shift


def _executed(world: HostWorld, intent: Intent) -> Intent | None:
    try:
        gt = world.execute(intent)
    except Exception:  # noqa: BLE001 - a candidate that cannot execute is simply not admitted
        return None
    if not gt.value:
        return None
    return intent.model_copy(update={"ground_truth": gt})


def graph_from_seed(
    world: HostWorld, root: Intent, *, max_relax: int = 3, max_pivots: int = 2
) -> IntentGraph:
    """Build a small executable intent graph around ``root``.

    Raises:
        ValueError: If the root itself does not execute to a non-empty answer.
    """
    r = _executed(world, root)
    if r is None:
        raise ValueError(f"seed {root.intent_id} does not execute to a non-empty answer")
    children: list[Intent] = []
    if len(r.conditions) > 1:
        for c in r.conditions[:max_relax]:
            cand = Intent.build(
                benchmark=r.benchmark,
                env_id=r.env_id,
                base=r.base,
                conditions=[x for x in r.conditions if x != c],
                context=r.context,
            )
            got = _executed(world, cand)
            if got is not None:
                children.append(got)
    pivots = 0
    for s in world.seeds():
        if pivots >= max_pivots:
            break
        if s.env_id != r.env_id or s.base == r.base or s.intent_id == r.intent_id:
            continue
        got = _executed(world, s)
        if got is not None:
            children.append(got)
            pivots += 1
    edges = []
    kept: list[Intent] = []
    for ch in children:
        cls = classify_shift(r, ch)
        if cls is None or ch.intent_id in {k.intent_id for k in kept}:
            continue
        kept.append(ch)
        assert r.ground_truth is not None and ch.ground_truth is not None
        edges.append(
            Edge(
                src=r.intent_id,
                dst=ch.intent_id,
                operator=cls.operator,
                delta=cls[1],
                gt_moved=r.ground_truth.hash != ch.ground_truth.hash,
            )
        )
    gid = content_hash(
        {"env": r.env_id, "root": r.intent_id, "children": sorted(k.intent_id for k in kept)}
    )
    return IntentGraph(
        graph_id=gid,
        benchmark=r.benchmark,
        env_id=r.env_id,
        root=r,
        children=tuple(kept),
        edges=tuple(edges),
    )


def sample_from_seed(
    world: HostWorld,
    intent: Intent,
    graph: IntentGraph | None = None,
    *,
    withhold: str | None = None,
) -> tuple[Sample, IntentGraph]:
    """Return an *insufficient information* sample (one slot withheld) and its graph.

    Args:
        world: The host world.
        intent: The seed intent (becomes the root).
        graph: A graph rooted at ``intent`` (built with :func:`graph_from_seed` when None).
        withhold: The slot to withhold (default: the first condition's slot).
    """
    g = graph or graph_from_seed(world, intent)
    root = g.root
    slot = withhold or root.conditions[0].slot
    stated = [c for c in root.conditions if c.slot != slot]
    query = "Hi, I need your help. " + "; ".join(world.phrase(c) for c in stated) + "."
    mask = tuple(
        MaskEntry(
            slot=c.slot,
            kind="withheld" if c.slot == slot else "stated",
            fault=FaultType.INSUFFICIENT_INFORMATION if c.slot == slot else None,
            true_value=c.value,
            stated_value=None if c.slot == slot else c.value,
        )
        for c in root.conditions
    )
    sample = Sample(
        sample_id=Sample.make_id(g.graph_id, query, mask),
        benchmark=root.benchmark,
        graph_id=g.graph_id,
        env_id=root.env_id,
        root_intent_id=root.intent_id,
        query=query,
        faults=(FaultType.INSUFFICIENT_INFORMATION,),
        mask=mask,
        hidden_slots=(slot,),
        root_ground_truth=root.ground_truth,
        source="built",
    )
    return sample, g
