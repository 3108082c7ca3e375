"""Fixtures for protocol tests: the mock world, its graph and samples, scripted agents."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from protohelp import Action, ListAgent

from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_sample
from core.model.config import ProtocolConfig
from core.model.persona import Persona
from core.model.sample import FaultType


@pytest.fixture
def log() -> InMemoryEventLog:
    return InMemoryEventLog()


Runner = Callable[..., tuple[InMemoryEventLog, str, Any]]


@pytest.fixture
def play() -> Runner:
    """Run a list of actions on a mock sample; returns (log, episode_id, state)."""

    def _play(
        actions: Sequence[Action],
        *,
        persona_: Persona | str = "rational",
        fault: FaultType = FaultType.INSUFFICIENT_INFORMATION,
        seed: int = 0,
        config: ProtocolConfig | None = None,
        method: str | None = None,
        log_: InMemoryEventLog | None = None,
        **kw: Any,
    ) -> tuple[InMemoryEventLog, str, Any]:
        lg = log_ or InMemoryEventLog()
        eid = episode.start(
            lg,
            mock_sample(fault),
            persona_,
            seed,
            "LIST",
            config,
            graph=mock_graph(),
            method=method,
            **kw,
        )
        st = episode.run(lg, eid, ListAgent(actions))
        return lg, eid, st

    return _play


@pytest.fixture
def world() -> Any:
    return load_mock_world()
