"""Read models and helpers for the two role-play pages (play as user, play as agent).

Everything here is pure engine code (no streamlit). It covers:

* **Blind set-up.** :func:`sample_choices` lists only opaque sample ids with their benchmark
  (never fault types, masks or queries); :func:`start_agent_play` / :func:`start_user_play`
  load the sample and graph themselves and hand back only the episode id, so the play-as-agent
  page never holds a sample body.
* **Life cycle.** :func:`advance` lets the agent act until it waits for the person (the agent
  is rebuilt by :mod:`core.studio.agent_replay`); the person's reply is read and sent by
  :mod:`core.studio.reply_check`; :func:`let_simulator_reply` lets the simulator write one.

The user page's view lives in :mod:`core.studio.user_play_view`, the agent page's tool forms in
:mod:`core.studio.tool_forms`, the episode's world and shop page in
:mod:`core.studio.play_worlds`; the names are re-exported here for the pages.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, Literal

from core.agents.methods import method_spec
from core.construction.worlds import WorldLoader, episode_world_loader
from core.engine import episode
from core.engine.eventlog import EventLog
from core.envs.base import HostWorld
from core.errors import ConfigError, NotFoundError
from core.model.actions import AgentAction
from core.model.base import Strict
from core.model.config import ProtocolConfig
from core.model.episode import AgentView, UserView
from core.model.sampling import draw_sample
from core.runner.plan import SampleSource
from core.store import Store
from core.studio.agent_replay import NarratedAgent, RebuiltAgent, rebuild_agent
from core.studio.blind import hidden_refusal, hidden_samples
from core.studio.play_worlds import episode_loader as _loader
from core.studio.play_worlds import remember as _remember
from core.studio.play_worlds import shop_page
from core.studio.plays import is_playable, record_play
from core.studio.plays import play_owner as plays_owner
from core.studio.tool_forms import ArgField, arg_fields, build_args
from core.studio.user_play_view import (
    ShiftBanner,
    UserPlayView,
    VerdictLine,
    describe_shift,
    user_play_view,
)

__all__ = [
    "HUMAN",
    "PLAY_BENCHMARKS",
    "USER_PLAY_METHODS",
    "ArgField",
    "RebuiltAgent",
    "SampleChoice",
    "ShiftBanner",
    "UserPlayView",
    "VerdictLine",
    "advance",
    "agent_play_step",
    "agent_play_view",
    "arg_fields",
    "build_args",
    "choose_sample",
    "claim_episode",
    "describe_shift",
    "let_simulator_reply",
    "playable",
    "rebuild_agent",
    "sample_choices",
    "shop_page",
    "start_agent_play",
    "start_user_play",
    "user_play_view",
    "world_for",
]

PLAY_BENCHMARKS: tuple[str, ...] = ("webshop", "tau2_retail", "tau2_airline", "mock")
"""Benchmarks a person can play."""

USER_PLAY_METHODS: tuple[str, ...] = ("A2", "A1", "A0", "A3", "B0", "LIT")
"""Ladder methods an annotator can face (L0 needs a mute user, RS/ORACLE read the truth)."""

HUMAN = "human"


# ------------------------------------------------------------------------------ set-up
class SampleChoice(Strict):
    """One entry of a blind sample picker: an opaque id and its benchmark, nothing else."""

    sample_id: str
    benchmark: str


def sample_choices(
    store: Any,
    benchmark: str,
    *,
    person: str | None = None,
    role: Literal["user", "agent"] = "user",
    strict: bool = False,
) -> list[SampleChoice]:
    """List the playable samples of ``benchmark`` blindly (store first, bundled fallback).

    With ``person``, samples the blind rule hides from them in ``role`` are left out
    (:func:`core.studio.blind.hidden_samples`).

    Raises:
        ConfigError: For a benchmark that cannot be played.
    """
    if benchmark not in PLAY_BENCHMARKS:
        raise ConfigError(f"unknown benchmark {benchmark!r}", field="benchmark")
    ids = SampleSource(store).sample_ids(benchmark)
    hidden = _blocked(store, person, role, strict)
    return [SampleChoice(sample_id=i, benchmark=benchmark) for i in ids if i not in hidden]


def choose_sample(
    store: Any,
    benchmark: str,
    sample_id: str | None,
    seed: int,
    *,
    role: Literal["user", "agent"] = "user",
    blocked: Collection[str] = (),
) -> str:
    """Return ``sample_id``, or a sample drawn from ``seed`` when it is None.

    The two play pages never draw the same sample for the same benchmark and seed: the user
    page draws ``random.Random(seed)``'s pick, the agent page draws among the other samples.
    ``blocked`` samples (see :func:`core.studio.blind.hidden_samples`) are never drawn.

    Raises:
        ConfigError: No samples for ``benchmark``, an unknown sample id, or every sample is
            blocked.
    """
    ids = [c.sample_id for c in sample_choices(store, benchmark)]
    if not ids:
        raise ConfigError(f"no samples for {benchmark}; run 'driftbench init'", field="benchmark")
    if sample_id is not None:
        if sample_id not in ids:
            raise ConfigError(f"no sample {sample_id!r} in {benchmark}", field="sample_id")
        return sample_id
    user_pick = draw_sample(ids, seed)
    if role == "user" and user_pick not in blocked:
        return user_pick
    agent_pool = [i for i in ids if i != user_pick] or ids
    agent_pick = draw_sample(agent_pool, f"agent:{seed}")
    if role == "agent" and agent_pick not in blocked:
        return agent_pick
    taken = {user_pick if role == "agent" else agent_pick}
    pool = [i for i in ids if i not in blocked and i not in taken]
    if not pool:
        raise ConfigError(
            f"every {benchmark} sample is blocked for you in this role", field="sample_id"
        )
    return draw_sample(pool, f"{role}:{seed}:alt")


def world_for(log: EventLog, episode_id: str) -> HostWorld:
    """The host world an episode runs on (the world its sample was built on)."""
    store = log if isinstance(log, Store) else None
    return episode_world_loader(store, log, episode_id)(log.header(episode_id).benchmark)


def _check_blind(
    store: Any,
    player: str | None,
    sample_id: str,
    role: Literal["user", "agent"],
    strict: bool,
    assignment_id: int | None = None,
) -> None:
    if player is None or not isinstance(store, Store):
        return
    reason = hidden_refusal(
        store, player, sample_id, role, strict=strict, assignment_id=assignment_id
    )
    if reason is not None:
        raise ConfigError(reason, field="sample_id")


def _blocked(
    store: Any, player: str | None, role: Literal["user", "agent"], strict: bool
) -> set[str]:
    if player is None or not isinstance(store, Store):
        return set()
    return hidden_samples(store, player, role, strict=strict)


def _sample_and_graph(store: Any, benchmark: str, sample_id: str) -> tuple[Any, Any, WorldLoader]:
    """A sample, its graph and a loader of the world it was built on (refused when missing)."""
    source = SampleSource(store if isinstance(store, Store) else None)
    try:
        sample = source.sample(benchmark, sample_id)
        graph = source.graph(benchmark, sample.graph_id)
    except NotFoundError as exc:
        raise ConfigError(str(exc), field="sample_id") from exc
    return sample, graph, source.world_loader(sample)


def start_agent_play(
    store: Any,
    *,
    benchmark: str,
    sample_id: str | None,
    persona: str,
    seed: int,
    show_patience: bool = False,
    player: str | None = None,
    strict: bool = False,
    study_id: str | None = None,
    assignment_id: int | None = None,
    interpreter: str = "offline",
) -> str:
    """Start an episode in which a person plays the agent against the simulated user.

    The sample is loaded here and never returned: the caller gets only the episode id and
    reads the episode through :func:`core.engine.episode.agent_view`.

    Args:
        store: The event log (the studio's store).
        benchmark: Benchmark id.
        sample_id: Sample id (None = drawn from ``seed``).
        persona: Persona id of the simulated user.
        seed: Episode seed.
        show_patience: The study condition: whether the agent sees the patience meter.
        player: Who plays (recorded: the episode is theirs alone, their later labels on it
            count as self-played and the Home page can offer to resume it).
        strict: Hold ``player`` to their own history too (annotators): no sample they played
            as the user (see :func:`core.studio.blind.hidden_reasons`).
        study_id: The study this play belongs to.
        assignment_id: The study assignment it fulfils (done when the episode ends).
        interpreter: How the simulated user reads the person's messages: ``offline`` or a
            model spec (recorded in the episode's protocol config; an LLM reading that fails
            falls back to the offline interpreter and is recorded as a ``question_read``).

    Returns:
        The episode id.

    Raises:
        ConfigError: Unknown benchmark or sample, or a sample ``player`` may not play blind.
    """
    sid = choose_sample(
        store,
        benchmark,
        sample_id,
        seed,
        role="agent",
        blocked=_blocked(store, player, "agent", strict),
    )
    _check_blind(store, player, sid, "agent", strict, assignment_id)
    sample, graph, loader = _sample_and_graph(store, benchmark, sid)
    eid = episode.start(
        store,
        sample,
        persona,
        seed,
        HUMAN,
        ProtocolConfig(
            patience_visible=show_patience, interpreter=interpreter.strip() or "offline"
        ),
        graph=graph,
        method=HUMAN,
        user_voice="template",
        world_loader=loader,
    )
    _remember(eid, loader(benchmark))
    _record(store, player, eid, sid, "agent", study_id, assignment_id)
    return eid


def start_user_play(
    store: Any,
    *,
    benchmark: str,
    sample_id: str | None,
    persona: str,
    seed: int,
    method: str = "A2",
    model: str | None = None,
    player: str | None = None,
    strict: bool = False,
    study_id: str | None = None,
    assignment_id: int | None = None,
) -> str:
    """Start an episode in which a person plays the user against an agent.

    Args:
        store: The event log.
        benchmark: Benchmark id.
        sample_id: Sample id (None = drawn from ``seed``).
        persona: Persona the person role-plays.
        seed: Episode seed.
        method: Ladder method of the agent (see :data:`USER_PLAY_METHODS`).
        model: LLM model spec; None = the symbolic policy.
        player: Who plays the user (see :func:`start_agent_play`).
        strict: No sample ``player`` played as the agent (annotators).
        study_id: The study this play belongs to.
        assignment_id: The study assignment it fulfils.

    Returns:
        The episode id.

    Raises:
        ConfigError: Unknown benchmark, sample or method, or a sample ``player`` may not see
            from the user's side (they are assigned to play, or played, its agent).
    """
    spec = method_spec(method)
    if spec.id not in USER_PLAY_METHODS:
        raise ConfigError(
            f"method {method!r} cannot face a human user; use one of {USER_PLAY_METHODS}",
            field="method",
        )
    sid = choose_sample(
        store,
        benchmark,
        sample_id,
        seed,
        role="user",
        blocked=_blocked(store, player, "user", strict),
    )
    _check_blind(store, player, sid, "user", strict, assignment_id)
    sample, graph, loader = _sample_and_graph(store, benchmark, sid)
    eid = episode.start(
        store,
        sample,
        persona,
        seed,
        model or "symbolic",
        graph=graph,
        method=spec.id,
        user_voice=HUMAN,
        world_loader=loader,
    )
    _remember(eid, loader(benchmark))
    _record(store, player, eid, sid, "user", study_id, assignment_id)
    return eid


def _record(
    store: Any,
    player: str | None,
    episode_id: str,
    sample_id: str,
    role: Literal["user", "agent"],
    study_id: str | None = None,
    assignment_id: int | None = None,
) -> None:
    """Record who plays an episode (ownership, self-play bookkeeping, Home resume links)."""
    if player is None or not isinstance(store, Store):
        return
    record_play(
        store,
        player=player,
        episode_id=episode_id,
        sample_id=sample_id,
        role=role,
        study_id=study_id,
        assignment_id=assignment_id,
    )


def claim_episode(
    store: Store, episode_id: str, player: str, role: Literal["user", "agent"]
) -> None:
    """Record ``player`` as the one who plays an episode made for a person (e.g. a branch)."""
    header = store.header(episode_id)
    if plays_owner(store, episode_id) is None:
        _record(store, player, episode_id, header.sample_id, role)


def playable(store: Any, episode_id: str, role: Literal["user", "agent"]) -> bool:
    """Whether ``episode_id`` exists and was started for a person playing ``role``."""
    return is_playable(store, episode_id, role)


def agent_play_view(log: EventLog, episode_id: str) -> AgentView:
    """The allow-listed agent view of an episode a person plays as the agent."""
    return episode.agent_view(log, episode_id, world_loader=_loader(log, episode_id))


def agent_play_step(
    log: EventLog, episode_id: str, action: AgentAction, *, acts_on: int | None = None
) -> AgentView:
    """Apply the person's action as the agent and return the new agent view.

    Args:
        log: The event log.
        episode_id: The episode.
        action: The person's tool call, message or final answer.
        acts_on: The turn of the view the person acted on (``AgentView.turn`` of the page they
            used); an action from a stale tab is refused, nothing recorded.

    Raises:
        ProtocolError: The episode has ended or is waiting for the user.
        StaleActionError: ``acts_on`` is not the episode's current turn (reload).
    """
    return episode.step(
        log, episode_id, action, world_loader=_loader(log, episode_id), acts_on=acts_on
    )


def advance(
    log: EventLog,
    episode_id: str,
    *,
    client: Any = None,
    on_action: Callable[[Any], None] | None = None,
) -> UserView:
    """Let the agent act until it waits for the human user (or the episode ends).

    Every action is stored by the engine before this returns the user view. The agent plays
    through the one episode driver, so an agent that raises — now or while being rebuilt from
    its past turns — ends the episode with its error recorded (outcome ERROR). ``on_action``
    hears of each new action as it is taken (the page shows the model's progress while it
    works).
    """
    loader = _loader(log, episode_id)
    view = episode.agent_view(log, episode_id, world_loader=loader)
    if not view.ended and not view.awaiting_user:
        try:
            rebuilt = rebuild_agent(log, episode_id, client=client)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - a failing agent ends the episode as ERROR
            episode.abort_for(log, episode_id, exc)
            return episode.user_view(log, episode_id, world_loader=loader)
        agent = rebuilt.agent if on_action is None else NarratedAgent(rebuilt.agent, on_action)
        episode.run(log, episode_id, agent, world_loader=loader)
    return episode.user_view(log, episode_id, world_loader=loader)


def let_simulator_reply(
    log: EventLog, episode_id: str, *, client: Any = None, answers: int | None = None
) -> UserView:
    """The person asks the simulated user to write this one reply (recorded as such)."""
    episode.respond_for_human(
        log, episode_id, world_loader=_loader(log, episode_id), answers=answers
    )
    return advance(log, episode_id, client=client)
