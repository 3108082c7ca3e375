"""Conformance: every registered world states how its proposals are judged (the world protocol).

The engine's only acceptance call is ``HostWorld.judge(intent, session, config)``; proposal
actions and mutating calls come from ``is_proposal_action`` / ``is_mutating``. So no engine
module may name a benchmark.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

from core.envs.base import HostWorld
from core.envs.registry import BENCHMARKS, load_world
from core.errors import ConfigError
from core.model.config import ProtocolConfig
from core.model.intent import Intent
from core.model.world import Verdict
from core.paths import PROJECT_ROOT


@cache
def _world_and_seed(benchmark: str) -> tuple[HostWorld, Intent] | str:
    try:
        world = load_world(benchmark)
    except ConfigError as exc:
        return str(exc)
    for seed in world.seeds()[:10]:
        try:
            if world.compile_intent(seed):
                return world, seed
        except ConfigError:
            continue
    return f"no compilable seed in {benchmark}"


def _get(benchmark: str) -> tuple[HostWorld, Intent]:
    got = _world_and_seed(benchmark)
    if isinstance(got, str):
        pytest.skip(f"{benchmark} unavailable: {got}")
    return got


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_world_implements_the_judging_protocol(benchmark: str) -> None:
    world, seed = _get(benchmark)
    assert isinstance(world, HostWorld)
    cfg = ProtocolConfig()
    empty = world.judge(seed, world.open_session(), cfg)
    assert isinstance(empty, Verdict) and not empty.accepted and empty.reason
    session = world.open_session()
    plan = world.compile_intent(seed)
    for action in plan:
        assert session.act(action).ok, action
    v = world.judge(seed, session, cfg)
    assert isinstance(v, Verdict) and v.accepted, v
    # one acceptance: a world has no second judgement beside judge
    assert not hasattr(world, "adjudicate")


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_proposal_and_mutating_hooks(benchmark: str) -> None:
    world, seed = _get(benchmark)
    plan = world.compile_intent(seed)
    proposals = [a for a in plan if world.is_proposal_action(a)]
    assert all(isinstance(world.is_proposal_action(a), bool) for a in plan)
    assert len(proposals) <= 1 and (not proposals or proposals[0] == plan[-1])
    kinds = {t.name: t.kind for t in world.tools()}
    for action in plan:
        assert world.is_mutating(action) is (kinds.get(action.tool) == "write"), action


def test_config_decides_webshop_and_tau2_acceptance() -> None:
    shop, seed = _get("webshop")
    session = shop.open_session()
    for action in shop.compile_intent(seed):
        session.act(action)
    v = shop.judge(seed, session, ProtocolConfig())
    assert v.score is not None
    strict = shop.judge(seed, session, ProtocolConfig(webshop_accept_threshold=1.0))
    assert strict.accepted is (v.score >= 1.0)
    lenient = shop.judge(seed, shop.open_session(), ProtocolConfig(webshop_accept_threshold=0.01))
    assert not lenient.accepted  # nothing bought is never a purchase
    retail, rseed = _get("tau2_retail")
    s = retail.open_session()
    for action in retail.compile_intent(rseed):
        s.act(action)
    exact = retail.judge(rseed, s, ProtocolConfig(tau2_acceptance="exact_state"))
    assert exact == retail.judge(rseed, s, ProtocolConfig(tau2_acceptance="exact_state"))
    assert exact.reason.startswith("state_hash")


def test_no_engine_module_names_a_benchmark() -> None:
    names = "|".join(re.escape(b) for b in [*BENCHMARKS, "tau2"])
    pattern = re.compile(rf"[\"']({names})")
    for path in sorted((PROJECT_ROOT / "core" / "engine").rglob("*.py")):
        hits = pattern.findall(path.read_text(encoding="utf-8"))
        assert not hits, f"{path.relative_to(PROJECT_ROOT)} names benchmarks {hits}"
