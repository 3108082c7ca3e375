"""Read models and helpers for the two role-play pages (play as user, play as agent).

Everything here is pure engine code (no streamlit). It covers:

* **Blind set-up.** :func:`sample_choices` lists only opaque sample ids with their benchmark
  (never fault types, masks or queries); :func:`start_agent_play` / :func:`start_user_play`
  load the sample and graph themselves and hand back only the episode id, so the play-as-agent
  page never holds a sample body.
* **The agent of a human-user episode.** Agents keep per-episode memory (the symbolic belief,
  question counters and plan; an LLM agent's MEMORY block). :func:`rebuild_agent` rebuilds it
  on every page rerun *by replaying*: a fresh agent is built from the episode header and is
  shown, turn by turn, exactly the agent view (and the agent-observable events) it saw when it
  acted; each replayed action is checked against the recorded one. Symbolic agents are
  deterministic, so the replay is exact; LLM agents replay from the response cache.
* **The user page's extras.** :func:`user_play_view` adds the adjudicated proposals (with the
  host's reason) and a plain-words description of each silent shift to the user view.
* **The agent page's extras.** :func:`shop_page` renders the WebShop page the agent is on by
  replaying the agent's own tool calls (taken from the agent view) on a fresh session;
  :func:`arg_fields` / :func:`build_args` turn a tool's JSON schema into typed form fields and
  back into arguments.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from core.agents.base import Agent, EpisodeBinding
from core.agents.factory import build_agent
from core.agents.methods import method_spec
from core.construction.worlds import WorldLoader, episode_world_loader
from core.engine import episode
from core.engine.eventlog import EventLog
from core.envs.base import HostWorld
from core.errors import ConfigError, NotFoundError
from core.model.actions import AgentAction, EnvOp
from core.model.base import Strict
from core.model.config import ProtocolConfig
from core.model.episode import AgentView, UserView
from core.model.events import (
    AgentActed,
    EpisodeEnded,
    EpisodeStarted,
    Event,
    ProposalJudged,
    ShiftFired,
    TurnStarted,
)
from core.model.intent import Intent
from core.model.sampling import draw_sample
from core.model.world import ToolSpec
from core.protocol.state import EpisodeState, evolve
from core.protocol.views import agent_view as build_agent_view
from core.runner.plan import SampleSource, literal_intent
from core.store import Store
from core.studio.plainwords import plain_reason
from core.studio.plays import (
    blind_conflict,
    blocked_samples,
    is_playable,
    record_play,
)
from core.studio.plays import play_owner as plays_owner

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


def sample_choices(store: Any, benchmark: str) -> list[SampleChoice]:
    """List the playable samples of ``benchmark`` blindly (store first, bundled fallback).

    Raises:
        ConfigError: For a benchmark that cannot be played.
    """
    if benchmark not in PLAY_BENCHMARKS:
        raise ConfigError(f"unknown benchmark {benchmark!r}", field="benchmark")
    ids = SampleSource(store).sample_ids(benchmark)
    return [SampleChoice(sample_id=i, benchmark=benchmark) for i in ids]


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
    ``blocked`` samples (see :func:`core.studio.plays.blocked_samples`) are never drawn.

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
    store: Any, player: str | None, sample_id: str, role: Literal["user", "agent"], strict: bool
) -> None:
    if player is None or not isinstance(store, Store):
        return
    reason = blind_conflict(store, player, sample_id, role, strict=strict)
    if reason is not None:
        raise ConfigError(reason, field="sample_id")


def _blocked(
    store: Any, player: str | None, role: Literal["user", "agent"], strict: bool
) -> set[str]:
    if player is None or not isinstance(store, Store):
        return set()
    return blocked_samples(store, player, role, strict=strict)


def _sample_and_graph(store: Any, benchmark: str, sample_id: str) -> tuple[Any, Any, WorldLoader]:
    """A sample, its graph and a loader of the world it was built on (refused when missing)."""
    source = SampleSource(store if isinstance(store, Store) else None)
    try:
        sample = source.sample(benchmark, sample_id)
        graph = source.graph(benchmark, sample.graph_id)
    except NotFoundError as exc:
        raise ConfigError(str(exc), field="sample_id") from exc
    return sample, graph, source.world_loader(sample)


_WORLDS: dict[str, HostWorld] = {}
"""Episode id → its world, for views built from an agent view alone (the shop page)."""


def _remember(episode_id: str, world: HostWorld) -> None:
    if len(_WORLDS) > 256:
        _WORLDS.clear()
    _WORLDS[episode_id] = world


def _loader(log: Any, episode_id: str) -> WorldLoader:
    """The world loader of a stored episode: the world its sample was built on."""
    inner = episode_world_loader(log if isinstance(log, Store) else None, log, episode_id)

    def loader(benchmark: str) -> HostWorld:
        world = inner(benchmark)
        _remember(episode_id, world)
        return world

    return loader


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
            as the user (see :func:`core.studio.plays.blind_conflict`).
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
    _check_blind(store, player, sid, "agent", strict)
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
    _check_blind(store, player, sid, "user", strict)
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


# ------------------------------------------------------------------ agent rebuild (replay)
class _PrefixLog:
    """An event-log facade that shows an agent only the events stored before it acted."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self.limit: int | None = 0

    def events(self, episode_id: str) -> list[Event]:
        events = self._log.events(episode_id)
        return events if self.limit is None else events[: self.limit]


@dataclass
class RebuiltAgent:
    """An agent rebuilt for an episode, with the outcome of its replay."""

    agent: Agent
    replayed: int = 0
    mismatches: list[int] = field(default_factory=list)


def rebuild_agent(log: EventLog, episode_id: str, *, client: Any = None) -> RebuiltAgent:
    """Rebuild the agent of a human-user episode from its header and replay its past turns.

    A fresh policy is built for the header's method (symbolic when ``client`` is None) and
    bound to a prefix of the log; for every recorded ``agent_acted`` event it is shown the
    agent view it saw then, and its action is compared with the recorded one (differences are
    reported, by turn, in :attr:`RebuiltAgent.mismatches`).

    Raises:
        ConfigError: The episode has no start event (not an episode of this engine).
    """
    header = log.header(episode_id)
    events = log.events(episode_id)
    if not events or not isinstance(events[0], EpisodeStarted):
        raise ConfigError(f"episode {episode_id} has no start event", field="episode_id")
    start = events[0]
    world = _loader(log, episode_id)(header.benchmark)
    agent = build_agent(
        header.method,
        world=world,
        literal=literal_intent(start.sample, start.graph),
        client=client,
        costs=header.config.costs(),
    )
    prefix = _PrefixLog(log)
    feed = prefix if agent.privileged else None  # ordinary agents: the agent view only
    agent.bind(EpisodeBinding(episode_id=episode_id, feed=feed, seed=header.seed))
    out = RebuiltAgent(agent=agent)
    state = EpisodeState()
    for i, ev in enumerate(events):
        nxt = events[i + 1] if i + 1 < len(events) else None
        if isinstance(ev, TurnStarted) and isinstance(nxt, AgentActed):
            prefix.limit = i
            view = build_agent_view(state, header, world)
            action = agent.act(view)
            out.replayed += 1
            if action.model_dump(exclude={"raw"}) != nxt.action.model_dump(exclude={"raw"}):
                out.mismatches.append(nxt.turn)
        evolve(state, ev)
    prefix.limit = None
    return out


def agent_play_view(log: EventLog, episode_id: str) -> AgentView:
    """The allow-listed agent view of an episode a person plays as the agent."""
    return episode.agent_view(log, episode_id, world_loader=_loader(log, episode_id))


def agent_play_step(log: EventLog, episode_id: str, action: AgentAction) -> AgentView:
    """Apply the person's action as the agent and return the new agent view."""
    return episode.step(log, episode_id, action, world_loader=_loader(log, episode_id))


def advance(log: EventLog, episode_id: str, *, client: Any = None) -> UserView:
    """Let the agent act until it waits for the human user (or the episode ends).

    Every action is stored by the engine before this returns the user view. The agent plays
    through the one episode driver, so an agent that raises — now or while being rebuilt from
    its past turns — ends the episode with its error recorded (outcome ERROR).
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
        episode.run(log, episode_id, rebuilt.agent, world_loader=loader)
    return episode.user_view(log, episode_id, world_loader=loader)


def reply(
    log: EventLog,
    episode_id: str,
    text: str,
    disclosed: Sequence[str] = (),
    *,
    client: Any = None,
    answers: int | None = None,
) -> UserView:
    """Record the human user's reply, then let the agent act until it waits again.

    ``answers`` is the ``pending_prompt`` of the view the person replied to: a reply typed in
    a stale second tab names an older prompt and is refused (reload), never stored as the
    answer to the next question.
    """
    if not text.strip():
        raise ConfigError("the reply is empty", field="text")
    episode.respond(
        log,
        episode_id,
        text,
        disclosed,
        world_loader=_loader(log, episode_id),
        answers=answers,
    )
    return advance(log, episode_id, client=client)


def let_simulator_reply(
    log: EventLog, episode_id: str, *, client: Any = None, answers: int | None = None
) -> UserView:
    """The person asks the simulated user to write this one reply (recorded as such)."""
    episode.respond_for_human(
        log, episode_id, world_loader=_loader(log, episode_id), answers=answers
    )
    return advance(log, episode_id, client=client)


# ------------------------------------------------------------------------ user page view
class VerdictLine(Strict):
    """One proposal the agent made and how execution judged it."""

    turn: int
    accepted: bool
    reason: str = Field(description="The host's reason code (researchers only).")
    plain: str = Field(default="", description="The verdict in plain words (what people see).")
    score: float | None = None
    via: str


class ShiftBanner(Strict):
    """One silent shift of the user's goal, in plain words for the person playing the user."""

    turn: int
    operator: str
    text: str = Field(description="What changed, phrased with the host's phrases.")
    after_reply: bool


class UserPlayView(Strict):
    """Everything the play-as-user page shows."""

    user: UserView
    method: str
    agent: str
    turn: int
    verdicts: tuple[VerdictLine, ...] = ()
    shifts: tuple[ShiftBanner, ...] = ()
    reason: str | None = Field(default=None, description="Termination reason once ended.")


def describe_shift(world: HostWorld, src: Intent, dst: Intent, operator: str) -> str:
    """Say in the user's words how ``dst`` differs from ``src``."""
    if operator == "pivot" or src.env_id != dst.env_id or src.base != dst.base:
        wants = "; ".join(world.phrase(c) for c in dst.conditions)
        return f"something else now ({dst.env_id}): {wants}"
    old, new = src.slot_map(), dst.slot_map()
    parts = []
    for slot, cond in new.items():
        if slot not in old:
            parts.append(f"new: {world.phrase(cond)}")
        elif old[slot].value != cond.value or old[slot].op != cond.op:
            parts.append(f"changed: {world.phrase(cond)} (was: {world.phrase(old[slot])})")
    parts += [f"dropped: {world.phrase(c)}" for s, c in old.items() if s not in new]
    return "; ".join(parts) or "your wishes changed"


def user_play_view(log: EventLog, episode_id: str) -> UserPlayView:
    """Build the play-as-user page's view: the user view plus verdicts and shift banners."""
    header = log.header(episode_id)
    events = log.events(episode_id)
    loader = _loader(log, episode_id)
    user = episode.user_view(log, episode_id, world_loader=loader)
    world = loader(header.benchmark)
    nodes: dict[str, Intent] = {}
    turn, reason = 0, None
    verdicts, shifts = [], []
    for ev in events:
        if isinstance(ev, EpisodeStarted):
            nodes = {n.intent_id: n for n in ev.graph.nodes}
        elif isinstance(ev, TurnStarted):
            turn = ev.turn
        elif isinstance(ev, ProposalJudged):
            verdicts.append(
                VerdictLine(
                    turn=ev.turn,
                    accepted=ev.accepted,
                    reason=ev.reason,
                    plain=plain_reason(ev.reason, accepted=ev.accepted),
                    score=ev.score,
                    via=ev.via,
                )
            )
        elif isinstance(ev, ShiftFired):
            src, dst = nodes.get(ev.edge.src), nodes.get(ev.edge.dst)
            text = (
                describe_shift(world, src, dst, ev.edge.operator)
                if src is not None and dst is not None
                else "your wishes changed"
            )
            shifts.append(
                ShiftBanner(
                    turn=ev.turn, operator=ev.edge.operator, text=text, after_reply=ev.after_reply
                )
            )
        elif isinstance(ev, EpisodeEnded):
            reason = ev.reason.value
    return UserPlayView(
        user=user,
        method=header.method,
        agent=header.agent,
        turn=turn,
        verdicts=tuple(verdicts),
        shifts=tuple(shifts),
        reason=reason,
    )


# ----------------------------------------------------------------------- agent page extras
def shop_page(view: AgentView, store: Any = None) -> Any:
    """Return the WebShop page (``PageView``) the agent is on, or None for other hosts.

    Built only from the agent view: the agent's own tool calls are replayed on a fresh
    session of the (public) catalogue of the episode's own world (the one its views were
    built on in this process; else resolved from ``store``).
    """
    if view.benchmark != "webshop":
        return None
    world = _WORLDS.get(view.episode_id)
    if world is None:
        world = _loader(store, view.episode_id)("webshop") if store is not None else None
    if world is None:
        raise ConfigError(f"the world of episode {view.episode_id} is not loaded", field="episode")
    session = world.open_session()
    for e in view.transcript:
        if e.role == "agent" and isinstance(e.action, EnvOp):
            session.act(e.action.action)
    page = getattr(session, "page", None)
    return page() if callable(page) else None


ArgKind = Literal["string", "integer", "number", "boolean", "list", "json"]


class ArgField(Strict):
    """One typed form field derived from a tool's JSON schema."""

    name: str
    kind: ArgKind
    required: bool
    description: str = ""
    item_kind: str = Field(default="string", description="Item type of a 'list' field.")
    example: str = Field(default="", description="A placeholder for 'json' fields.")


def _example(schema: Mapping[str, Any]) -> Any:
    t = schema.get("type")
    if t == "object":
        return {k: _example(v) for k, v in (schema.get("properties") or {}).items()}
    if t == "array":
        return [_example(schema.get("items") or {})]
    return {"integer": 0, "number": 0.0, "boolean": False}.get(str(t), "")


def arg_fields(tool: ToolSpec) -> list[ArgField]:
    """Return the typed form fields of ``tool`` (in schema order)."""
    props: Mapping[str, Any] = tool.parameters.get("properties") or {}
    required = set(tool.parameters.get("required") or [])
    out = []
    for name, schema in props.items():
        t = schema.get("type")
        items = schema.get("items") or {}
        kind: ArgKind
        item_kind = "string"
        if t in ("string", "integer", "number", "boolean"):
            kind = t
        elif t == "array" and items.get("type") in ("string", "integer", "number"):
            kind, item_kind = "list", str(items["type"])
        else:
            kind = "json"
        out.append(
            ArgField(
                name=name,
                kind=kind,
                required=name in required,
                description=str(schema.get("description", "")),
                item_kind=item_kind,
                example=json.dumps(_example(schema)) if kind == "json" else "",
            )
        )
    return out


def _number(raw: Any, integer: bool, name: str) -> int | float:
    try:
        num = float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: {raw!r} is not a number", field=name) from None
    if integer:
        if not num.is_integer():
            raise ConfigError(f"{name}: {raw!r} is not a whole number", field=name)
        return int(num)
    return num


def _empty(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and not raw.strip())


def build_args(tool: ToolSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """Turn form values into tool arguments, typed by the tool's schema.

    Strings stay strings; integer/number fields accept numbers or numeric text; booleans
    accept ``true``/``false``; list fields take one item per line (or comma-separated);
    other fields take JSON. Empty optional fields are left out.

    Raises:
        ConfigError: A required field is empty or a value does not fit its type (``field``
            names the argument).
    """
    out: dict[str, Any] = {}
    for f in arg_fields(tool):
        raw = values.get(f.name)
        if _empty(raw) or (f.kind == "list" and isinstance(raw, list) and not raw):
            if f.required:
                raise ConfigError(f"{f.name} is required", field=f.name)
            continue
        if f.kind == "string":
            out[f.name] = str(raw)
        elif f.kind in ("integer", "number"):
            out[f.name] = _number(raw, f.kind == "integer", f.name)
        elif f.kind == "boolean":
            if isinstance(raw, bool):
                out[f.name] = raw
            elif str(raw).strip().lower() in ("true", "false"):
                out[f.name] = str(raw).strip().lower() == "true"
            else:
                raise ConfigError(f"{f.name}: use true or false", field=f.name)
        elif f.kind == "list":
            items = raw if isinstance(raw, list) else _split(str(raw))
            if f.item_kind in ("integer", "number"):
                items = [_number(x, f.item_kind == "integer", f.name) for x in items]
            out[f.name] = [str(x) if f.item_kind == "string" else x for x in items]
        else:
            try:
                out[f.name] = json.loads(raw) if isinstance(raw, str) else raw
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{f.name}: not valid JSON ({exc.msg})", field=f.name) from exc
    return out


def _split(text: str) -> list[str]:
    parts = text.splitlines() if "\n" in text else text.split(",")
    return [p.strip() for p in parts if p.strip()]
