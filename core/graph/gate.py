"""The graph policy gate: every node of an intent graph belongs to the root's customer.

A silent shift changes what the user wants, never who the user is. A candidate node (a
refinement, relaxation, substitution or pivot) passes the gate only when

* every customer its conditions reference — through a user id, an order, a reservation or a
  payment method of the host's database — is the root's customer, and
* the facts the persona may state freely (``Intent.context``: user id, e-mail, name, zip …)
  are the root's.

Hosts without customers (the shop) have an empty entity index, so only the second rule applies.
The gate runs on candidates before they are executed (graph construction) and on imported
release graphs; every removal is counted per operator and reported.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from core.graph.hosts.base import HostAdapter, json_leaves
from core.model.intent import Edge, Intent, IntentGraph


@dataclass
class GateStats:
    """What the gate removed (per shift operator) and why."""

    checked: int = 0
    removed: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready view."""
        return {
            "checked": self.checked,
            "removed": sum(self.removed.values()),
            "removed_by_operator": dict(sorted(self.removed.items())),
            "reasons": dict(sorted(self.reasons.items())),
        }


class PolicyGate:
    """Checks that candidate nodes stay with the root's customer and persona facts."""

    def __init__(self, adapter: HostAdapter) -> None:
        self.adapter = adapter
        self._index: dict[str, str] | None = None

    @property
    def index(self) -> dict[str, str]:
        """Entity id → customer id of the host (built once)."""
        if self._index is None:
            self._index = self.adapter.customer_index()
        return self._index

    def customers(self, intent: Intent) -> set[str]:
        """Customers an intent's conditions and context reference."""
        index = self.index
        out: set[str] = set()
        if index:
            for c in intent.conditions:
                value: object = c.value
                if isinstance(value, str):
                    try:
                        value = json.loads(value)
                    except ValueError:
                        pass
                for leaf in json_leaves(value):
                    owner = index.get(leaf)
                    if owner is not None:
                        out.add(owner)
        uid = intent.context.get("user_id")
        if uid:
            out.add(index.get(uid, uid))
        return out

    def reason(self, root: Intent, node: Intent) -> str | None:
        """Why ``node`` may not share a graph with ``root`` (None when it may)."""
        mine = self.customers(root)
        theirs = self.customers(node)
        if theirs - mine:
            return "another customer"
        if root.context and node.context and node.context != root.context:
            return "persona facts differ"
        return None

    def filter_graph(self, graph: IntentGraph, stats: GateStats | None = None) -> IntentGraph:
        """Drop the children (and their edges) of ``graph`` that fail the gate."""
        st = stats if stats is not None else GateStats()
        op_of = {e.dst: e.operator.value for e in graph.edges if e.src == graph.root.intent_id}
        kept = []
        dropped: set[str] = set()
        for child in graph.children:
            st.checked += 1
            why = self.reason(graph.root, child)
            if why is None:
                kept.append(child)
                continue
            dropped.add(child.intent_id)
            st.removed[op_of.get(child.intent_id, "other")] += 1
            st.reasons[why] += 1
        if not dropped:
            return graph
        edges: tuple[Edge, ...] = tuple(
            e for e in graph.edges if e.src not in dropped and e.dst not in dropped
        )
        return graph.model_copy(update={"children": tuple(kept), "edges": edges})
