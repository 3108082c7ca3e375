"""Loading the project's interpreter question set (``bench/data/interpreter_questions.yaml``).

Each group names a bundled intent (a graph node, else one of the host's task seeds) by what it
must contain — a group nothing bundled fits is skipped and reported, never assumed; its
questions carry the expected act, slot keys (resolved to the intent's slot ids) and, for
confirmations, the expected verdict. Placeholders are filled from the intent (values the user
really holds, or altered ones).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.envs.base import HostWorld
from core.envs.registry import load_world
from core.model.bounds import load_yaml
from core.model.intent import Intent

DATA = Path(__file__).parent / "data" / "interpreter_questions.yaml"


@dataclass(frozen=True)
class Item:
    """One labelled question over one intent."""

    benchmark: str
    intent: Intent
    question: str
    act: str
    slots: frozenset[str]
    confirm: bool | None


@lru_cache(maxsize=4)
def _nodes(benchmark: str) -> tuple[Intent, ...]:
    """Candidate intents: the bundled graphs' nodes first, then the world's own task seeds (a
    tool the bundled graphs kept no node for may still be one of the host's tasks)."""
    if benchmark == "mock":
        from core.envs.mock import mock_graph

        g = mock_graph()
        return (g.root, *g.children)
    from core.construction.pipeline import load_bundled

    graphs, _ = load_bundled(benchmark)
    return tuple(n for g in graphs for n in g.nodes) + tuple(load_world(benchmark).seeds())


def _arg(slot: str) -> str:
    return slot.split(":")[-1] if slot.startswith("arg:") else slot


def _fits(world: HostWorld, it: Intent, spec: dict[str, Any]) -> bool:
    if spec.get("root"):
        return True
    names = {_arg(c.slot) for c in it.conditions}
    tools = {c.slot.split(":")[2] for c in it.conditions if c.slot.count(":") == 3}
    if not set(spec.get("args", [])) <= names:
        return False
    if spec.get("tool") and tools != {spec["tool"]}:
        return False
    if spec.get("price") and "price_upper" not in names:
        return False
    if sum(c.slot.startswith("attr:") for c in it.conditions) < int(spec.get("attrs", 0)):
        return False
    if spec.get("options"):
        opt = getattr(world, "option_name", None)
        have = {opt(c) for c in it.conditions if c.slot.startswith("option:")} if opt else set()
        return set(spec["options"]) <= have
    return True


def _resolve(world: HostWorld, it: Intent, key: str) -> set[str]:
    conds = it.conditions
    if key == "attr:*":
        return {c.slot for c in conds if c.slot.startswith("attr:")}
    if key == "attr:0":
        attrs = [c.slot for c in conds if c.slot.startswith("attr:")]
        return set(attrs[:1])
    if key.startswith("option:"):
        opt = world.option_name
        return {c.slot for c in conds if c.slot.startswith("option:") and opt(c) == key[7:]}
    if key.startswith("arg:"):
        return {c.slot for c in conds if c.slot.startswith("arg:") and _arg(c.slot) == key[4:]}
    return {key} if any(c.slot == key for c in conds) else set()


def _fill(world: HostWorld, it: Intent) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in it.conditions:
        lex = world.slot_lexicon(c) if hasattr(world, "slot_lexicon") else None
        if c.slot == "price_upper" or c.slot.endswith("price_upper"):
            cap = float(c.value)
            out.update(cap=f"{cap:.0f}", cap_minus=f"{cap - 5:.0f}", cap_plus=f"{cap + 25:.0f}")
        elif lex is not None and lex.family == "color" and "color" not in out:
            out["color"] = str(c.value)
            words = set(str(c.value).split())
            other = next(
                (a for a in lex.alternatives if not words & set(a.split()) and " " not in a),
                None,
            )
            if other is not None:
                out["other_color"] = other
        elif c.slot.startswith("attr:") and "attr0" not in out:
            out["attr0"] = str(c.value)
        elif _arg(c.slot) == "reason":
            v = json.loads(str(c.value))
            right = {"no longer needed": "you no longer need it"}.get(
                v, "you ordered it by mistake"
            )
            wrong = {"no longer needed": "you ordered it by mistake"}.get(
                v, "you no longer need it"
            )
            out.update(reason=right, other_reason=wrong)
        elif _arg(c.slot) == "total_baggages":
            n = int(float(c.value))
            out.update(bags=str(n), bags_plus=str(n + 1))
        elif _arg(c.slot) == "payment_method_id" and lex is not None and lex.values:
            out["refund"] = lex.values[0]
            out["other_refund"] = lex.alternatives[0] if lex.alternatives else "store credit"
    if "color" not in out and any(c.slot == "color" for c in it.conditions):
        out.update(color=str(it.slot_map()["color"].value), other_color="ochre")
    return out


@dataclass(frozen=True)
class QuestionSet:
    """The resolved set, and what the bundled data could not carry (reported, never fatal)."""

    items: tuple[Item, ...]
    groups: int
    skipped_groups: tuple[str, ...]
    """Groups no bundled node fits (e.g. a tool no bundled intent writes), by description."""
    skipped_questions: int
    """Questions whose placeholders the chosen intent cannot fill."""


def _describe(bench: str, spec: dict[str, Any]) -> str:
    what = spec.get("tool") or ",".join(spec.get("options", []) or spec.get("args", [])) or "root"
    return f"{bench}:{what}"


@lru_cache(maxsize=1)
def resolve() -> QuestionSet:
    """Resolve every group against the bundled intents that exist.

    A group takes the first candidate intent (:func:`_nodes`) that fits its ``intent`` spec; a
    group with no such intent (no bundled node and no host task has that tool or those
    arguments) is skipped and named, and a question whose placeholders the intent cannot fill
    is skipped and counted, so the set follows whatever data is bundled instead of assuming a
    tool is there.
    """
    groups = load_yaml(DATA, max_bytes=4 * 1024**2)
    items: list[Item] = []
    skipped: list[str] = []
    unfilled = 0
    for g in groups:
        bench = g["bench"]
        world = load_world(bench)
        it = next((n for n in _nodes(bench) if _fits(world, n, g["intent"])), None)
        if it is None:
            skipped.append(_describe(bench, g["intent"]))
            continue
        fill = _fill(world, it)
        for row in g["questions"]:
            text, act, keys = row[0], row[1], row[2]
            confirm = row[3] if len(row) > 3 else None
            try:
                question = text.format(**fill)
            except KeyError:
                unfilled += 1
                continue
            slots: set[str] = set()
            for k in keys:
                slots |= _resolve(world, it, k)
            items.append(
                Item(
                    benchmark=bench,
                    intent=it,
                    question=question,
                    act=act,
                    slots=frozenset(slots),
                    confirm=confirm,
                )
            )
    return QuestionSet(tuple(items), len(groups), tuple(skipped), unfilled)


def load() -> tuple[Item, ...]:
    """Return every labelled question that the bundled intents carry (see :func:`resolve`)."""
    return resolve().items
