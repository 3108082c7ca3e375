"""The one episode driver: life-cycle order, one failure path, cancelling, the live cache."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "protocol"))
from protohelp import ListAgent, ask, buy, search  # noqa: E402

from core.agents.base import AgentBase, EpisodeBinding, TruthProbe, as_agent  # noqa: E402
from core.agents.factory import build_agent  # noqa: E402
from core.engine import episode  # noqa: E402
from core.engine.driver import Drive, reason_for  # noqa: E402
from core.engine.eventlog import InMemoryEventLog  # noqa: E402
from core.envs.mock import load_mock_world, mock_graph, mock_sample  # noqa: E402
from core.errors import LLMError, ProtocolError  # noqa: E402
from core.llm import ScriptedLLM  # noqa: E402
from core.model.actions import AgentAction, Propose  # noqa: E402
from core.model.config import ProtocolConfig  # noqa: E402
from core.model.episode import AgentView, Outcome, TerminationReason  # noqa: E402
from core.model.events import EpisodeEnded  # noqa: E402
from core.model.sample import FaultType  # noqa: E402
from core.runner.plan import literal_intent  # noqa: E402

NEVER = ProtocolConfig(shift_fire_prob=0.0)
SAMPLE = mock_sample(FaultType.INSUFFICIENT_INFORMATION)


def _start(log: Any, **kw: Any) -> str:
    return episode.start(
        log, SAMPLE, "rational", 0, "TEST", kw.pop("config", NEVER), graph=mock_graph(), **kw
    )


def _ended(log: Any, eid: str) -> EpisodeEnded:
    last = log.events(eid)[-1]
    assert isinstance(last, EpisodeEnded), last
    return last


class Recorder(AgentBase):
    """Records every life-cycle call; plays a fixed list of actions."""

    spec = "REC"

    def __init__(self, actions: list[AgentAction], privileged: bool = False) -> None:
        self.actions = list(actions)
        self.privileged = privileged
        self.calls: list[str] = []
        self.binding: EpisodeBinding | None = None

    def bind(self, ctx: EpisodeBinding) -> None:
        self.calls.append("bind")
        self.binding = ctx

    def act(self, view: AgentView) -> AgentAction:
        self.calls.append("act")
        return self.actions.pop(0) if self.actions else Propose(text="done")

    async def aact(self, view: AgentView) -> AgentAction:
        self.calls.append("aact")
        return self.act(view)

    def pop_repairs(self) -> list[Any]:
        self.calls.append("pop_repairs")
        return []

    def observe_end(self, view: AgentView) -> None:
        assert view.ended
        self.calls.append("observe_end")


class Raiser(AgentBase):
    spec = "RAISE"

    def __init__(self, exc: BaseException, after: int = 0) -> None:
        self.exc, self.after = exc, after

    def act(self, view: AgentView) -> AgentAction:
        if self.after <= 0:
            raise self.exc
        self.after -= 1
        return search()


# ------------------------------------------------------------------------- the life cycle


def test_life_cycle_order_sync_and_async() -> None:
    for use_async in (False, True):
        log = InMemoryEventLog()
        eid = _start(log)
        agent = Recorder([search("teal shirt"), buy("s01")])
        if use_async:
            st = asyncio.run(episode.arun(log, eid, agent))
        else:
            st = episode.run(log, eid, agent)
        assert st.outcome is Outcome.SUCCESS
        turn = ["aact", "act", "pop_repairs"] if use_async else ["act", "pop_repairs"]
        assert agent.calls == ["bind", *turn * 3, "observe_end"]


def test_only_privileged_agents_get_the_truth_probe_and_the_event_feed() -> None:
    for privileged in (False, True):
        log = InMemoryEventLog()
        eid = _start(log)
        agent = Recorder([], privileged=privileged)
        episode.run(log, eid, agent)
        assert agent.binding is not None and agent.binding.episode_id == eid
        if privileged:
            assert agent.binding.feed is log
            assert agent.binding.events()[0].kind == "episode_started"
        else:  # ordinary agents learn from the agent view alone
            assert agent.binding.feed is None
            with pytest.raises(PermissionError):
                agent.binding.events()
        assert (agent.binding.truth is not None) is privileged
        if privileged:
            assert isinstance(agent.binding.truth, TruthProbe)
            assert agent.binding.truth.current_intent().intent_id == SAMPLE.root_intent_id


def test_every_ladder_agent_implements_the_protocol() -> None:
    from core.agents.base import Agent
    from core.model.run import METHODS

    world = load_mock_world()
    literal = literal_intent(SAMPLE, mock_graph())
    llm = ScriptedLLM(["Action: Answer\nFinal Answer: done"], cycle=True)
    for method in METHODS:
        for client in (None, llm):
            agent = build_agent(method, world=world, literal=literal, client=client)
            assert isinstance(agent, Agent), (method, client)
            assert agent.privileged is (method in ("RS", "ORACLE")), method
            assert as_agent(agent) is agent


def test_a_bare_policy_is_lifted_into_the_life_cycle() -> None:
    policy = ListAgent([])
    agent = as_agent(policy)
    assert agent is not policy and agent.pop_repairs() == [] and agent.privileged is False
    log = InMemoryEventLog()
    eid = _start(log)
    assert episode.run(log, eid, policy).ended and policy.views


# ------------------------------------------------------------------------- one failure path


@pytest.mark.parametrize("use_async", [False, True])
def test_agent_exception_ends_the_episode_as_agent_error(use_async: bool) -> None:
    log = InMemoryEventLog()
    eid = _start(log)
    agent = Raiser(ValueError("policy bug"), after=2)
    drive = Drive(log, eid, agent)
    st = asyncio.run(drive.arun()) if use_async else drive.run()
    end = _ended(log, eid)
    assert st.outcome is Outcome.ERROR and end.reason is TerminationReason.AGENT_ERROR
    assert end.error == "ValueError: policy bug" and end.turns == 2
    assert log.outcome(eid) is Outcome.ERROR and log.summary(eid)["error"] == end.error
    assert isinstance(drive.failure, ValueError)


def test_failing_bind_or_repairs_end_the_episode_as_agent_error() -> None:
    class BadBind(Recorder):
        def bind(self, ctx: EpisodeBinding) -> None:
            raise RuntimeError("cannot bind")

    class BadRepairs(Recorder):
        def pop_repairs(self) -> list[Any]:
            raise RuntimeError("cannot report")

    for cls in (BadBind, BadRepairs):
        log = InMemoryEventLog()
        eid = _start(log)
        st = episode.run(log, eid, cls([]))
        assert st.reason is TerminationReason.AGENT_ERROR, cls
        assert "RuntimeError" in (_ended(log, eid).error or "")


def test_llm_failure_ends_the_episode_with_its_own_reason() -> None:
    world = load_mock_world()
    literal = literal_intent(SAMPLE, mock_graph())
    for use_async in (False, True):
        client = ScriptedLLM([LLMError("provider down", model="m", retryable=False)])
        agent = build_agent("B0", world=world, literal=literal, client=client)
        log = InMemoryEventLog()
        eid = _start(log)
        drive = Drive(log, eid, agent)
        st = asyncio.run(drive.arun()) if use_async else drive.run()
        end = _ended(log, eid)
        assert st.outcome is Outcome.ERROR and end.reason is TerminationReason.LLM_ERROR
        assert "provider down" in (end.error or "") and end.error.startswith("LLMError")
        assert isinstance(drive.failure, LLMError)


def test_reason_for_maps_failures() -> None:
    assert reason_for(ValueError()) is TerminationReason.AGENT_ERROR
    assert reason_for(LLMError("x")) is TerminationReason.LLM_ERROR
    assert reason_for(asyncio.CancelledError()) is TerminationReason.CANCELLED
    assert reason_for(KeyboardInterrupt()) is TerminationReason.CANCELLED


def test_cancelled_async_drive_is_recorded_as_cancelled_and_propagates() -> None:
    log = InMemoryEventLog()
    eid = _start(log)
    started = asyncio.Event()

    class Hangs(AgentBase):
        turns = 0

        def act(self, view: AgentView) -> AgentAction:
            return search()

        async def aact(self, view: AgentView) -> AgentAction:
            self.turns += 1
            if self.turns == 3:
                started.set()
                await asyncio.sleep(3600)
            return search()

    async def main() -> None:
        task = asyncio.create_task(episode.arun(log, eid, Hangs()))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    end = _ended(log, eid)
    assert end.outcome is Outcome.ERROR and end.reason is TerminationReason.CANCELLED
    assert end.turns == 2 and log.outcome(eid) is Outcome.ERROR  # a resume plays it again
    assert [e.seq for e in log.events(eid)] == list(range(len(log.events(eid))))


def test_interrupted_sync_drive_is_recorded_as_cancelled() -> None:
    log = InMemoryEventLog()
    eid = _start(log)
    with pytest.raises(KeyboardInterrupt):
        episode.run(log, eid, Raiser(KeyboardInterrupt(), after=1))
    assert _ended(log, eid).reason is TerminationReason.CANCELLED


def test_step_bound_aborts_instead_of_leaving_the_episode_running() -> None:
    log = InMemoryEventLog()
    eid = _start(log, config=ProtocolConfig(shift_fire_prob=0.0, base_patience=1000.0))
    st = episode.run(log, eid, ListAgent([search()] * 50), max_steps=3)
    end = _ended(log, eid)
    assert st.ended and end.reason is TerminationReason.INTERNAL_ERROR and end.turns == 3
    assert "bound of 3" in (end.error or "")


def test_abort_records_once_and_needs_no_world() -> None:
    log = InMemoryEventLog()
    eid = _start(log)
    episode.step(log, eid, search())
    log.live.clear()
    st = episode.abort(log, eid, TerminationReason.AGENT_ERROR, "could not build the agent")
    assert st.outcome is Outcome.ERROR and _ended(log, eid).error == "could not build the agent"
    n = len(log.events(eid))
    episode.abort(log, eid, TerminationReason.INTERNAL_ERROR, "again")
    assert len(log.events(eid)) == n  # an ended episode is left alone
    with pytest.raises(ProtocolError):
        episode.step(log, eid, Propose(text="late"))


def test_pacing_is_a_driver_option(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr("core.engine.driver.time.sleep", slept.append)
    log = InMemoryEventLog()
    eid = _start(log)
    episode.run(log, eid, ListAgent([search(), buy("s01")]), pace_s=0.25)
    assert slept == [0.25, 0.25]  # not after the action that ended the episode


# ------------------------------------------------------------------------- the live cache


class FlakyLog(InMemoryEventLog):
    """Fails the next append once when armed."""

    armed = False

    def append(self, episode_id: str, events: Any) -> None:
        if self.armed:
            self.armed = False
            raise OSError("disk full")
        super().append(episode_id, events)


def test_failed_append_drops_the_live_episode_and_the_log_stays_the_truth() -> None:
    log = FlakyLog()
    eid = _start(log)
    episode.step(log, eid, search("teal shirt"))
    assert eid in log.live
    log.armed = True
    with pytest.raises(OSError):
        episode.step(log, eid, ask("color"))
    assert eid not in log.live
    v = episode.agent_view(log, eid)  # rebuilt from the log: the failed step never happened
    assert v.turn == 1
    episode.step(log, eid, buy("s01"))
    assert episode.step(log, eid, Propose(text="done")).ended


def test_each_log_owns_its_cache() -> None:
    a, b = InMemoryEventLog(), InMemoryEventLog()
    ea = _start(a, episode_id="same")
    eb = _start(b, episode_id="same")
    episode.step(a, ea, search())
    assert episode.agent_view(b, eb).turn == 0 and episode.agent_view(a, ea).turn == 1
    assert a.live is not b.live


def test_config_hash_is_cached_on_the_config_and_copies_rehash() -> None:
    cfg = ProtocolConfig()
    assert cfg.config_hash() is cfg.config_hash()
    other = cfg.model_copy(update={"base_patience": 12.0})
    assert other.config_hash() != cfg.config_hash()
    assert other.config_hash() == ProtocolConfig(base_patience=12.0).config_hash()
    assert ProtocolConfig(webshop_accept_threshold=0.9).config_hash() != cfg.config_hash()
    assert "webshop_accept_threshold" not in cfg.model_dump()  # default: old hashes stay valid
