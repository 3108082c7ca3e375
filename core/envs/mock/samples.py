"""The mock intent graph and one hand-written sample per fault type.

Root: a teal shirt, size medium, up to $40 (ground truth ``s01, s02``). Children cover every
operator, including a substitution that does not move the answer (price cap 40 → 50).
"""

from __future__ import annotations

from functools import lru_cache

from core.envs.mock.world import BENCHMARK, ENV_ID, load_mock_world
from core.model.base import content_hash
from core.model.intent import Condition, Edge, Intent, IntentGraph, ShiftOperator
from core.model.sample import FaultType, MaskEntry, MaskKind, Sample

ROOT_CONDITIONS = (
    Condition(slot="color", value="teal"),
    Condition(slot="size", value="medium"),
    Condition(slot="price_upper", op="<=", value=40),
)

_CHILDREN: tuple[tuple[str, tuple[Condition, ...], ShiftOperator, str], ...] = (
    (
        "shirt",
        (*ROOT_CONDITIONS, Condition(slot="material", value="linen")),
        ShiftOperator.REFINE,
        "added material",
    ),
    ("shirt", ROOT_CONDITIONS[::2], ShiftOperator.RELAX, "removed size"),
    (
        "shirt",
        (Condition(slot="color", value="crimson"), *ROOT_CONDITIONS[1:]),
        ShiftOperator.SUBSTITUTE,
        "changed color: teal -> crimson",
    ),
    (
        "shirt",
        (*ROOT_CONDITIONS[:2], Condition(slot="price_upper", op="<=", value=50)),
        ShiftOperator.SUBSTITUTE,
        "changed price_upper: 40 -> 50",
    ),
    (
        "mug",
        (
            Condition(slot="color", value="ochre"),
            Condition(slot="size", value="large"),
            Condition(slot="price_upper", op="<=", value=20),
        ),
        ShiftOperator.PIVOT,
        "pivot_to: mug",
    ),
)


def _intent(base: str, conds: tuple[Condition, ...]) -> Intent:
    world = load_mock_world()
    it = Intent.build(benchmark=BENCHMARK, env_id=ENV_ID, base=base, conditions=conds)
    return it.model_copy(update={"ground_truth": world.execute(it)})


@lru_cache(maxsize=1)
def mock_graph() -> IntentGraph:
    """Return the mock intent graph (root + one child per operator, two substitutions)."""
    root = _intent("shirt", ROOT_CONDITIONS)
    children = []
    edges = []
    for base, conds, op, delta in _CHILDREN:
        child = _intent(base, conds)
        children.append(child)
        assert root.ground_truth is not None and child.ground_truth is not None
        edges.append(
            Edge(
                src=root.intent_id,
                dst=child.intent_id,
                operator=op,
                delta=delta,
                gt_moved=root.ground_truth.hash != child.ground_truth.hash,
            )
        )
    gid = content_hash(
        {"env": ENV_ID, "root": root.intent_id, "children": sorted(c.intent_id for c in children)}
    )
    return IntentGraph(
        graph_id=gid,
        benchmark=BENCHMARK,
        env_id=ENV_ID,
        root=root,
        children=tuple(children),
        edges=tuple(edges),
    )


_T, _M, _P = "teal", "medium", 40
# fault -> (query, {slot: (kind, stated_value, surface)}, extra entries)
_SPECS: dict[
    FaultType, tuple[str, dict[str, tuple[MaskKind, str | None, str]], list[MaskEntry]]
] = {
    FaultType.INDIRECT_INTENT: (
        "My old teal shirt finally tore, and I never spend more than $40 on one. "
        "It was the usual fit, you know.",
        {"size": ("marked", None, "the usual fit")},
        [],
    ),
    FaultType.CONTEXTUAL_IRRELEVANCE: (
        "My cousin's wedding was lovely last week, the band played all night. Anyway, I need a "
        "teal shirt, size medium, up to $40.",
        {},
        [
            MaskEntry(
                slot="_noise",
                kind="noise",
                fault=FaultType.CONTEXTUAL_IRRELEVANCE,
                surface="My cousin's wedding was lovely last week",
            )
        ],
    ),
    FaultType.FACTUAL_ERROR: (
        "I need a crimson shirt, size medium, up to $40.",
        {"color": ("substituted", "crimson", "crimson")},
        [],
    ),
    FaultType.FALSE_PRESUPPOSITION: (
        "I'd like a shirt in the same colour as the one you sold me last spring, size medium, "
        "up to $40.",
        {"color": ("presupposed", None, "the same colour as the one you sold me last spring")},
        [],
    ),
    FaultType.TOOL_CAPABILITY_MISMATCH: (
        "Use your colour-matching camera on my photo to pick the colour, then find me a shirt, "
        "size medium, up to $40.",
        {"color": ("capability", None, "colour-matching camera")},
        [],
    ),
    FaultType.INSUFFICIENT_INFORMATION: (
        "I need a shirt, size medium, up to $40.",
        {"color": ("withheld", None, "")},
        [],
    ),
    FaultType.IRRELEVANT_INFORMATION: (
        "I need a teal shirt, size medium, up to $40, and it must have a chest pocket.",
        {},
        [
            MaskEntry(
                slot="pocket",
                kind="extra",
                fault=FaultType.IRRELEVANT_INFORMATION,
                stated_value="chest pocket",
                surface="it must have a chest pocket",
            )
        ],
    ),
    FaultType.LEXICAL_AMBIGUITY: (
        "I need a shirt in a sea colour, size medium, up to $40.",
        {"color": ("ambiguous", None, "a sea colour")},
        [],
    ),
    FaultType.SYNTACTIC_AMBIGUITY: (
        "I need a teal shirt for my sons, one small and one large, or the size in between, "
        "up to $40.",
        {"size": ("ambiguous", None, "one small and one large, or the size in between")},
        [],
    ),
    FaultType.REFERENTIAL_AMBIGUITY: (
        "I need a shirt in that colour from before, not the other one, size medium, up to $40.",
        {"color": ("ambiguous", None, "that colour from before")},
        [],
    ),
    FaultType.VAGUENESS_SUBJECTIVITY: (
        "I need a shirt in a calm, pleasant colour, size medium, up to $40.",
        {"color": ("marked", None, "a calm, pleasant colour")},
        [],
    ),
}


def mock_sample(fault: FaultType) -> Sample:
    """Return the mock sample carrying ``fault``."""
    graph = mock_graph()
    query, faulty, extra = _SPECS[fault]
    mask: list[MaskEntry] = []
    for c in graph.root.conditions:
        if c.slot in faulty:
            kind, stated, surface = faulty[c.slot]
            mask.append(
                MaskEntry(
                    slot=c.slot,
                    kind=kind,
                    fault=fault,
                    true_value=c.value,
                    stated_value=stated,
                    surface=surface,
                )
            )
        else:
            mask.append(
                MaskEntry(slot=c.slot, kind="stated", true_value=c.value, stated_value=c.value)
            )
    mask.extend(extra)
    mask_t = tuple(mask)
    return Sample(
        sample_id=Sample.make_id(graph.graph_id, query, mask_t),
        benchmark=BENCHMARK,
        graph_id=graph.graph_id,
        env_id=ENV_ID,
        root_intent_id=graph.root.intent_id,
        query=query,
        faults=(fault,),
        mask=mask_t,
        hidden_slots=tuple(m.slot for m in mask_t if m.hidden),
        root_ground_truth=graph.root.ground_truth,
        source="bundled",
    )


def mock_samples() -> list[Sample]:
    """Return one mock sample per fault type (every mask kind is covered)."""
    return [mock_sample(f) for f in FaultType]
