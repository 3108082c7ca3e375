"""Episodes a person watches live, and branches continued from an earlier turn.

A watched episode is created in the caller's process (so a page can show it at once) and then
driven by a detached worker process that writes every event to the store as it happens, pacing
agent actions so a person can follow them. Pages only poll the store; they never run the loop.
A *branch* forks an episode at a turn (:func:`core.engine.episode.fork`) and continues it with
another method the same way, or leaves it for a person to take over as the agent.

Worker entry point: ``python -m core.studio.watch drive --store PATH --episode ID [--pace S]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from core.agents.factory import build_agent
from core.construction.worlds import episode_world_loader, resolve_sample_world, sample_world_loader
from core.engine import episode
from core.errors import ConfigError, ProtocolError
from core.model.config import ProtocolConfig
from core.model.intent import IntentGraph
from core.model.sample import Sample
from core.paths import PROJECT_ROOT
from core.runner.plan import literal_intent
from core.store import Store

HUMAN = "human"


def load_sample(store: Store, sample_id: str) -> tuple[Sample, IntentGraph]:
    """Return a stored sample and its intent graph."""
    sample = Sample.model_validate_json(store.sample_json(sample_id))
    graph = IntentGraph.model_validate_json(store.graph_json(sample.graph_id))
    return sample, graph


def start_watched(
    store: Store,
    sample_id: str,
    persona: str,
    method: str,
    seed: int,
    *,
    config: ProtocolConfig | None = None,
) -> str:
    """Create a symbolic-agent episode (template voice) and return its id (no action yet)."""
    sample, graph = load_sample(store, sample_id)
    world = resolve_sample_world(store, sample, graph).world  # refused when missing or changed
    return episode.start(
        store,
        sample,
        persona,
        seed,
        "symbolic",
        config,
        graph=graph,
        method=method,
        world_loader=sample_world_loader(world),
    )


def make_episode_agent(store: Store, episode_id: str) -> Any:
    """Build the (symbolic) policy of an episode from its header and stored events."""
    header = store.header(episode_id)
    if header.method == HUMAN:
        raise ProtocolError(f"episode {episode_id} is played by a person")
    sample, graph = load_sample(store, header.sample_id)
    loader = episode_world_loader(store, store, episode_id)
    world = loader(header.benchmark)
    agent = build_agent(
        header.method,
        world=world,
        literal=literal_intent(sample, graph),
        costs=header.config.costs(),
    )
    if hasattr(agent, "attach"):
        agent.attach(store, episode_id)
    if hasattr(agent, "bind_truth"):
        agent.bind_truth(episode.truth(store, episode_id, world_loader=loader))
    return agent


def drive(store: Store, episode_id: str, *, pace_s: float = 0.0, max_steps: int = 10_000) -> str:
    """Act for the episode's agent, one stored step at a time, until it ends.

    Args:
        store: The store (the episode's event log).
        episode_id: The episode to drive.
        pace_s: Pause after each action so a watcher can follow (0 = full speed).
        max_steps: Safety bound.

    Returns:
        The outcome value (``SUCCESS``, ``EXHAUSTED`` …).
    """
    agent = make_episode_agent(store, episode_id)
    loader = episode_world_loader(store, store, episode_id)
    view = episode.agent_view(store, episode_id, world_loader=loader)
    steps = 0
    while not view.ended and not view.awaiting_user and steps < max_steps:
        view = episode.step(store, episode_id, agent.act(view), world_loader=loader)
        steps += 1
        if pace_s > 0 and not view.ended:
            time.sleep(pace_s)
    if view.ended and hasattr(agent, "observe_end"):
        agent.observe_end(view)
    return str(view.outcome.value if view.outcome else "running")


def spawn_driver(store_path: Path, episode_id: str, *, pace_s: float = 0.5) -> int:
    """Start :func:`drive` in a detached worker process; return its pid."""
    cmd = [
        sys.executable,
        "-m",
        "core.studio.watch",
        "drive",
        "--store",
        str(store_path),
        "--episode",
        episode_id,
        "--pace",
        str(pace_s),
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=PROJECT_ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=os.environ.copy(),
    )
    return proc.pid


def branch(store: Store, episode_id: str, turn: int, method: str) -> str:
    """Fork ``episode_id`` before ``turn`` for ``method`` (``human`` = a person takes over).

    Returns:
        The new episode's id; drive it with :func:`spawn_driver` unless a person plays it.
    """
    agent = HUMAN if method == HUMAN else "symbolic"
    return episode.fork(store, episode_id, turn, agent, method=method)


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core.studio.watch")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("drive", help="drive an episode's agent to the end")
    d.add_argument("--store", type=Path, required=True)
    d.add_argument("--episode", required=True)
    d.add_argument("--pace", type=float, default=0.0)
    args = ap.parse_args(argv)
    try:
        outcome = drive(Store.open(args.store, create=False), args.episode, pace_s=args.pace)
    except (ConfigError, ProtocolError) as exc:
        print(f"core.studio.watch: {exc}", file=sys.stderr)
        return 2
    print(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
