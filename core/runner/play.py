"""Playing episodes: one A3-aware *unit* at a time, in memory, returned as storable records.

Episodes run against an :class:`~core.eventlog.InMemoryEventLog` and come back as plain
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
import json
import time
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core import episode
from core.agents.askbook import AskBook
from core.agents.factory import build_agent
from core.agents.lessons import LessonBook, digest
from core.agents.methods import method_spec, user_voice_for
from core.errors import LLMError
from core.eventlog import InMemoryEventLog
from core.llm.types import ChatModel
from core.model.episode import Outcome
from core.model.events import Repair
from core.model.run import EpisodeKey, RunSpec
from core.runner.plan import SampleSource, entity_words, literal_intent, load_world

_REPAIR_TARGETS = set(typing.get_args(Repair.model_fields["target"].annotation))
ACTION_REPAIRS_RECORDED = "action_format" in _REPAIR_TARGETS
"""Whether the event schema can record parser repairs as ``repair`` events."""


@dataclass
class EpisodeRecord:
    """A finished episode, ready to be written to the store."""

    key: EpisodeKey
    header_json: str
    events_json: list[tuple[int, str, int, str]]
    outcome: str
    summary: dict[str, Any]
    cost_usd: float = 0.0
    write: bool = True


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


def _record(
    log: InMemoryEventLog, key: EpisodeKey, eid: str, cost: float, write: bool
) -> EpisodeRecord:
    header = log.header(eid)
    events = log.events(eid)
    out = log.outcome(eid)
    return EpisodeRecord(
        key=key,
        header_json=header.model_dump_json(),
        events_json=[(e.seq, e.kind, e.turn, e.model_dump_json()) for e in events],
        outcome=out.value if out is not None else Outcome.ERROR.value,
        summary=log.summary(eid),
        cost_usd=cost,
        write=write,
    )


@functools.lru_cache(maxsize=1)
def _personas() -> dict[str, Any]:
    from core.protocol.personas import load_personas

    return dict(load_personas())


def _start(
    log: InMemoryEventLog, key: EpisodeKey, spec: RunSpec, source: SampleSource, attempt: int
) -> tuple[str, Any, Any]:
    sample = source.sample(key.benchmark, key.sample_id)
    graph = source.graph(key.benchmark, sample.graph_id)
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
        episode_id=key.episode_id(attempt),
    )
    return eid, sample, graph


def _costs(spec: RunSpec) -> dict[str, float]:
    return {
        "question": spec.config.cost_question,
        "rejected_proposal": spec.config.cost_rejected_proposal,
    }


def play_symbolic_unit(
    keys: Sequence[EpisodeKey],
    spec: RunSpec,
    source: SampleSource,
    *,
    attempts: dict[str, int] | None = None,
    skip: set[str] | None = None,
) -> UnitResult:
    """Play one unit with the symbolic policies (deterministic).

    Args:
        keys: The unit's keys, in order.
        spec: The run spec.
        source: Samples and graphs.
        attempts: Attempt number per episode key (resume of ERROR/interrupted episodes).
        skip: Keys already finished: replayed for the A3 book, not returned for writing.
    """
    t0 = time.perf_counter()
    attempts = attempts or {}
    skip = skip or set()
    book = AskBook()
    res = UnitResult()
    for key in keys:
        log = InMemoryEventLog()
        world = load_world(key.benchmark)
        eid, sample, graph = _start(log, key, spec, source, attempts.get(key.key(), 0))
        agent = build_agent(
            key.method,
            world=world,
            literal=literal_intent(sample, graph),
            askbook=book,
            costs=_costs(spec),
        )
        if hasattr(agent, "attach"):
            agent.attach(log, eid)
        episode.run(log, eid, agent)
        res.records.append(_record(log, key, eid, 0.0, key.key() not in skip))
    res.seconds = time.perf_counter() - t0
    return res


ClientFactory = Callable[[], ChatModel]


async def _drive_llm(log: InMemoryEventLog, eid: str, agent: Any, *, voice_is_llm: bool) -> None:
    """The async twin of :func:`core.episode.run` (bind truth, act, step until the end)."""
    if hasattr(agent, "bind_truth"):
        agent.bind_truth(episode.truth(log, eid))
    for _ in range(10_000):
        view = episode.agent_view(log, eid)
        if view.ended or view.awaiting_user:
            break
        if hasattr(agent, "aact"):
            action = await agent.aact(view)
        else:
            action = agent.act(view)
        if voice_is_llm:
            await asyncio.to_thread(episode.step, log, eid, action)
        else:
            episode.step(log, eid, action)
        if ACTION_REPAIRS_RECORDED and hasattr(agent, "pop_repairs"):
            agent.pop_repairs()  # recorded by the engine once the schema allows it
    view = episode.agent_view(log, eid)
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
) -> UnitResult:
    """Play one unit with LLM policies (A3 reflects between generations).

    Provider errors (:class:`LLMError`) retry the episode with backoff; after
    ``max_attempts`` the episode is recorded as ERROR (a later resume retries it).
    """
    t0 = time.perf_counter()
    attempts = attempts or {}
    skip = skip or set()
    res = UnitResult()
    book: LessonBook | None = None
    gen_digests: list[dict[str, Any]] = []
    voice_is_llm = spec.user_voice not in ("template", "mute", "human")
    for i, key in enumerate(keys):
        world = load_world(key.benchmark)
        m = method_spec(key.method)
        if m.self_evolving and book is None:
            sample0 = source.sample(key.benchmark, key.sample_id)
            graph0 = source.graph(key.benchmark, sample0.graph_id)
            banned = entity_words(graph0, sample0) | {t.name for t in world.tools()}
            book = LessonBook(banned_words=banned)
        rec: EpisodeRecord | None = None
        for attempt in range(max_attempts):
            log = InMemoryEventLog()
            eid, sample, graph = _start(log, key, spec, source, attempts.get(key.key(), 0))
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
                await _drive_llm(log, eid, agent, voice_is_llm=voice_is_llm)
            except LLMError as exc:
                if exc.retryable and attempt + 1 < max_attempts:
                    await asyncio.sleep(backoff_s * (2**attempt))
                    continue
                episode.run(log, eid, _Raiser(exc))
            cost = float(getattr(agent, "cost_usd", 0.0))
            rec = _record(log, key, eid, cost, key.key() not in skip)
            if book is not None:
                view = episode.agent_view(log, eid)
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


def record_to_json(rec: EpisodeRecord) -> str:
    """Serialise a record (for process / Ray transport)."""
    return json.dumps(
        {
            "key": rec.key.model_dump(),
            "header": rec.header_json,
            "events": rec.events_json,
            "outcome": rec.outcome,
            "summary": rec.summary,
            "cost_usd": rec.cost_usd,
            "write": rec.write,
        }
    )


def record_from_json(text: str) -> EpisodeRecord:
    """Inverse of :func:`record_to_json`."""
    d = json.loads(text)
    return EpisodeRecord(
        key=EpisodeKey.model_validate(d["key"]),
        header_json=d["header"],
        events_json=[tuple(x) for x in d["events"]],
        outcome=d["outcome"],
        summary=d["summary"],
        cost_usd=d["cost_usd"],
        write=d["write"],
    )
