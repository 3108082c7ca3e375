"""Helpers for interpreter tests: bundled intents with a wanted slot family."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from core.construction.pipeline import load_bundled
from core.envs.registry import load_world
from core.model.intent import Condition, Intent
from core.protocol.interpret import QuestionAct, interpret


@lru_cache(maxsize=4)
def intents(benchmark: str) -> tuple[Intent, ...]:
    """Bundled graph nodes, then the world's own task seeds (every slot family a host task has,
    whether or not the bundled graphs kept a node with it)."""
    graphs, _ = load_bundled(benchmark)
    nodes = tuple(n for g in graphs for n in g.nodes)
    return nodes + tuple(load_world(benchmark).seeds())


def find(benchmark: str, want: Callable[[Intent], bool]) -> Intent:
    for it in intents(benchmark):
        if want(it):
            return it
    raise LookupError(f"no bundled {benchmark} intent fits")


def with_arg(benchmark: str, *args: str, tool: str | None = None) -> Intent:
    def ok(it: Intent) -> bool:
        names = {c.slot.split(":")[-1] for c in it.conditions}
        tools = {c.slot.split(":")[2] for c in it.conditions if c.slot.count(":") == 3}
        return set(args) <= names and (tool is None or tool in tools)

    return find(benchmark, ok)


def slot_of(it: Intent, arg: str) -> str:
    return next(c.slot for c in it.conditions if c.slot.split(":")[-1] == arg)


def read(benchmark: str, text: str, it: Intent) -> QuestionAct:
    return interpret(text, it, load_world(benchmark))


def cond(it: Intent, slot: str) -> Condition:
    return it.slot_map()[slot]
