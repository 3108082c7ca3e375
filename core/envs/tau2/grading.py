"""Replay-and-hash grading of τ² tasks, the communicate check and the golden report.

τ²-bench grades a trajectory by rebuilding two databases from the pristine state — the
*predicted* one by replaying the trajectory's write calls, the *gold* one by running the task's
golden actions (errors in golden actions are only logged) — and comparing their hashes. Both
replays here run on fresh copy-on-write overlays of the shared base.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.envs.tau2.tasks import Task
from core.envs.tau2.world import Tau2Session, Tau2World
from core.model.world import EnvAction


class ReplayResult(BaseModel):
    """Outcome of replaying a list of tool calls on a fresh state."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state_hash: str
    tool_errors: int
    outputs: list[str]


class TaskGrade(BaseModel):
    """τ²-style grade of one trajectory (components we can score offline)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    db_match: bool
    predicted_hash: str
    gold_hash: str
    communicate_ok: bool
    reward: float
    unscored: list[str]


def replay(
    world: Tau2World, actions: Iterable[EnvAction], task: Task | None = None
) -> tuple[Tau2Session, ReplayResult]:
    """Run ``actions`` in order on a fresh session and hash the result.

    Args:
        world: The world.
        actions: Tool calls (reads and generic calls are run too; they change nothing).
        task: When given, its initial state is applied first.

    Returns:
        The session and a summary with the final hash and the number of failed calls.
    """
    session = world.open_session(task)
    errors = 0
    outputs: list[str] = []
    for action in actions:
        obs = session.act(action)
        outputs.append(obs.text)
        errors += 0 if obs.ok else 1
    return session, ReplayResult(
        state_hash=session.state_hash(), tool_errors=errors, outputs=outputs
    )


def golden_actions(task: Task) -> list[EnvAction]:
    """Return a task's golden actions as environment actions."""
    return [EnvAction(tool=a.name, args=a.arguments) for a in task.actions]


def gold_hash(world: Tau2World, task: Task) -> str:
    """Return the hash of the database after the task's golden actions."""
    return replay(world, golden_actions(task), task)[1].state_hash


def communicate_ok(task: Task, assistant_messages: Iterable[str]) -> bool:
    """τ²'s COMMUNICATE check: each info string occurs in some agent message.

    The message is lower-cased and stripped of commas; the info string is only lower-cased.
    """
    msgs = [m.lower().replace(",", "") for m in assistant_messages]
    return all(any(info.lower() in m for m in msgs) for info in task.communicate_info)


def grade(
    world: Tau2World,
    task: Task,
    write_calls: Iterable[EnvAction],
    assistant_messages: Iterable[str] = (),
) -> TaskGrade:
    """Grade a trajectory: replay its write calls, compare with the golden replay.

    Args:
        world: The world.
        task: The task.
        write_calls: Every write call of the trajectory (failed ones included, as τ² replays
            all mutating calls; non-write calls are ignored).
        assistant_messages: The agent's messages, for the communicate check.

    Returns:
        The grade. ``reward`` multiplies the scorable components of the reward basis (DB,
        COMMUNICATE); NL/ENV assertions and ACTION checks are listed in ``unscored``.
    """
    writes = [a for a in write_calls if world.tool_kind(a.tool) == "write"]
    predicted = replay(world, writes, task)[1].state_hash
    gold = gold_hash(world, task)
    comm = communicate_ok(task, assistant_messages)
    reward = 1.0
    unscored: list[str] = []
    nl = (task.evaluation_criteria.nl_assertions if task.evaluation_criteria else None) or []
    for part in task.reward_basis:
        if part == "DB":
            reward *= 1.0 if predicted == gold else 0.0
        elif part == "COMMUNICATE":
            reward *= 1.0 if comm else 0.0
        elif part == "NL_ASSERTION" and not nl:
            continue
        else:
            unscored.append(part)
    return TaskGrade(
        task_id=task.id,
        db_match=predicted == gold,
        predicted_hash=predicted,
        gold_hash=gold,
        communicate_ok=comm,
        reward=reward,
        unscored=unscored,
    )


def golden_report(world: Tau2World, task_id: str | None = None) -> dict[str, Any]:
    """Replay every task's golden actions (or one task's) on fresh overlays.

    Returns:
        ``{"benchmark", "initial_state_hash", "tasks": [{"task_id", "final_state_hash",
        "tool_errors", "ms"}, ...]}``, tasks in file order.
    """
    tasks = [world.task(task_id)] if task_id is not None else world.tasks
    rows: list[dict[str, Any]] = []
    for task in tasks:
        t0 = time.perf_counter()
        _, res = replay(world, golden_actions(task), task)
        ms = (time.perf_counter() - t0) * 1000.0
        rows.append(
            {
                "task_id": task.id,
                "final_state_hash": res.state_hash,
                "tool_errors": res.tool_errors,
                "ms": round(ms, 3),
            }
        )
    return {
        "benchmark": world.benchmark,
        "initial_state_hash": world.state_hash(),
        "tasks": rows,
    }
