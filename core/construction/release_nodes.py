"""Turning a released τ² intent node into an executable intent of this engine.

A release node carries two descriptions of one goal: its ``conditions`` (what the user holds:
``arg:<i>:<tool>:<arg>`` slots and whole extra requests ``also:<n>:<tool>`` whose value is the
request's JSON arguments) and its ``recipe.actions`` — the exact tool calls that realise it,
including *derived* arguments no condition names (``nonfree_baggages``, payment amounts). The
engine executes an intent by compiling its conditions, so an imported node takes its
conditions from the recipe: one ``arg:<i>:<tool>:<arg>`` condition per argument of every call.
Nothing then depends on the release's recipe compiler, and no slot id a user could voice is of
the ``also:`` kind.

Request indices follow the root: a child's call that is the same request as a root call (same
tool, same or mostly the same arguments) keeps the root's index, so a relaxation's conditions
are a subset of the root's and a substitution changes values under the same slots; extra
requests (refinements) get the next free indices. Pivots are other tasks and keep their own
order. :class:`SlotMap` translates the release's slot names of the root (masks, literal
readings, extras) into the converted slots.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.model.intent import Condition

Call = tuple[str, dict[str, Any]]
"""One recipe call: (tool name, arguments)."""


def canon(value: Any) -> str:
    """Canonical JSON text of an argument value (sorted keys, compact, exact numbers)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode(value: Any) -> Any:
    """A release condition value decoded from its JSON text (the text itself if not JSON)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def recipe_calls(raw: Any, file: Path, path: str) -> list[Call] | None:
    """The calls of a node's ``recipe.actions`` (None when the node has no τ² recipe)."""
    recipe = raw.get("recipe") if isinstance(raw, dict) else None
    actions = recipe.get("actions") if isinstance(recipe, dict) else None
    if not isinstance(actions, list):
        return None
    out: list[Call] = []
    for i, a in enumerate(actions):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            raise ConfigError(
                "must be {name, arguments}", file=file, field=f"{path}.recipe.actions[{i}]"
            )
        args = a.get("arguments", {})
        if not isinstance(args, dict):
            raise ConfigError(
                "must be an object", file=file, field=f"{path}.recipe.actions[{i}].arguments"
            )
        out.append((a["name"], dict(args)))
    return out


def align(root: list[Call], child: list[Call]) -> list[int]:
    """Request index of each child call: the root call it continues, else a new index.

    Exact matches first, then the same tool with the most equal arguments, then any unused
    root call of the same tool; the rest are extra requests numbered after the root's.
    """
    index: list[int | None] = [None] * len(child)
    used: set[int] = set()
    for j, (tool, args) in enumerate(child):
        for i, (rtool, rargs) in enumerate(root):
            if i not in used and rtool == tool and canon(rargs) == canon(args):
                index[j] = i
                used.add(i)
                break
    for j, (tool, args) in enumerate(child):
        if index[j] is not None:
            continue
        best, score = None, 0
        for i, (rtool, rargs) in enumerate(root):
            if i in used or rtool != tool:
                continue
            same = sum(1 for k, v in args.items() if k in rargs and canon(rargs[k]) == canon(v))
            if same > score:
                best, score = i, same
        if best is not None:
            index[j] = best
            used.add(best)
    for j, (tool, _args) in enumerate(child):  # a call whose every argument changed
        if index[j] is None:
            free = next((i for i, (rt, _) in enumerate(root) if i not in used and rt == tool), None)
            if free is not None:
                index[j] = free
                used.add(free)
    nxt = len(root)
    out: list[int] = []
    for j in range(len(child)):
        got = index[j]
        if got is None:
            got, nxt = nxt, nxt + 1
        out.append(got)
    return out


def conditions_of(calls: list[Call], indices: list[int]) -> list[Condition]:
    """One ``arg:<i>:<tool>:<arg>`` condition per argument of every call."""
    return [
        Condition(slot=f"arg:{i}:{tool}:{k}", op="=", value=canon(v))
        for (tool, args), i in zip(calls, indices, strict=True)
        for k, v in sorted(args.items())
    ]


@dataclass
class SlotMap:
    """Release slot names of one (root) node → the converted node's slots.

    Attributes:
        slots: ``arg:`` release slot → converted slot (same argument of the same call).
        requests: ``also:`` release slot → the converted slots of that whole request.
        derived: Converted slots no release condition names (derived arguments).
        next_index: The first request index after the node's own.
        release_values: Release slot → the release's condition value (its view).
        values: Converted slot → the executable value from the recipe.
        unmapped: Release conditions that name nothing in the recipe (kept out of the
            intent: the recipe is what executes; reported by the importer).
    """

    slots: dict[str, str] = field(default_factory=dict)
    requests: dict[str, list[str]] = field(default_factory=dict)
    derived: list[str] = field(default_factory=list)
    next_index: int = 0
    release_values: dict[str, str] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)

    def slot(self, release_slot: str) -> str:
        """The converted slot of a release ``arg:`` slot (unchanged when unknown)."""
        return self.slots.get(release_slot, release_slot)

    def translate(self, conds: list[Condition]) -> list[Condition]:
        """Translate release conditions (e.g. a literal reading) into converted ones.

        ``arg:`` slots are renamed; an ``also:`` request becomes one condition per argument
        under the next free request index.
        """
        out: list[Condition] = []
        nxt = self.next_index
        for c in conds:
            if c.slot.startswith("also:"):
                if c.slot in self.requests and canon(decode(c.value)) == canon(
                    decode(self.release_values.get(c.slot))
                ):
                    out += [
                        Condition(slot=s, op="=", value=self.values[s])
                        for s in self.requests[c.slot]
                    ]
                    continue
                tool = c.slot.split(":")[2] if c.slot.count(":") >= 2 else "request"
                args = decode(c.value)
                if isinstance(args, dict):
                    out += conditions_of([(tool, args)], [nxt])
                    nxt += 1
                    continue
            slot = self.slot(c.slot)
            value = c.value
            same = c.slot in self.release_values and canon(decode(c.value)) == canon(
                decode(self.release_values[c.slot])
            )
            if same and slot in self.values:
                value = self.values[slot]  # the executable value behind the release's view
            out.append(c.model_copy(update={"slot": slot, "value": value}))
        return out


def map_root(release_conds: list[Condition], calls: list[Call]) -> SlotMap:
    """How the release's root conditions name the converted root's slots (indices = positions).

    A release condition that names nothing in the recipe is listed in ``unmapped``.
    """
    out = SlotMap(next_index=len(calls))
    named: set[str] = set()
    for c in release_conds:
        value = decode(c.value)
        if c.slot.startswith("also:"):
            parts = c.slot.split(":")
            tool = parts[2] if len(parts) >= 3 else ""
            hit = next(
                (
                    j
                    for j, (t, a) in enumerate(calls)
                    if t == tool and isinstance(value, dict) and canon(a) == canon(value)
                ),
                None,
            )
            if hit is None:
                out.unmapped.append(c.slot)
                continue
            slots = [f"arg:{hit}:{tool}:{k}" for k in sorted(calls[hit][1])]
            out.requests[c.slot] = slots
            named |= set(slots)
            continue
        parts = c.slot.split(":")
        if len(parts) != 4 or parts[0] != "arg" or not parts[1].isdigit():
            out.unmapped.append(c.slot)
            continue
        i, tool, arg = int(parts[1]), parts[2], parts[3]
        fits = [j for j in range(len(calls)) if calls[j][0] == tool and arg in calls[j][1]]
        equal = [j for j in fits if canon(calls[j][1][arg]) == canon(value)]
        # the same call position first; a condition may show a view of the argument (payment
        # ids of a payment list with amounts), so position and name outrank the value
        hit = next(
            (j for j in (i, *equal) if j in fits),
            fits[0] if len(fits) == 1 else None,
        )
        if hit is None:
            out.unmapped.append(c.slot)
            continue
        out.slots[c.slot] = f"arg:{hit}:{tool}:{arg}"
        named.add(out.slots[c.slot])
    every = conditions_of(calls, list(range(len(calls))))
    out.values = {c.slot: str(c.value) for c in every}
    out.release_values = {c.slot: str(c.value) for c in release_conds}
    out.derived = [c.slot for c in every if c.slot not in named]
    return out
