"""Conformance: every registered benchmark × persona — the oracle wins, a no-op agent exhausts.

Worlds come from the registry; a world whose data is not available yet (e.g. an un-generated
bundled τ² folder) is skipped with the loader's reason.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from core.agents import make_agent
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import mock_graph, mock_sample
from core.envs.registry import available_benchmarks, load_world
from core.errors import ConfigError
from core.model.episode import Outcome
from core.model.events import dump_event
from core.model.sample import FaultType
from core.protocol.personas import load_personas
from tests.core.quick_samples import sample_from_seed

PERSONAS = sorted(load_personas())


@cache
def _bundle(benchmark: str):
    if benchmark == "mock":
        return mock_sample(FaultType.INSUFFICIENT_INFORMATION), mock_graph()
    try:
        world = load_world(benchmark)
    except ConfigError as exc:
        return str(exc)
    for seed in world.seeds()[:10]:
        try:
            return sample_from_seed(world, seed)
        except ValueError:
            continue
    return f"no executable seed in {benchmark}"


def _get(benchmark: str):
    got = _bundle(benchmark)
    if isinstance(got, str):
        pytest.skip(f"{benchmark} unavailable: {got}")
    return got


@pytest.mark.parametrize("benchmark", available_benchmarks())
@pytest.mark.parametrize("pid", PERSONAS)
def test_oracle_succeeds(benchmark, pid):
    sample, graph = _get(benchmark)
    for seed in range(2):
        log = InMemoryEventLog()
        eid = episode.start(log, sample, pid, seed, "ORACLE", graph=graph)
        st = episode.run(log, eid, make_agent("ORACLE"))
        assert st.outcome is Outcome.SUCCESS, (benchmark, pid, seed, st.reason, st.error)


@pytest.mark.parametrize("benchmark", available_benchmarks())
@pytest.mark.parametrize("pid", PERSONAS)
def test_noop_exhausts(benchmark, pid):
    sample, graph = _get(benchmark)
    log = InMemoryEventLog()
    eid = episode.start(log, sample, pid, 0, "NOOP", graph=graph)
    st = episode.run(log, eid, make_agent("NOOP"))
    assert st.outcome is Outcome.EXHAUSTED and st.patience < 4.0


@pytest.mark.parametrize("benchmark", available_benchmarks())
def test_determinism_per_world(benchmark):
    sample, graph = _get(benchmark)
    dumps = []
    for _ in range(2):
        log = InMemoryEventLog()
        eid = episode.start(log, sample, "spontaneous", 3, "ORACLE", graph=graph)
        episode.run(log, eid, make_agent("ORACLE"))
        dumps.append(json.dumps([dump_event(e) for e in log.events(eid)], sort_keys=True))
    assert dumps[0] == dumps[1]
