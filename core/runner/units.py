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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.agents.askbook import AskBook
from core.agents.base import Agent
from core.agents.factory import build_agent
from core.agents.lessons import LessonBook, credit_labels, digest
from core.agents.llm_agent import LLMAgent
from core.agents.methods import method_spec, user_voice_for
from core.construction.worlds import WorldLoader
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.errors import LLMError
from core.llm.budget import BudgetExhausted
from core.llm.client import ProviderUnavailable
from core.llm.ledger import CostLedger, as_role, recording
from core.llm.types import ChatModel
from core.model.cache import LockedLRU
from core.model.episode import Outcome
from core.model.intent import IntentGraph
from core.model.persona import Persona
from core.model.run import EpisodeKey, RunSpec
from core.model.sample import Sample
from core.runner.inflight import BOARD, TrackedLog
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
        cost_by_role: The episode's cost ledger (every attempt of this call, every role:
            agent, voice, interpreter, reflection …), as :meth:`CostLedger.to_dict`.
        halt: Why the sweep must stop after this episode (the provider is unavailable);
            empty otherwise.
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
    cost_by_role: dict[str, dict[str, Any]] = field(default_factory=dict)
    halt: str = ""

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
            self.cost_by_role,
            self.halt,
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
def _personas() -> Mapping[str, Persona]:
    """The persona files, read once per process (read-only)."""
    from core.protocol.personas import load_personas

    return MappingProxyType(load_personas())


def _open(
    log: InMemoryEventLog,
    key: EpisodeKey,
    kid: str,
    spec: RunSpec,
    source: SampleSource,
    attempt: int,
    lesson_book: dict[str, Any] | None = None,
    **agent_kw: Any,
) -> tuple[str, Sample, IntentGraph, Agent, WorldLoader]:
    """Start the episode of ``key`` on its sample's own world and build its agent.

    ``agent_kw`` are the agent's books, client and costs. Returns the episode id, the sample,
    its graph, the agent and the loader of the sample's world (for every later call).
    """
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
        lesson_book=lesson_book,
    )
    world = loader(key.benchmark)
    agent = build_agent(key.method, world=world, literal=literal_intent(sample, graph), **agent_kw)
    if spec.action_format is not None and isinstance(agent, LLMAgent):
        agent.action_format = spec.action_format
    if spec.base_prompt is not None and isinstance(agent, LLMAgent):
        agent.base_prompt = spec.base_prompt
    return eid, sample, graph, agent, loader


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
    size = spec.a3_generation_size
    res = UnitResult()
    in_gen = 0
    for key, kid in zip(keys, kids, strict=True):
        log = InMemoryEventLog()
        attempt = attempts.get(kid, 0)
        evolving = method_spec(key.method).self_evolving
        eid, _, _, agent, loader = _open(
            log,
            key,
            kid,
            spec,
            source,
            attempt,
            lesson_book=book.event(size) if evolving else None,
            askbook=book,
            costs=costs,
        )
        spent = CostLedger()  # an LLM voice or interpreter beside a symbolic agent
        with recording(spent):
            episode.run(log, eid, agent, world_loader=loader)
        rec = _record(log, key, kid, eid, spent.total_usd, kid not in skip)
        if spent:
            rec.cost_by_role = spent.to_dict()
        res.records.append(rec)
        if evolving:
            in_gen += 1
            if in_gen >= size:  # a generation ends: its episodes' counts enter the book
                book.commit()
                in_gen = 0
    res.seconds = time.perf_counter() - t0
    return res


def reflector(client: ChatModel) -> ChatModel:
    """The model A3 reflects with: the models file's ``reflection`` entry, else the agent's.

    The run installs its recorded settings as the models file (:func:`core.llm.models.
    run_config`), so a resumed run reflects with the same model and settings.
    """
    from core.llm.models import role_entry

    entry = role_entry("reflection")
    # the agent's client is any ChatModel: only a configured model's carries a spec / cache
    if entry is None or entry.label == getattr(getattr(client, "spec", None), "label", None):
        return client
    from core.llm import make_client

    cache = getattr(client, "cache", None)  # a scripted ChatModel has no response cache
    key = (entry.model_dump_json(), str(getattr(cache, "path", "")))
    found = _REFLECTORS.get(key)
    if found is None:
        found = make_client(entry, cache_path=getattr(cache, "path", None), role="reflection")
        _REFLECTORS.put(key, found)
    return found


_REFLECTORS: LockedLRU[tuple[str, str], ChatModel] = LockedLRU(8)
"""The reflection entry (and cache) → its client, shared by a sweep's episodes."""


def _reflect(
    book: LessonBook, client: ChatModel, digests: list[dict[str, Any]], into: CostLedger
) -> None:
    """A3's reflection on a thread, its calls attributed to the ``reflection`` role."""
    with recording(into), as_role("reflection"):
        book.reflect(reflector(client), digests)


def _charge(rec: EpisodeRecord, extra: CostLedger) -> None:
    """Add a ledger (the reflection after a generation) to the episode that closed it."""
    if not extra:
        return
    merged = CostLedger()
    merged.merge(rec.cost_by_role)
    merged.merge(extra)
    rec.cost_by_role = merged.to_dict()
    rec.cost_usd += extra.total_usd


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

    Each episode is one async drive (:class:`core.engine.driver.Drive`); with an LLM user
    voice its steps run in a thread (each makes a blocking model call). An agent failure ends
    the episode through the driver's abort (AGENT_ERROR, or LLM_ERROR for a provider error);
    a retryable provider error plays the episode again from scratch with backoff, and after
    ``max_attempts`` the LLM_ERROR ending is what is recorded (a later resume retries it).
    """
    t0 = time.perf_counter()
    attempts = attempts or {}
    skip = skip or set()
    kids = list(key_ids) if key_ids is not None else [key_id(k) for k in keys]
    res = UnitResult()
    book: LessonBook | None = None
    voice_is_llm = spec.user_voice not in ("template", "mute", "human")
    size = spec.a3_generation_size
    seen = 0
    halted = ""

    async def play(key: EpisodeKey, kid: str, book_fields: dict[str, Any] | None) -> Any:
        nonlocal halted
        rec: EpisodeRecord | None = None
        dig: dict[str, Any] | None = None
        spent = CostLedger()
        for attempt in range(max_attempts):
            log = TrackedLog(key.run_id)  # visible on the Runs page while it plays
            with recording(spent):
                eid, sample, graph, agent, loader = _open(
                    log,
                    key,
                    kid,
                    spec,
                    source,
                    attempts.get(kid, 0),
                    lesson_book=book_fields,
                    client=client,
                    lessons=book,
                )
                drive = episode.Drive(
                    log, eid, agent, world_loader=loader, offload_steps=voice_is_llm
                )
                await drive.arun()
            exc = drive.failure
            if isinstance(exc, ProviderUnavailable | BudgetExhausted):
                halted = str(exc)
            elif isinstance(exc, LLMError) and exc.retryable and attempt + 1 < max_attempts:
                await asyncio.sleep(backoff_s * (2**attempt))
                continue
            BOARD.drop(eid)
            cost = spent.total_usd if spent else agent.cost_usd
            rec = _record(log, key, kid, eid, cost, kid not in skip)
            rec.cost_by_role, rec.halt = spent.to_dict(), halted
            if book is not None:
                view = episode.agent_view(log, eid, world_loader=loader)
                world = loader(key.benchmark)
                dig = digest(
                    view,
                    book.banned,
                    credit=credit_labels(log.events(eid)),
                    is_proposal=world.is_proposal_action,
                )
            break
        assert rec is not None
        return rec, dig

    i = 0
    while i < len(keys) and not halted:  # a halted provider: the rest waits for a resume
        key = keys[i]
        m = method_spec(key.method)
        if not m.self_evolving:
            rec, _ = await play(key, kids[i], None)
            res.records.append(rec)
            i += 1
            continue
        # one A3 generation: its episodes play concurrently against the same book
        gen = list(zip(keys[i : i + size], kids[i : i + size], strict=True))
        for gkey, _ in gen:
            sample0 = source.sample(gkey.benchmark, gkey.sample_id)
            graph0 = source.graph(gkey.benchmark, sample0.graph_id)
            if book is None:
                world0 = source.world(sample0)
                banned = entity_words(graph0, sample0) | {t.name for t in world0.tools()}
                book = LessonBook(banned_words=banned)
            book.banned |= entity_words(graph0, sample0)
            book.add_seen([sample0.query])
        assert book is not None
        fields = book.event(size, seen)
        got = await asyncio.gather(*(play(gkey, gkid, fields) for gkey, gkid in gen))
        res.records.extend(rec for rec, _ in got)
        seen += len(gen)
        if not halted:  # the reflection is charged to the episode that closed the generation
            reflected = CostLedger()
            digests = [d for _, d in got if d is not None]
            await asyncio.to_thread(_reflect, book, client, digests, reflected)
            _charge(got[-1][0], reflected)
        i += len(gen)
    res.seconds = time.perf_counter() - t0
    return res
