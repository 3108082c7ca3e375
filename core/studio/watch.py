"""Episodes a person watches live, and branches continued from an earlier turn.

A watched episode is created in the caller's process (so a page can show it at once) and then
driven by a detached worker process that writes every event to the store as it happens, pacing
agent actions so a person can follow them. Pages only poll the store; they never run the loop.
A *branch* forks an episode at a turn (:func:`core.engine.episode.fork`) into a run of its own
and continues it with another method the same way, or leaves it for a person to take over as
the agent.

The worker plays the episode through the one episode driver (:func:`core.engine.episode.run`,
paced), so an agent that raises ends the episode with its error recorded (outcome ERROR, reason
``agent_error``), and so does an agent that cannot even be built, or a worker that is stopped
(``cancelled``). The worker's output goes to ``<store dir>/jobs/watch-<episode>.log``.

Worker entry point: ``python -m core.studio.watch drive --store PATH --episode ID [--pace S]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import traceback
from pathlib import Path
from types import FrameType

from core.agents.base import Agent
from core.agents.factory import build_agent
from core.agents.llm_agent import LLMAgent
from core.construction.worlds import episode_world_loader, resolve_sample_world, sample_world_loader
from core.engine import episode
from core.errors import ConfigError, ProtocolError
from core.model.config import ProtocolConfig
from core.model.episode import TerminationReason
from core.model.intent import IntentGraph
from core.model.run import is_symbolic_agent
from core.model.sample import Sample
from core.paths import PROJECT_ROOT
from core.runner.plan import literal_intent
from core.store import Store, utcnow
from core.studio.jobs import jobs_dir

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
    agent: str = "symbolic",
) -> str:
    """Create an episode (template voice) and return its id (no action yet).

    ``agent`` is ``symbolic`` or a model spec (e.g. the models file's agent); the worker
    builds the LLM policy from the episode's header.
    """
    sample, graph = load_sample(store, sample_id)
    world = resolve_sample_world(store, sample, graph).world  # refused when missing or changed
    return episode.start(
        store,
        sample,
        persona,
        seed,
        agent,
        config,
        graph=graph,
        method=method,
        world_loader=sample_world_loader(world),
    )


def make_episode_agent(store: Store, episode_id: str) -> Agent:
    """Build the policy of an episode (symbolic, or LLM for a model spec) from its header.

    The driver binds it to the episode (events, and the truth probe for privileged methods).

    Raises:
        ProtocolError: The episode is played by a person.
    """
    header = store.header(episode_id)
    if header.method == HUMAN:
        raise ProtocolError(f"episode {episode_id} is played by a person")
    sample, graph = load_sample(store, header.sample_id)
    loader = episode_world_loader(store, store, episode_id)
    world = loader(header.benchmark)
    client = None
    if not is_symbolic_agent(header.agent):
        from core.studio.providers import play_client

        client = play_client(header.agent, store.path)
    agent = build_agent(
        header.method,
        world=world,
        literal=literal_intent(sample, graph),
        costs=header.config.costs(),
        client=client,
    )
    if isinstance(agent, LLMAgent):
        from core.studio.providers import STUDIO_ACTION_FORMAT

        agent.action_format = STUDIO_ACTION_FORMAT
    return agent


def _outcome(state: episode.EpisodeState) -> str:
    return str(state.outcome.value if state.outcome else "running")


def drive(store: Store, episode_id: str, *, pace_s: float = 0.0, max_steps: int = 10_000) -> str:
    """Act for the episode's agent, one stored step at a time, until it ends.

    Args:
        store: The store (the episode's event log).
        episode_id: The episode to drive.
        pace_s: Pause after each action so a watcher can follow (0 = full speed).
        max_steps: Safety bound.

    Returns:
        The outcome value (``SUCCESS``, ``EXHAUSTED``, ``ERROR`` …).

    Raises:
        ProtocolError: The episode is played by a person (it is left untouched).
    """
    if store.header(episode_id).method == HUMAN:
        raise ProtocolError(f"episode {episode_id} is played by a person")
    try:
        agent = make_episode_agent(store, episode_id)
        loader = episode_world_loader(store, store, episode_id)
    except Exception as exc:  # noqa: BLE001 - an agent that cannot be built ends the episode
        return _outcome(episode.abort_for(store, episode_id, exc))
    state = episode.run(
        store, episode_id, agent, pace_s=pace_s, max_steps=max_steps, world_loader=loader
    )
    return _outcome(state)


def driver_log(store_path: Path, episode_id: str) -> Path:
    """Where the watcher worker of ``episode_id`` writes its output (next to the jobs)."""
    return jobs_dir(store_path) / f"watch-{episode_id}.log"


def spawn_driver(store_path: Path, episode_id: str, *, pace_s: float = 0.5) -> int:
    """Start :func:`drive` in a detached worker process; return its pid.

    The worker's stdout and stderr are appended to :func:`driver_log`.
    """
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
    log_path = driver_log(store_path, episode_id)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as out:
        out.write(f"--- {utcnow()} drive {episode_id} (pace {pace_s}s)\n".encode())
        out.flush()
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            cmd,
            cwd=PROJECT_ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=os.environ.copy(),
        )
    return proc.pid


def branch(store: Store, episode_id: str, turn: int, method: str) -> str:
    """Fork ``episode_id`` before ``turn`` for ``method`` (``human`` = a person takes over).

    The branch is a run of its own (:mod:`core.studio.branches`), linked to its parent episode
    and never counted in the parent run's results.

    Returns:
        The new episode's id; drive it with :func:`spawn_driver` unless a person plays it.
    """
    from core.studio.branches import create_branch

    return create_branch(store, episode_id, turn, method)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # the driver records the episode as cancelled


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m core.studio.watch")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("drive", help="drive an episode's agent to the end")
    d.add_argument("--store", type=Path, required=True)
    d.add_argument("--episode", required=True)
    d.add_argument("--pace", type=float, default=0.0)
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    store: Store | None = None
    try:
        store = Store.open(args.store, create=False)
        outcome = drive(store, args.episode, pace_s=args.pace)
    except (ConfigError, ProtocolError) as exc:
        print(f"core.studio.watch: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the store or engine failed: say so, end the episode
        traceback.print_exc()
        if store is not None:
            try:
                episode.abort(
                    store, args.episode, TerminationReason.INTERNAL_ERROR, f"worker failed: {exc}"
                )
            except Exception:  # noqa: BLE001 - nothing more can be recorded
                traceback.print_exc()
        return 1
    print(outcome)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
