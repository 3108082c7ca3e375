"""Golden run: buy every goal's target with its goal options through the page state machine."""

from __future__ import annotations

import time
from typing import Any

from core.envs.webshop.models import Goal
from core.envs.webshop.reward import best_options
from core.envs.webshop.search import PAGE_SIZE
from core.envs.webshop.world import WebShopWorld
from core.model.world import EnvAction


def golden_actions(world: WebShopWorld, goal: Goal) -> list[EnvAction]:
    """Return the scripted purchase of ``goal``'s target.

    Searches with the instruction text (falls back to the target's title if the instruction
    does not reach it), pages forward to the target, opens it, clicks the option values that
    best match the goal options and buys.
    """
    product = world.catalogue.by_asin[goal.asin]
    query = goal.instruction_text
    hits = world.catalogue.search(query)
    if goal.asin not in hits:
        query = product.title
        hits = world.catalogue.search(query)
    actions = [EnvAction(tool="search", args={"query": query})]
    if goal.asin in hits:
        pages = hits.index(goal.asin) // PAGE_SIZE
        actions += [EnvAction(tool="click", args={"target": "next >"})] * pages
    actions.append(EnvAction(tool="click", args={"target": goal.asin.lower()}))
    for value in best_options(product, goal.goal_options).values():
        actions.append(EnvAction(tool="click", args={"target": value}))
    actions.append(EnvAction(tool="click", args={"target": "buy now"}))
    return actions


def golden_task(world: WebShopWorld, goal: Goal) -> dict[str, Any]:
    """Run one goal's golden purchase and return ``{task_id, reward, tool_errors, ms}``."""
    start = time.perf_counter()
    session = world.open_session(instruction=goal.instruction_text, goal=goal)
    errors = 0
    for action in golden_actions(world, goal):
        if not session.act(action).ok:
            errors += 1
    proposal = session.proposal()
    reward = 0.0
    if proposal is not None:
        reward = world.reward(goal, proposal["asin"], proposal["options"]).reward
    ms = (time.perf_counter() - start) * 1000.0
    return {"task_id": goal.goal_id, "reward": reward, "tool_errors": errors, "ms": round(ms, 3)}


def golden_report(world: WebShopWorld, goal_id: str | None = None) -> dict[str, Any]:
    """Replay every goal's golden purchase (or just ``goal_id``).

    Returns:
        ``{"benchmark": "webshop", "world_id", "goals": N, "tasks": [...], "all_one": bool,
        "total_ms"}``; each task is ``{"task_id", "reward", "tool_errors", "ms"}``.

    Raises:
        ConfigError: if ``goal_id`` is unknown.
    """
    goals = [world.goal(goal_id)] if goal_id is not None else world.goals
    start = time.perf_counter()
    tasks = [golden_task(world, g) for g in goals]
    return {
        "benchmark": "webshop",
        "world_id": world.world_id,
        "goals": len(tasks),
        "tasks": tasks,
        "all_one": all(abs(t["reward"] - 1.0) < 1e-9 and t["tool_errors"] == 0 for t in tasks),
        "total_ms": round((time.perf_counter() - start) * 1000.0, 3),
    }
