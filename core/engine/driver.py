"""The one episode driver: an agent acts until the episode ends, and every ending is recorded.

Every caller that lets an agent play — symbolic and LLM sweep units, Ray workers, the live
watcher's worker, the play pages and the tests — goes through :class:`Drive`. Its life cycle:

1. **start** — the live episode is loaded from the log (:func:`core.engine.live.load`);
2. **bind** — the agent receives its :class:`~core.agents.base.EpisodeBinding` (the truth probe
   only when it is ``privileged``);
3. **act / step** — per turn: the agent view, ``act`` (or ``await aact``), ``pop_repairs``, then
   :func:`step_live` applies the action under the protocol rules (:mod:`core.engine.rules`) and
   commits the events; optionally paced (the watcher) or off the event loop (LLM user voices);
4. **end or abort** — the rules end the episode (accepted, exhausted, turn cap …), or a failure
   ends it through :func:`abort`: an agent exception (``AGENT_ERROR``), an LLM failure after the
   client's retries (``LLM_ERROR``), a cancelled task or an interrupt (``CANCELLED``, then the
   cancellation propagates), the step bound (``INTERNAL_ERROR``); the world's, a voice's and
   the engine's own failures are ended inside the step (:func:`core.engine.rules.guarded`);
5. **observe_end** — once ended, the agent sees the final view (A3 folds its book here).

The loop stops without ending only when the episode waits for a human user's reply. There is
one loop (:meth:`Drive._loop`, a coroutine); :meth:`Drive.run` is its thin synchronous wrapper
(``act`` instead of ``aact``, stepped without an event loop), so symbolic sweeps never start
asyncio.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import TypedDict, Unpack

from core.agents.base import Agent, EpisodeBinding, Policy, as_agent
from core.agents.wire import ActionRepair
from core.engine import rules
from core.engine.eventlog import EventLog
from core.engine.live import LiveEpisode, WorldLoader, commit, load
from core.engine.views import Truth, live_agent_view
from core.errors import LLMError, ProtocolError
from core.model.actions import AgentAction
from core.model.episode import AgentView, TerminationReason
from core.protocol.emit import Emitter
from core.protocol.state import EpisodeState, replay
from core.protocol.voices import Voice

MAX_STEPS = 10_000
"""Default bound on agent calls per drive (a drive that reaches it is aborted)."""

_CANCELS = (asyncio.CancelledError, KeyboardInterrupt, SystemExit)


def reason_for(exc: BaseException) -> TerminationReason:
    """The ending reason of an agent-side failure."""
    if isinstance(exc, _CANCELS):
        return TerminationReason.CANCELLED
    if isinstance(exc, LLMError):
        return TerminationReason.LLM_ERROR
    return TerminationReason.AGENT_ERROR


# --------------------------------------------------------------------------- steps


def check_can_act(live: LiveEpisode) -> None:
    """Raise :class:`ProtocolError` unless the agent may act now."""
    if live.state.ended:
        raise ProtocolError(f"episode {live.episode_id} has ended")
    if live.state.phase == "awaiting_user":
        raise ProtocolError(f"episode {live.episode_id} is waiting for the user's reply")


def step_live(
    log: EventLog, live: LiveEpisode, action: AgentAction, repairs: Sequence[ActionRepair] = ()
) -> None:
    """Apply one agent action under the protocol rules and commit its events."""
    check_can_act(live)
    em = Emitter(live.state)
    rules.guarded(live, em, lambda: rules.apply(live, em, action, repairs))
    commit(log, live.episode_id, live.state, em)


def abort_live(
    log: EventLog, live: LiveEpisode, reason: TerminationReason, detail: str
) -> EpisodeState:
    """End a live episode as ERROR with ``reason`` (nothing happens if it has ended)."""
    if not live.state.ended:
        em = Emitter(live.state)
        rules.end_with_error(em, reason, detail)
        commit(log, live.episode_id, live.state, em)
    return live.state


def abort(log: EventLog, episode_id: str, reason: TerminationReason, detail: str) -> EpisodeState:
    """End an episode as ERROR with ``reason`` and the error text ``detail``.

    The one failure ending for callers outside a drive (a worker that cannot build its agent,
    a page whose agent failed while being rebuilt). Needs no world: the state is the log's
    own (the live one when it is current, else a replay). An ended episode is left alone.

    Returns:
        The episode state after the abort.
    """
    events = log.events(episode_id)
    got: LiveEpisode | None = log.live.get(episode_id)
    if got is not None and got.state.next_seq == len(events):
        return abort_live(log, got, reason, detail)
    log.live.drop(episode_id)
    state = replay(events)
    if not state.ended:
        em = Emitter(state)
        rules.end_with_error(em, reason, detail)
        commit(log, episode_id, state, em)
    return state


def abort_for(log: EventLog, episode_id: str, exc: BaseException) -> EpisodeState:
    """:func:`abort` with the reason and error text of an agent-side failure ``exc``."""
    return abort(log, episode_id, reason_for(exc), rules.describe(exc))


# --------------------------------------------------------------------------- the drive


class DriveOptions(TypedDict, total=False):
    """How a drive runs (every key optional).

    Attributes:
        world_loader: ``benchmark -> HostWorld`` (the registry by default).
        voice: Override the header's user voice (e.g. a scripted LLM voice in tests).
        max_steps: Bound on agent calls (default :data:`MAX_STEPS`); reaching it aborts the
            episode as INTERNAL_ERROR.
        pace_s: Pause after each action that did not end the episode, so a watcher can
            follow (0 = full speed).
        offload_steps: Async drives: apply each step in a thread (an LLM user voice makes a
            blocking model call inside the step).
    """

    world_loader: WorldLoader | None
    voice: Voice | None
    max_steps: int
    pace_s: float
    offload_steps: bool


class Drive:
    """One drive of an episode by an agent (see the module docstring for its life cycle).

    Args:
        log: The event log.
        episode_id: The episode.
        agent: A life-cycle :class:`~core.agents.base.Agent` (a bare policy is wrapped).
        **options: See :class:`DriveOptions`.

    Attributes:
        failure: The exception that ended the episode through :func:`abort`, if any.
    """

    def __init__(
        self,
        log: EventLog,
        episode_id: str,
        agent: Agent | Policy,
        **options: Unpack[DriveOptions],
    ) -> None:
        self.log, self.episode_id = log, episode_id
        self.agent = as_agent(agent)
        self.world_loader = options.get("world_loader")
        self.voice = options.get("voice")
        self.max_steps = options.get("max_steps", MAX_STEPS)
        self.pace_s = options.get("pace_s", 0.0)
        self.offload_steps = options.get("offload_steps", False)
        self.failure: BaseException | None = None
        self.steps = 0

    # -- the shared steps ----------------------------------------------------------------------
    def _begin(self) -> LiveEpisode:
        live = load(self.log, self.episode_id, self.world_loader, self.voice)
        truth = Truth(live) if self.agent.privileged else None
        try:
            feed = self.log if self.agent.privileged else None  # others: the agent view only
            self.agent.bind(
                EpisodeBinding(
                    episode_id=self.episode_id, feed=feed, truth=truth, seed=live.header.seed
                )
            )
        except Exception as exc:  # noqa: BLE001 - a failing agent ends the episode as ERROR
            self._fail(live, exc)
        return live

    def _next_view(self, live: LiveEpisode) -> AgentView | None:
        st = live.state
        if st.ended or st.phase == "awaiting_user":
            return None
        if self.steps >= self.max_steps:
            detail = f"the driver's bound of {self.max_steps} agent actions was reached"
            abort_live(self.log, live, TerminationReason.INTERNAL_ERROR, detail)
            return None
        self.steps += 1
        return live_agent_view(live)

    def _apply(self, live: LiveEpisode, action: AgentAction) -> None:
        try:
            repairs = self.agent.pop_repairs()
        except Exception as exc:  # noqa: BLE001 - a failing agent ends the episode as ERROR
            self._fail(live, exc)
            return
        step_live(self.log, live, action, repairs)

    def _fail(self, live: LiveEpisode, exc: BaseException) -> None:
        self.failure = exc
        abort_live(self.log, live, reason_for(exc), rules.describe(exc))

    def _cancelled(self, exc: BaseException) -> None:
        """Record a cancellation: the step in flight may not have committed, so replay."""
        self.failure = exc
        self.log.live.drop(self.episode_id)
        try:
            abort(self.log, self.episode_id, TerminationReason.CANCELLED, rules.describe(exc))
        except Exception:  # noqa: BLE001, S110 - the log itself failed: the cancel still wins
            pass

    def _end(self, live: LiveEpisode) -> EpisodeState:
        if live.state.ended:
            self.agent.observe_end(live_agent_view(live))
        return live.state

    # -- the loop --------------------------------------------------------------------------
    async def _loop(self, sync: bool) -> EpisodeState:
        """The drive itself; ``sync`` calls ``act`` and never suspends (see :meth:`run`)."""
        try:
            live = self._begin()
            while (view := self._next_view(live)) is not None:
                try:
                    action = self.agent.act(view) if sync else await self.agent.aact(view)
                except Exception as exc:  # noqa: BLE001 - a failing agent ends the episode
                    self._fail(live, exc)
                    break
                if self.offload_steps and not sync:
                    await self._apply_in_thread(live, action)
                else:
                    self._apply(live, action)
                if self.pace_s > 0 and not live.state.ended:
                    if sync:
                        time.sleep(self.pace_s)
                    else:
                        await asyncio.sleep(self.pace_s)
        except _CANCELS as exc:
            self._cancelled(exc)
            raise
        return self._end(live)

    def run(self) -> EpisodeState:
        """Drive synchronously until the episode ends (or waits for a human user).

        The thin synchronous wrapper: the same coroutine as :meth:`arun`, stepped by hand
        without an event loop (in sync mode it never suspends), so symbolic sweeps pay no
        asyncio cost.
        """
        loop = self._loop(sync=True)
        try:
            loop.send(None)
        except StopIteration as done:
            state: EpisodeState = done.value
            return state
        loop.close()
        raise RuntimeError("a synchronous drive suspended")  # pragma: no cover - by design

    async def arun(self) -> EpisodeState:
        """Drive with ``await agent.aact`` (a cancelled task ends the episode CANCELLED)."""
        return await self._loop(sync=False)

    async def _apply_in_thread(self, live: LiveEpisode, action: AgentAction) -> None:
        step = asyncio.ensure_future(asyncio.to_thread(self._apply, live, action))
        try:
            await asyncio.shield(step)
        except asyncio.CancelledError:
            await asyncio.wait({step})  # a thread cannot be stopped: let the step commit first
            raise


def run(
    log: EventLog, episode_id: str, agent: Agent | Policy, **options: Unpack[DriveOptions]
) -> EpisodeState:
    """Drive ``agent`` until the episode ends (or waits for a human user's reply).

    Args:
        log: The event log.
        episode_id: The episode.
        agent: A life-cycle :class:`~core.agents.base.Agent` or a bare policy (``act`` only).
        **options: See :class:`DriveOptions` (world loader, voice, step bound, pacing).

    Returns:
        The episode state after the drive (``state.outcome`` is set when it ended).
    """
    return Drive(log, episode_id, agent, **options).run()


async def arun(
    log: EventLog, episode_id: str, agent: Agent | Policy, **options: Unpack[DriveOptions]
) -> EpisodeState:
    """Async :func:`run`: ``await agent.aact`` each turn (a cancelled task ends it CANCELLED)."""
    return await Drive(log, episode_id, agent, **options).arun()
