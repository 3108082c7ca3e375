"""The oracle on a sample, against the world the sample was built on (``driftbench verify``).

A sample passes when, on its own world,

1. every node of its intent graph executes to the ground truth stored with it (the graph
   describes this world, not another one);
2. for every node, the oracle's actions — the host's compiled recipe of that intent — run
   without a tool error on a fresh session and the world's ``judge`` accepts them (whichever
   node a silent shift moves the user to, the goal is reachable); and
3. an ORACLE episode through the real engine (template voice, persona ``rational`` and seed
   0 by default, silent shifts as scheduled) ends in SUCCESS.

The first failing check is the reason. Checks 1–2 are cached per (world, graph), so samples
sharing a graph cost one episode each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from core.agents import make_agent
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.base import HostWorld
from core.model.config import ProtocolConfig
from core.model.intent import Intent, IntentGraph
from core.model.persona import Persona
from core.model.sample import Sample
from core.protocol.personas import load_persona

ORACLE_PERSONA = "rational"
"""Persona of the verification episode."""

GRAPH_MEMO = "construction.verify.graphs"
"""The world's memo table of graph check results (graph id → reason or ``""``)."""
GRAPH_MEMO_SIZE = 4096
"""Graph results kept per world."""


@lru_cache(maxsize=16)
def _persona(persona_id: str) -> Persona:
    return load_persona(persona_id)


def check_node(world: HostWorld, node: Intent, config: ProtocolConfig | None = None) -> str | None:
    """Why ``node`` fails on ``world`` (stored ground truth, oracle actions), or None.

    The oracle's actions are accepted by the world's one acceptance, :meth:`HostWorld.judge`,
    under ``config`` (the default protocol config when None) — the engine's own judgement.
    """
    try:
        gt = world.execute(node)
    except Exception as exc:  # noqa: BLE001 - an unexecutable node is the finding
        return f"node {node.intent_id} does not execute: {exc}"
    if node.ground_truth is not None and gt.hash != node.ground_truth.hash:
        return f"node {node.intent_id} executes to a different ground truth than stored"
    try:
        plan = world.compile_intent(node)
    except Exception as exc:  # noqa: BLE001
        return f"node {node.intent_id}: the oracle cannot compile it: {exc}"
    if not plan:
        return f"node {node.intent_id}: the host compiles no actions for it"
    session = world.open_session()
    for action in plan:
        obs = session.act(action)
        if not obs.ok:
            return f"node {node.intent_id}: oracle action {action.tool} failed: {obs.text[:160]}"
    verdict = world.judge(node, session, config if config is not None else ProtocolConfig())
    if not verdict.accepted:
        return f"node {node.intent_id}: the oracle's actions are not accepted ({verdict.reason})"
    return None


def check_graph(world: HostWorld, graph: IntentGraph) -> str | None:
    """:func:`check_node` over every node of ``graph`` (cached in the world's memo)."""
    memo = world.memo(GRAPH_MEMO, size=GRAPH_MEMO_SIZE)
    got: str | None = memo.get(graph.graph_id)
    if got is not None:
        return got or None
    reason = None
    for node in graph.nodes:
        reason = check_node(world, node)
        if reason is not None:
            break
    memo.put(graph.graph_id, reason or "")
    return reason


def oracle_episode(
    world: HostWorld,
    sample: Sample,
    graph: IntentGraph,
    *,
    persona: str = ORACLE_PERSONA,
    seed: int = 0,
) -> tuple[str, str]:
    """Play one ORACLE episode in memory on ``world``; return (outcome, termination reason)."""
    log = InMemoryEventLog()

    def loader(_benchmark: str) -> HostWorld:
        return world

    eid = episode.start(
        log,
        sample,
        _persona(persona),
        seed,
        "ORACLE",
        graph=graph,
        method="ORACLE",
        user_voice="template",
        world_loader=loader,
    )
    state = episode.run(log, eid, make_agent("ORACLE"), world_loader=loader)
    outcome = state.outcome.value if state.outcome is not None else "running"
    reason = ""
    for ev in reversed(log.events(eid)):
        got = getattr(ev, "reason", None)
        if ev.kind == "episode_ended" and got is not None:
            reason = str(getattr(got, "value", got))
            break
    return outcome, reason


def verify_sample(
    world: HostWorld, sample: Sample, graph: IntentGraph, *, episode_check: bool = True
) -> str | None:
    """Why ``sample`` fails the oracle on ``world`` (see the module docstring), or None."""
    if sample.graph_id != graph.graph_id:
        return f"sample names graph {sample.graph_id}, not {graph.graph_id}"
    try:
        root = graph.node(sample.root_intent_id)
    except KeyError:
        return f"root intent {sample.root_intent_id} is not in graph {graph.graph_id}"
    if (
        sample.root_ground_truth is not None
        and root.ground_truth is not None
        and sample.root_ground_truth.hash != root.ground_truth.hash
    ):
        return "the sample's root ground truth differs from its graph's"
    reason = check_graph(world, graph)
    if reason is not None:
        return reason
    if episode_check:
        try:
            outcome, why = oracle_episode(world, sample, graph)
        except Exception as exc:  # noqa: BLE001 - a crash is a failure to report, not raise
            return f"the ORACLE episode failed to run: {type(exc).__name__}: {exc}"
        if outcome != "SUCCESS":
            return f"the ORACLE episode ended {outcome} ({why})"
    return None


@dataclass
class VerifyReport:
    """What :func:`core.cli.cmd_verify` prints (``checked``, ``passed``, ``failed``)."""

    checked: int = 0
    passed: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)

    def add(self, sample_id: str, benchmark: str, source: str, reason: str | None) -> None:
        """Count one sample (``reason`` None = passed)."""
        self.checked += 1
        if reason is None:
            self.passed += 1
        else:
            self.failed.append(
                {"sample_id": sample_id, "benchmark": benchmark, "source": source, "reason": reason}
            )

    def as_dict(self, extra: Sequence[tuple[str, Any]] = ()) -> dict[str, Any]:
        """The ``--json`` payload."""
        return {
            "checked": self.checked,
            "passed": self.passed,
            "failed": list(self.failed),
            **dict(extra),
        }
