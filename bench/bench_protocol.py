"""Protocol overhead per turn (excluding environment and LLM time).

One long mock-world episode (asks, searches, purchases, rejected proposals, malformed actions;
template voice; shifts on) is stepped turn by turn through ``core.engine.episode.step``. Time spent
inside the host world is measured by a timing proxy and subtracted, so the number is the
protocol's own cost: rules, events, the state fold, the event log and the agent view.

Baseline (same run, same episode): a stateless orchestrator that rebuilds the state by full
replay of the stored events before every turn (the log's ``live`` cache cleared), as a page
would without the incremental state.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_sample
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.config import ProtocolConfig
from core.model.sample import FaultType
from core.model.world import EnvAction

TARGET_MS = 0.2


class _Timed:
    """Proxy that accumulates time spent in the world and its sessions."""

    def __init__(self, world: Any) -> None:
        self._w = world
        self.benchmark = world.benchmark
        self.world_id = world.world_id
        self.spent = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._w, name)
        if not callable(attr):
            return attr

        def timed(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                out = attr(*a, **k)
            finally:
                self.spent += time.perf_counter() - t
            if name == "open_session":
                return _TimedSession(out, self)
            return out

        return timed


class _TimedSession:
    def __init__(self, s: Any, owner: _Timed) -> None:
        self._s, self._o = s, owner

    def act(self, action: EnvAction) -> Any:
        t = time.perf_counter()
        try:
            return self._s.act(action)
        finally:
            self._o.spent += time.perf_counter() - t

    def proposal(self) -> Any:
        t = time.perf_counter()
        try:
            return self._s.proposal()
        finally:
            self._o.spent += time.perf_counter() - t


def _actions(n: int) -> list[Any]:
    cycle = [
        Ask(text="What colour would you like?", asks=("color",)),
        EnvOp(action=EnvAction(tool="search", args={"query": "teal shirt"})),
        EnvOp(action=EnvAction(tool="buy", args={"item_id": "s07"})),
        Malformed(raw="??"),
        Ask(text="Which size do you need?"),
        Propose(text="done"),
        EnvOp(action=EnvAction(tool="view", args={"item_id": "s02"})),
    ]
    return [cycle[i % len(cycle)] for i in range(n)]


def _episode(turns: int, replay_each_turn: bool) -> tuple[float, int]:
    cfg = ProtocolConfig(
        base_patience=1000.0,
        shift_fire_prob=1.0,
        benchmarks={"mock": {"turn_cap": turns + 5, "category_mix": {"relax": 0.5, "refine": 0.5}}},
    )
    world = _Timed(load_mock_world())
    log = InMemoryEventLog()
    eid = episode.start(
        log,
        mock_sample(FaultType.INSUFFICIENT_INFORMATION),
        "dependent",
        1,
        "bench",
        cfg,
        graph=mock_graph(),
        world_loader=lambda b: world,  # type: ignore[arg-type,return-value]
    )
    world.spent = 0.0
    done = 0
    t0 = time.perf_counter()
    for a in _actions(turns):
        if replay_each_turn:
            log.live.clear()
        v = episode.step(log, eid, a, world_loader=lambda b: world)  # type: ignore[arg-type,return-value]
        done += 1
        if v.ended:
            break
    total = time.perf_counter() - t0
    return (total - world.spent) / done * 1000.0, done


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure protocol overhead per turn (median of repetitions) against a replay baseline."""
    reps = 3 if quick else 9
    turns = 40 if quick else 80
    _episode(10, False)  # warm caches (edges, voices, imports)
    ours = [_episode(turns, False) for _ in range(reps)]
    base = [_episode(turns, True) for _ in range(reps)]
    v = statistics.median(x for x, _ in ours)
    b = statistics.median(x for x, _ in base)
    n = ours[0][1]
    return [
        {
            "name": "protocol overhead per turn (mock episode, env excluded)",
            "value": round(v, 4),
            "unit": "ms/turn",
            "baseline": round(b, 4),
            "ratio": round(b / v, 2) if v > 0 else None,
            "target": f"< {TARGET_MS} ms/turn",
            "met": v < TARGET_MS,
            "notes": (
                f"{n} turns, template voice, shifts on, in-memory log; baseline = state rebuilt "
                f"by full event replay every turn; median of {reps}"
            ),
        }
    ]


if __name__ == "__main__":
    for row in run(quick=False):
        print(row)
