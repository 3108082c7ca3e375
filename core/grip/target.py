"""The moving target and the valid extractions of one episode (what every GRIP reducer reads).

* The *target* starts as the sample's ``hidden_slots``. An edit shift (refine / relax /
  substitute) re-anchors it: ``target := (target − removed) ∪ added ∪ changed``, the slot sets
  comparing the source and destination intents of the graph; a pivot replaces it with the
  destination's ``dst_slots``. Extractions of added, changed or removed slots are dropped (a
  pivot keeps only those whose condition is unchanged in the destination). A shift between
  nodes the graph does not hold makes the episode unreadable.
* A disclosure is a *valid extraction* when it answers a question (``how="answer"``) and
  reflects the current intent; volunteered and context disclosures never count, and neither do
  rejection hints (``how="rejection_hint"``, GRIP ``grip-2``): a hint is feedback that names
  what is wrong, never a value, so it discloses nothing.
* *Environment discovery* (``grip-3``: reported on its own, never as extraction): an owed slot
  whose true value (≥ 3 characters, lower-cased, JSON lists expanded) appears in an observation
  before the agent itself ever wrote it is *discovered*. Recovery counts answers only (the
  paper's Recovery is what the agent recovered by asking); a success whose target was known
  only with discovery is Inferred, and the Discovery column reports how often the environment
  completed what the answers left open.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.grip.rows import ShiftRow, obj, seq

CREDITED_HOW: frozenset[str] = frozenset({"answer"})
"""Disclosure channels that count as extraction (a rejection hint is feedback, not one)."""

MIN_DISCOVERY_CHARS = 3
"""Shortest value string that environment discovery may match."""

Cond = tuple[str, str]
"""A condition reduced to (op, canonical value text)."""


@dataclass(frozen=True)
class StartInfo:
    """What the extraction needs from the ``episode_started`` event (shared per sample)."""

    hidden_slots: tuple[str, ...]
    root_intent_id: str
    k: int
    budget: float | None
    nodes: Mapping[str, Mapping[str, Cond]] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, tuple[str, ...]]] = field(default_factory=dict)


def value_text(value: Any) -> str:
    """Text of a value as discovery and condition comparison see it (integral floats bare)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def discovery_strings(value: Any) -> tuple[str, ...]:
    """Return the lower-cased strings whose joint appearance reveals ``value``.

    JSON lists (τ² canonical values) expand to their elements; booleans and strings shorter
    than :data:`MIN_DISCOVERY_CHARS` cannot be discovered (empty tuple).

    >>> discovery_strings('["Red", "blue"]'), discovery_strings(40), discovery_strings("black")
    (('red', 'blue'), (), ('black',))
    """
    if isinstance(value, bool):
        return ()
    items: list[Any] = [value]
    if isinstance(value, str) and value[:1] in ("[", '"'):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        items = list(parsed) if isinstance(parsed, list) else [parsed]
    out: list[str] = []
    for item in items:
        if isinstance(item, bool):
            continue
        text = value_text(item).strip().lower()
        if len(text) >= MIN_DISCOVERY_CHARS:
            out.append(text)
    if len(out) != len(items):
        return ()
    return tuple(out)


def start_info(start: Mapping[str, Any]) -> StartInfo:
    """Reduce an ``episode_started`` event (stored form) to what extraction needs.

    Args:
        start: The event as a JSON dict.

    Returns:
        Hidden slots, root id, fault count, budget and every graph node's conditions.
    """
    sample = start["sample"]
    graph = start.get("graph") or {}
    nodes: dict[str, dict[str, Cond]] = {}
    values: dict[str, dict[str, tuple[str, ...]]] = {}
    node_list = [graph["root"], *graph.get("children", ())] if graph else []
    for node in node_list:
        conds: dict[str, Cond] = {}
        vals: dict[str, tuple[str, ...]] = {}
        for c in node.get("conditions", ()):
            conds[c["slot"]] = (c.get("op", "="), value_text(c["value"]))
            vals[c["slot"]] = discovery_strings(c["value"])
        nodes[node["intent_id"]] = conds
        values[node["intent_id"]] = vals
    budget = start.get("budget")
    return StartInfo(
        hidden_slots=tuple(sample.get("hidden_slots", ())),
        root_intent_id=str(sample["root_intent_id"]),
        k=len(sample.get("faults", ())),
        budget=float(budget) if budget is not None else None,
        nodes=nodes,
        values=values,
    )


def _flatten(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _flatten(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, out)
    elif value is not None:
        out.append(value_text(value))


def action_text(action: Mapping[str, Any]) -> str:
    """Everything the agent wrote in one action, lower-cased."""
    if action.get("kind") == "env":
        inner = action.get("action") or {}
        parts = [str(inner.get("tool", ""))]
        _flatten(inner.get("args") or {}, parts)
        return " ".join(parts).lower()
    return str(action.get("text") or action.get("raw") or "").lower()


class Target:
    """The target slots, the valid extractions and the current intent of one episode."""

    __slots__ = (
        "info",
        "slots",
        "extracted",
        "discovered",
        "cur_id",
        "readable",
        "ever_full",
        "_acts",
        "_said",
    )

    def __init__(self, info: StartInfo | None) -> None:
        self.info = info
        self.slots: set[str] = set(info.hidden_slots) if info else set()
        self.extracted: set[str] = set()
        self.discovered: set[str] = set()
        self.cur_id = info.root_intent_id if info else ""
        self.readable = info is not None
        self.ever_full = False
        self._acts: list[Any] = []
        self._said: list[str] = []

    def full(self) -> bool:
        """A non-empty target, every slot of it extracted."""
        return bool(self.slots) and self.slots <= self.extracted

    def aims_at_owed(self, slots: Iterable[str]) -> bool:
        """Whether any of ``slots`` is in the target and not yet extracted."""
        return any(s in self.slots and s not in self.extracted for s in slots)

    def known(self) -> bool:
        """A non-empty target, every slot of it answered or discovered in the environment."""
        return bool(self.slots) and self.slots <= (self.extracted | self.discovered)

    def commit(self) -> tuple[bool, bool, bool]:
        """(non-empty target, fully extracted by answers, fully known with discovery) now."""
        return bool(self.slots), self.full(), self.known()

    def note_action(self, action: Any) -> None:
        """Remember an agent action (its text is read only if discovery needs it)."""
        self._acts.append(action)

    def credit(self, intent_id: str | None, disclosures: Iterable[Mapping[str, Any]]) -> None:
        """Credit a reply's answers (with a value) when it reflects the current intent."""
        if intent_id is None or intent_id == self.cur_id:
            credited = [
                x["slot"]
                for x in disclosures
                if x.get("how") in CREDITED_HOW and x.get("value") is not None
            ]
            if credited:
                self.extracted.update(credited)
                self.ever_full = self.ever_full or self.full()

    def discover(self, text: str | None) -> None:
        """Note owed slots whose true value the environment showed before the agent wrote it.

        Discovered slots are kept apart from extracted ones: they never count as Recovery.
        """
        info = self.info
        if info is None or not self.readable or not text:
            return
        owed_all = self.slots - self.extracted - self.discovered
        if not owed_all:
            return
        vals = info.values.get(self.cur_id, {})
        owed = [s for s in owed_all if vals.get(s)]
        if not owed:
            return
        seen = str(text).lower()
        said = self._said
        while len(said) < len(self._acts):
            said.append(action_text(obj(self._acts[len(said)])))
        written = " ".join(said)
        for slot in owed:
            strings = vals[slot]
            if all(x in seen for x in strings) and not any(x in written for x in strings):
                self.discovered.add(slot)

    def shift(self, row: ShiftRow) -> None:
        """Re-anchor the target on the shift's destination (see the module docstring)."""
        info = self.info
        src = info.nodes.get(self.cur_id) if info else None
        dst = info.nodes.get(row.dst) if info else None
        if row.operator == "pivot":
            self.slots = set(seq(row.dst_slots))
            if src is not None and dst is not None:
                self.extracted = {s for s in self.extracted if s in dst and src.get(s) == dst[s]}
                self.discovered = {s for s in self.discovered if s in dst and src.get(s) == dst[s]}
            else:
                self.extracted = set()
                self.discovered = set()
        elif src is None or dst is None:
            self.readable = False
        else:
            removed = set(src) - set(dst)
            added = set(dst) - set(src)
            changed = {s for s in set(src) & set(dst) if src[s] != dst[s]}
            self.slots = (self.slots - removed) | added | changed
            self.extracted -= added | changed | removed
            self.discovered -= added | changed | removed
        self.cur_id = str(row.dst)
        self.ever_full = self.ever_full or self.full()
