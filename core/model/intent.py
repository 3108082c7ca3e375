"""Intents, ground truth and intent graphs.

A *condition* is one requirement of the user's goal (``attr:machine wash = machine wash``,
``option:color = black``, ``price_upper <= 40``; τ²: ``arg:0:cancel_pending_order:reason =
"no longer needed"``). An *intent* is a set of conditions over a *base* (the host task it
derives from). Alternative goals form an *intent graph*: a root and children joined by edges
labelled with one of four shift operators.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from core.model.base import SCHEMA_VERSION, Strict, content_hash
from core.model.shift import ShiftOperator as ShiftOperator
from core.model.shift import classify_shift

ConditionOp = Literal["=", "<=", ">=", "!=", "contains"]

GRAPH_SCHEMA_VERSION = 2
"""Schema version of intent graphs: v2 added :attr:`IntentGraph.world` (v1 graphs stay readable:
a graph without a world is resolved as documented in :mod:`core.construction.worlds`)."""

BUNDLED_WORLD_PREFIX = "bundled:"
"""World ids of the project's bundled worlds are ``bundled:<benchmark>``."""
ConditionValue = str | int | float | bool


class Condition(Strict):
    """One (slot, op, value) requirement of an intent."""

    slot: str = Field(description="Slot name, e.g. 'attr:machine wash', 'option:color'.")
    op: ConditionOp = Field(default="=", description="Comparison operator.")
    value: ConditionValue = Field(description="Required value (canonical JSON text for τ²).")

    def key(self) -> tuple[str, str, str]:
        """Return a total-order sort key."""
        return (self.slot, self.op, repr(self.value))


GroundTruthKind = Literal["purchaseset", "statehash", "rowset", "scalar"]


class GroundTruth(Strict):
    """The executed answer of an intent."""

    kind: GroundTruthKind = Field(description="What the value holds.")
    value: list[str] = Field(description="Canonical, sorted answer rows (or one state hash).")
    hash: str = Field(default="", description="sha256[:32] of (kind, value); filled if empty.")

    def model_post_init(self, __context: object) -> None:
        """Fill ``hash`` from (kind, value) when it was not given."""
        if not self.hash:
            object.__setattr__(self, "hash", content_hash([self.kind, self.value], 32))

    @property
    def cardinality(self) -> int:
        """Number of answer rows."""
        return len(self.value)

    def contains(self, row: str) -> bool:
        """Return whether ``row`` is one of the answers."""
        return row in self.value


class Intent(Strict):
    """One goal a user may hold: a base task plus sorted conditions and its ground truth."""

    schema_version: int = SCHEMA_VERSION
    intent_id: str = Field(description="Content hash of benchmark, env, base and conditions.")
    benchmark: str = Field(description="Benchmark id this intent belongs to.")
    env_id: str = Field(description="Environment within the host (WebShop cluster; τ² shop).")
    base: str = Field(description="The host task it derives from (pivots change the base).")
    conditions: tuple[Condition, ...] = Field(description="Requirements, sorted canonically.")
    ground_truth: GroundTruth | None = Field(default=None, description="Executed answer.")
    is_seed: bool = Field(default=False, description="True for intents read from a host task.")
    source_record: str | None = Field(default=None, description="Native task id, if real.")
    context: dict[str, str] = Field(
        default_factory=dict,
        description="Facts the user may state freely (account ids, names); never hidden.",
    )

    @field_validator("conditions")
    @classmethod
    def _sorted(cls, v: tuple[Condition, ...]) -> tuple[Condition, ...]:
        return tuple(sorted(v, key=Condition.key))

    @staticmethod
    def make_id(benchmark: str, env_id: str, base: str, conditions: tuple[Condition, ...]) -> str:
        """Compute the content-hash id of an intent."""
        conds = sorted(conditions, key=Condition.key)
        return content_hash(
            {"benchmark": benchmark, "env_id": env_id, "base": base, "conditions": conds}
        )

    @classmethod
    def build(
        cls,
        *,
        benchmark: str,
        env_id: str,
        base: str,
        conditions: tuple[Condition, ...] | list[Condition],
        **kw: object,
    ) -> Intent:
        """Build an intent, computing its id from its content."""
        conds = tuple(sorted(conditions, key=Condition.key))
        return cls(
            intent_id=cls.make_id(benchmark, env_id, base, conds),
            benchmark=benchmark,
            env_id=env_id,
            base=base,
            conditions=conds,
            **kw,
        )

    def slot_map(self) -> dict[str, Condition]:
        """Return conditions keyed by slot (last wins for repeated slots)."""
        return {c.slot: c for c in self.conditions}


class WorldRef(Strict):
    """The host world a graph or sample was built on: which one, and exactly what it held.

    ``world_id`` names the world (``bundled:<benchmark>`` for the project's bundled worlds, the
    store's world id for imported ones); ``fingerprint`` is the content hash of the world's
    data at build time (:attr:`core.envs.base.HostWorld.world_id`). A world that is missing, or
    whose data now hashes differently, is refused before anything runs.
    """

    benchmark: str = Field(description="Benchmark id of the world.")
    world_id: str = Field(description="'bundled:<benchmark>' or the store's world id.")
    fingerprint: str = Field(description="Content hash of the world's data when built.")
    name: str = Field(default="", description="Human label (import folder, 'bundled').")

    @property
    def is_bundled(self) -> bool:
        """Whether this is one of the project's bundled worlds."""
        return self.world_id.startswith(BUNDLED_WORLD_PREFIX)

    @classmethod
    def bundled(cls, benchmark: str, fingerprint: str) -> WorldRef:
        """The reference of the bundled world of ``benchmark``."""
        return cls(
            benchmark=benchmark,
            world_id=BUNDLED_WORLD_PREFIX + benchmark,
            fingerprint=fingerprint,
            name="bundled",
        )


def drop_none_world(handler: SerializerFunctionWrapHandler, obj: Any) -> Any:
    """Serialise ``obj`` and leave out a ``world`` that is None (older records stay identical)."""
    out = handler(obj)
    if isinstance(out, dict) and out.get("world", 0) is None:
        out.pop("world")
    return out


Provenance = Literal["REAL", "SYNTHETIC"]


class Edge(Strict):
    """A possible silent shift from one intent to another."""

    src: str = Field(description="Source intent id.")
    dst: str = Field(description="Destination intent id.")
    operator: ShiftOperator = Field(description="refine / relax / substitute / pivot.")
    delta: str = Field(description="Human-readable change, e.g. 'added attr:x', 'pivot_to: b'.")
    provenance: Provenance = Field(default="SYNTHETIC", description="REAL = retrieved task.")
    gt_moved: bool = Field(description="Whether the destination's ground truth differs.")


class ShiftEdge(Strict):
    """The edge a shift followed (the runtime form of an :class:`Edge`, as events store it)."""

    src: str
    dst: str
    operator: str = Field(description="refine / relax / substitute / pivot.")
    delta: str
    gt_moved: bool
    provenance: str = "SYNTHETIC"


def _gt_moved(src: Intent, dst: Intent) -> bool:
    if src.ground_truth is not None and dst.ground_truth is not None:
        return src.ground_truth.hash != dst.ground_truth.hash
    return True


class _Transitions(NamedTuple):
    """The memoised move table of one graph, with the field objects it was built from."""

    root: Intent
    children: tuple[Intent, ...]
    edges: tuple[Edge, ...]
    by_src: dict[str, tuple[ShiftEdge, ...]]


_MEMO = "_transitions_memo"
"""Key of the move table in a graph's ``__dict__`` (not a field: never dumped or compared)."""


class IntentGraph(Strict):
    """A root intent, its admitted alternative goals and the edges between them."""

    schema_version: int = GRAPH_SCHEMA_VERSION
    graph_id: str = Field(description="Content hash of env, root, children and config.")
    benchmark: str
    env_id: str
    root: Intent
    children: tuple[Intent, ...] = ()
    edges: tuple[Edge, ...] = Field(default=(), description="Root→child edges.")
    config: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Generation config (hash input)."
    )
    world: WorldRef | None = Field(
        default=None, description="The world it was built on (None: a v1 graph, before v2)."
    )

    @model_serializer(mode="wrap")
    def _ser(self, handler: SerializerFunctionWrapHandler) -> Any:
        return drop_none_world(handler, self)

    def node(self, intent_id: str) -> Intent:
        """Return the node with ``intent_id`` (root or child)."""
        if self.root.intent_id == intent_id:
            return self.root
        for c in self.children:
            if c.intent_id == intent_id:
                return c
        raise KeyError(intent_id)

    @property
    def nodes(self) -> tuple[Intent, ...]:
        """Root followed by children."""
        return (self.root, *self.children)

    def transitions(self, src_id: str) -> tuple[ShiftEdge, ...]:
        """Return every move from ``src_id``, sorted by (destination, operator).

        A stored edge wins for its (src, dst) pair (construction labelled it, with its
        provenance and ``gt_moved``); every other ordered pair of nodes is classified by
        :func:`core.model.shift.classify_shift`, with ``gt_moved`` from the two executed ground
        truths, so multi-hop shifts stay executable.

        The table is built once per graph object and kept on it. It is immutable once
        published (one attribute store), so concurrent readers need no lock: a race at most
        builds the same table twice. A copy with other nodes or edges rebuilds it.

        Raises:
            KeyError: If ``src_id`` is not a node of the graph.
        """
        memo = self.__dict__.get(_MEMO)
        if not (
            isinstance(memo, _Transitions)
            and memo.root is self.root
            and memo.children is self.children
            and memo.edges is self.edges
        ):
            memo = _Transitions(self.root, self.children, self.edges, self._move_table())
            self.__dict__[_MEMO] = memo
        got = memo.by_src.get(src_id)
        if got is None:
            raise KeyError(src_id)
        return got

    def _move_table(self) -> dict[str, tuple[ShiftEdge, ...]]:
        nodes = self.nodes
        stored = {(e.src, e.dst): e for e in self.edges}
        table: dict[str, tuple[ShiftEdge, ...]] = {}
        for src in nodes:
            out: list[ShiftEdge] = []
            for dst in nodes:
                if dst.intent_id == src.intent_id:
                    continue
                e = stored.get((src.intent_id, dst.intent_id))
                if e is None:
                    shift = classify_shift(src, dst)
                    if shift is None:
                        continue
                    e = Edge(
                        src=src.intent_id,
                        dst=dst.intent_id,
                        operator=shift.operator,
                        delta=shift.delta,
                        gt_moved=_gt_moved(src, dst),
                    )
                out.append(
                    ShiftEdge(
                        src=e.src,
                        dst=e.dst,
                        operator=e.operator.value,
                        delta=e.delta,
                        gt_moved=e.gt_moved,
                        provenance=e.provenance,
                    )
                )
            table.setdefault(src.intent_id, tuple(sorted(out, key=lambda e: (e.dst, e.operator))))
        return table
