"""Playing episodes: one A3-aware *unit* at a time, in memory, returned as storable records.

Episodes run against an :class:`~core.engine.eventlog.InMemoryEventLog` and come back as plain
records (header JSON, event JSONs, outcome, summary), so a worker process never touches the
SQLite file: the parent writes each finished episode in order. A *unit* is the list of keys
that must run sequentially in one place: every A3 episode of one (benchmark, persona, seed)
shares a lesson book, so its keys form one unit (its generations); every other key is a unit
of one. Running a unit again reproduces it exactly, which is how an interrupted A3 unit
resumes with the same book.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.agents.askbook import AskBook
from core.agents.factory import build_agent
from core.agents.lessons import LessonBook, digest
from core.agents.methods import method_spec, user_voice_for
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.errors import LLMError
from core.llm.types import ChatModel
from core.model.episode import Outcome
from core.model.run import EpisodeKey, RunSpec
from core.runner.plan import SampleSource, entity_words, literal_intent

EventRow = tuple[int, str, int, str]
"""One stored event: (seq, kind, turn, JSON body)."""


def key_id(key: EpisodeKey) -> str:
    """``key.key()`` computed without the generic canonicaliser (same digest, ~4x faster).

    The key is a content hash of six strings and an int, whose canonical JSON is plain
    ``json.dumps`` with compact separators; a sweep needs it for every planned episode.
    """
    body = json.dumps(
        [key.run_id, key.benchmark, key.sample_id, key.method, key.persona, key.seed],
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "ep-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]


def episode_id_of(kid: str, attempt: int) -> str:
    """Episode id of attempt ``attempt`` of the key ``kid`` (as :meth:`EpisodeKey.episode_id`)."""
    return kid if attempt == 0 else f"{kid}-r{attempt}"


@dataclass
class EpisodeRecord:
    """A finished episode, ready to be written to the store.

    Attributes:
        key: The episode's sweep key.
        header_json: The header as stored.
        events_json: Every event as stored, in order.
        outcome: The outcome value (``ERROR`` when the episode did not end).
        summary: The state summary.
        cost_usd: LLM spend of the episode.
        write: False for episodes replayed only to rebuild an A3 book (already stored).
        episode_id: The episode id (attempt suffix included).
        key_id: ``key.key()``.
        persona_id: The header's persona id.
    """

    key: EpisodeKey
    header_json: str
    events_json: list[EventRow]
    outcome: str
    summary: dict[str, Any]
    cost_usd: float = 0.0
    write: bool = True
    episode_id: str = ""
    key_id: str = ""
    persona_id: str = ""

    def to_wire(self) -> tuple[Any, ...]:
        """Plain-tuple form (cheap to pickle between processes)."""
        k = self.key
        return (
            (k.run_id, k.benchmark, k.sample_id, k.method, k.persona, k.seed),
            self.header_json,
            self.events_json,
            self.outcome,
            self.summary,
            self.cost_usd,
            self.write,
            self.episode_id,
            self.key_id,
            self.persona_id,
        )

    @classmethod
    def from_wire(cls, row: Sequence[Any]) -> EpisodeRecord:
        """Inverse of :meth:`to_wire`."""
        run_id, benchmark, sample_id, method, persona, seed = row[0]
        key = EpisodeKey(
            run_id=run_id,
            benchmark=benchmark,
            sample_id=sample_id,
            method=method,
            persona=persona,
            seed=seed,
        )
        return cls(key, *row[1:])


@dataclass
class UnitResult:
    """What playing one unit produced."""

    records: list[EpisodeRecord] = field(default_factory=list)
    seconds: float = 0.0


def units_of(keys: Sequence[EpisodeKey], spec: RunSpec) -> list[list[EpisodeKey]]:
    """Group keys into units (A3 per benchmark × persona × seed; others singly), in order."""
    out: list[list[EpisodeKey]] = []
    a3: dict[tuple[str, str, int], list[EpisodeKey]] = {}
    for k in keys:
        if method_spec(k.method).self_evolving:
            cell = (k.benchmark, k.persona, k.seed)
            if cell not in a3:
                a3[cell] = []
                out.append(a3[cell])
            a3[cell].append(k)
        else:
            out.append([k])
    return out


class _Raiser:
    """An agent whose first action raises (ends an episode as ERROR through the engine)."""

    spec = "error"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def act(self, view: Any) -> Any:
        raise self.exc


def _serialiser(ev: Any) -> Any:
    return ev.__pydantic_serializer__


def _record(
    log: InMemoryEventLog, key: EpisodeKey, kid: str, eid: str, cost: float, write: bool
) -> EpisodeRecord:
    header = log.header(eid)
    out = log.outcome(eid)
    rows: list[EventRow] = []
    for e in log.events(eid):
        # what ``model_dump_json()`` returns, without its per-call argument handling
        rows.append((e.seq, e.kind, e.turn, _serialiser(e).to_json(e).decode()))
    return EpisodeRecord(
        key=key,
        header_json=header.model_dump_json(),
        events_json=rows,
        outcome=out.value if out is not None else Outcome.ERROR.value,
        summary=log.summary(eid),
        cost_usd=cost,
        write=write,
        episode_id=eid,
        key_id=kid,
        persona_id=header.persona_id,
    )


@functools.lru_cache(maxsize=1)
def _personas() -> dict[str, Any]:
    from core.protocol.personas import load_personas

    return dict(load_personas())


def _start(
    log: InMemoryEventLog,
    key: EpisodeKey,
    kid: str,
    spec: RunSpec,
    source: SampleSource,
    attempt: int,
) -> tuple[str, Any, Any, Any]:
    """Start an episode on its sample's own world; returns (id, sample, graph, world loader)."""
    sample = source.sample(key.benchmark, key.sample_id)
    graph = source.graph(key.benchmark, sample.graph_id)
    loader = source.world_loader(sample)
    eid = episode.start(
        log,
        sample,
        _personas().get(key.persona, key.persona),
        key.seed,
        spec.agent,
        spec.config,
        graph=graph,
        method=key.method,
        user_voice=user_voice_for(key.method, spec.user_voice),
        run_id=key.run_id,
        episode_id=episode_id_of(kid, attempt),
        world_loader=loader,
    )
    return eid, sample, graph, loader


def play_symbolic_unit(
    keys: Sequence[EpisodeKey],
    spec: RunSpec,
    source: SampleSource,
    *,
    attempts: dict[str, int] | None = None,
    skip: set[str] | None = None,
    key_ids: Sequence[str] | None = None,
) -> UnitResult:
    """Play one unit with the symbolic policies (deterministic).

    Args:
        keys: The unit's keys, in order.
        spec: The run spec.
        source: Samples and graphs.
        attempts: Attempt number per episode key (resume of ERROR/interrupted episodes).
        skip: Keys already finished: replayed for the A3 book, not returned for writing.
        key_ids: ``key.key()`` of each key, when the caller has them already.
    """
    t0 = time.perf_counter()
    attempts = attempts or {}
    skip = skip or set()
    kids = list(key_ids) if key_ids is not None else [key_id(k) for k in keys]
    book = AskBook()
    costs = spec.config.costs()
    res = UnitResult()
    for key, kid in zip(keys, kids, strict=True):
        log = InMemoryEventLog()
        eid, sample, graph, loader = _start(log, key, kid, spec, source, attempts.get(kid, 0))
        agent = build_agent(
            key.method,
            world=loader(key.benchmark),
            literal=literal_intent(sample, graph),
            askbook=book,
            costs=costs,
        )
        if hasattr(agent, "attach"):
            agent.attach(log, eid)
        episode.run(log, eid, agent, world_loader=loader)
        res.records.append(_record(log, key, kid, eid, 0.0, kid not in skip))
    res.seconds = time.perf_counter() - t0
    return res


async def _drive_llm(
    log: InMemoryEventLog,
    eid: str,
    agent: Any,
    *,
    world_loader: Any,
    offload_steps: bool = False,
) -> None:
    """The async twin of :func:`core.engine.episode.run` (bind truth, act, step until the end).

    The agent's parser repairs are recorded with each step (``repair`` events). Steps run on
    the event loop (they take well under a millisecond with the template voice); with an LLM
    user voice (``offload_steps``) each step makes a blocking model call and runs in a thread.
    ``world_loader`` returns the episode's own world.
    """
    if hasattr(agent, "bind_truth"):
        agent.bind_truth(episode.truth(log, eid, world_loader=world_loader))
    for _ in range(10_000):
        view = episode.agent_view(log, eid, world_loader=world_loader)
        if view.ended or view.awaiting_user:
            break
        if hasattr(agent, "aact"):
            action = await agent.aact(view)
        else:
            action = agent.act(view)
        repairs = episode._pop_repairs(agent)
        if offload_steps:
            await asyncio.to_thread(
                episode.step, log, eid, action, world_loader=world_loader, repairs=repairs
            )
        else:
            episode.step(log, eid, action, world_loader=world_loader, repairs=repairs)
    view = episode.agent_view(log, eid, world_loader=world_loader)
    if view.ended and hasattr(agent, "observe_end"):
        agent.observe_end(view)


async def play_llm_unit(
    keys: Sequence[EpisodeKey],
    spec: RunSpec,
    source: SampleSource,
    client: ChatModel,
    *,
    attempts: dict[str, int] | None = None,
    skip: set[str] | None = None,
    max_attempts: int = 3,
    backoff_s: float = 0.5,
    key_ids: Sequence[str] | None = None,
) -> UnitResult:
    """Play one unit with LLM policies (A3 reflects between generations).

    Provider errors (:class:`LLMError`) retry the episode with backoff; after
    ``max_attempts`` the episode is recorded as ERROR (a later resume retries it).
    """
    t0 = time.perf_counter()
    attempts = attempts or {}
    skip = skip or set()
    kids = list(key_ids) if key_ids is not None else [key_id(k) for k in keys]
    res = UnitResult()
    book: LessonBook | None = None
    gen_digests: list[dict[str, Any]] = []
    voice_is_llm = spec.user_voice not in ("template", "mute", "human")
    for i, (key, kid) in enumerate(zip(keys, kids, strict=True)):
        sample0 = source.sample(key.benchmark, key.sample_id)
        world = source.world(sample0)
        m = method_spec(key.method)
        if m.self_evolving and book is None:
            graph0 = source.graph(key.benchmark, sample0.graph_id)
            banned = entity_words(graph0, sample0) | {t.name for t in world.tools()}
            book = LessonBook(banned_words=banned)
        rec: EpisodeRecord | None = None
        for attempt in range(max_attempts):
            log = InMemoryEventLog()
            eid, sample, graph, loader = _start(log, key, kid, spec, source, attempts.get(kid, 0))
            if book is not None:
                book.banned |= entity_words(graph, sample)
                book.add_seen([sample.query])
            agent = build_agent(
                key.method,
                world=world,
                literal=literal_intent(sample, graph),
                client=client,
                lessons=book,
            )
            try:
                await _drive_llm(log, eid, agent, world_loader=loader, offload_steps=voice_is_llm)
            except LLMError as exc:
                if exc.retryable and attempt + 1 < max_attempts:
                    await asyncio.sleep(backoff_s * (2**attempt))
                    continue
                episode.run(log, eid, _Raiser(exc), world_loader=loader)
            cost = float(getattr(agent, "cost_usd", 0.0))
            rec = _record(log, key, kid, eid, cost, kid not in skip)
            if book is not None:
                view = episode.agent_view(log, eid, world_loader=loader)
                gen_digests.append(digest(view, book.banned))
            break
        assert rec is not None
        res.records.append(rec)
        last = i + 1 == len(keys)
        if book is not None and (len(gen_digests) >= spec.a3_generation_size or last):
            await asyncio.to_thread(book.reflect, client, gen_digests)
            gen_digests = []
    res.seconds = time.perf_counter() - t0
    return res
