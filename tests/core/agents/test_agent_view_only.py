"""Symbolic agents consume the agent view only, and the agent view carries no hidden data.

The view is built from an allow-list (the opening request, tools, the transcript of what was
said and observed, counters, the meter only when shown); a test walks every string reachable
from it after an episode full of rejection hints and proves that no hidden value, no slot id,
no intent id and no random key is in it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from core.agents.base import EpisodeBinding
from core.agents.factory import build_agent
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.registry import load_world
from core.model.actions import Ask, EnvOp, Propose
from core.model.config import ProtocolConfig
from core.model.episode import AgentView
from core.model.world import EnvAction
from core.protocol.personas import load_personas
from core.runner.plan import SampleSource, literal_intent

NEVER = ProtocolConfig(shift_fire_prob=0.0)

ALLOWED_FIELDS = {
    "episode_id",
    "benchmark",
    "query",
    "tools",
    "transcript",
    "turn",
    "turns_left",
    "patience",
    "costs",
    "forced_final",
    "format_hint",
    "awaiting_user",
    "ended",
    "outcome",
}


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(obj, (list, tuple)):
        return [s for x in obj for s in _strings(x)]
    return []


class Rejector:
    """Never asks: buys the first thing it sees (or proposes) so the user hints, again and again."""

    def __init__(self, benchmark: str) -> None:
        self.benchmark = benchmark
        self.views: list[AgentView] = []

    def act(self, view: AgentView) -> EnvOp | Ask | Propose:
        self.views.append(view)
        n = len(self.views)
        if self.benchmark == "webshop" and n % 4 == 1:
            return EnvOp(action=EnvAction(tool="search", args={"query": view.query[:60]}))
        if self.benchmark == "webshop" and n % 4 == 2:
            last = view.transcript[-1].text if view.transcript else ""
            found = re.findall(r"\[(B0\w+)\]", last)
            return EnvOp(
                action=EnvAction(tool="click", args={"target": found[0] if found else "x"})
            )
        if self.benchmark == "webshop" and n % 4 == 3:
            return EnvOp(action=EnvAction(tool="click", args={"target": "buy now"}))
        if self.benchmark == "mock" and n % 2 == 1:
            return EnvOp(action=EnvAction(tool="buy", args={"item_id": "s04"}))
        return Propose(text="done")


SRC = SampleSource(None)


def _pairs(benchmark: str, n: int) -> list[tuple[Any, Any]]:
    out = []
    for sid in SRC.sample_ids(benchmark)[:n]:
        sample = SRC.sample(benchmark, sid)
        out.append((sample, SRC.graph(benchmark, sample.graph_id)))
    return out


@pytest.mark.parametrize("benchmark", ["webshop", "tau2_retail", "tau2_airline", "mock"])
def test_no_hidden_value_or_slot_id_is_reachable_from_the_agent_view(benchmark: str) -> None:
    hinting = load_personas()["dependent"].model_copy(
        update={"hint_on_rejection": 1.0, "patience_multiplier": 3.0}
    )
    checked = 0
    for sample, graph in _pairs(benchmark, 6):
        log = InMemoryEventLog()
        eid = episode.start(log, sample, hinting, 0, "LIST", NEVER, graph=graph, method="B0")
        agent = Rejector(benchmark)
        episode.run(log, eid, agent)
        view = episode.agent_view(log, eid)
        assert set(AgentView.model_fields) == ALLOWED_FIELDS
        text = "\n".join(_strings(json.loads(view.model_dump_json())))
        low_all = text.lower()
        hinted = [e for e in log.events(eid) if e.kind == "user_reply" and e.hinted]
        checked += bool(hinted)
        start = log.events(eid)[0]
        # no slot id, no intent id, no random key
        for node in graph.nodes:
            assert node.intent_id not in text
            for c in node.conditions:  # structured ids (plain words such as "size" are words)
                if ":" in c.slot:
                    assert c.slot.lower() not in low_all, c.slot
        assert start.rng_key not in text
        # no hidden value the request did not state in what the user said (hints never
        # recite one); the environment's observations may show catalogue or database values
        low = "\n".join(e.text for e in view.transcript if e.role == "user").lower()
        stated = sample.query.lower()
        root = graph.node(sample.root_intent_id)
        for c in root.conditions:
            if c.slot not in sample.hidden_slots:
                continue
            v = json.loads(c.value) if benchmark.startswith("tau2") else c.value
            for s in _strings(v) if not isinstance(v, (int, float)) else []:
                if len(s) >= 4 and s.lower() not in stated:
                    assert s.lower() not in low, (c.slot, s)
    assert checked > 0  # the episodes did carry rejection hints


def test_symbolic_agents_never_read_the_event_log() -> None:
    """Ordinary agents get no feed; a symbolic agent plays whole episodes without one."""
    for benchmark in ("mock", "webshop", "tau2_retail"):
        world = load_world(benchmark)
        for sample, graph in _pairs(benchmark, 3):
            for method in ("A0", "A2", "B0"):
                log = InMemoryEventLog()
                eid = episode.start(
                    log, sample, "dependent", 0, "symbolic", graph=graph, method=method
                )
                agent = build_agent(method, world=world, literal=literal_intent(sample, graph))
                bindings: list[EpisodeBinding] = []
                orig = agent.bind

                def spy(ctx: EpisodeBinding, orig: Any = orig, seen: list[Any] = bindings) -> None:
                    seen.append(ctx)
                    orig(ctx)

                agent.bind = spy  # type: ignore[method-assign]
                st = episode.run(log, eid, agent)
                assert st.outcome is not None and st.outcome.value != "ERROR", st.error
                assert bindings and all(b.feed is None and b.truth is None for b in bindings)
