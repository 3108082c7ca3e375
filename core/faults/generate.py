"""Generate-then-verify: write a request for a plan, run the three steps, build the Sample."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.errors import LLMError
from core.faults.extract import Extraction, ExtractionContext, Extractor
from core.faults.plan import FaultPlan, combined_readings, hidden_slots, mask_for
from core.faults.verify import StepResult, admit, check_contract, check_extractions, check_strings
from core.faults.writer import Writer, Written
from core.graph.hosts.base import HostAdapter
from core.model.base import content_hash
from core.model.intent import Intent, IntentGraph
from core.model.sample import FaultType, Sample, VerifierRecord

ATTEMPTS_DEFAULT = 4
ATTEMPTS_HARD = 8
HARD_TYPES = frozenset(
    {FaultType.FACTUAL_ERROR, FaultType.LEXICAL_AMBIGUITY, FaultType.SYNTACTIC_AMBIGUITY}
)


@dataclass
class GenStats:
    """Counters of generate-then-verify."""

    candidates: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    samples: int = 0
    by_fault_type: Counter[str] = field(default_factory=Counter)
    candidates_by_type: Counter[str] = field(default_factory=Counter)
    rejected_by_type: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    llm_failures: int = 0
    plans_refused: int = 0

    def merge(self, other: GenStats) -> None:
        """Add another counter set into this one."""
        self.candidates += other.candidates
        self.samples += other.samples
        self.llm_failures += other.llm_failures
        self.plans_refused += other.plans_refused
        for a, b in (
            (self.rejected, other.rejected),
            (self.by_fault_type, other.by_fault_type),
            (self.candidates_by_type, other.candidates_by_type),
            (self.rejected_by_type, other.rejected_by_type),
            (self.reasons, other.reasons),
        ):
            a.update(b)


def extraction_context(adapter: HostAdapter, graph: IntentGraph) -> ExtractionContext:
    """Host vocabulary for extractors (slot alternatives and candidate extras)."""
    root = graph.root
    assert root.ground_truth is not None
    return ExtractionContext(
        alternatives={c.slot: adapter.domain(root, c.slot) for c in root.conditions},
        extra_pool=adapter.extra_candidates(root, root.ground_truth),
    )


def _type_key(plans: Sequence[FaultPlan]) -> str:
    return "+".join(p.fault.value for p in plans)


def generate_sample(
    adapter: HostAdapter,
    graph: IntentGraph,
    plan_options: Sequence[Sequence[FaultPlan]],
    *,
    writer: Writer,
    extractors: tuple[Extractor, Extractor],
    rng: random.Random,
    attempts: int,
    stats: GenStats,
    ctx: ExtractionContext | None = None,
    frugal: bool = False,
    budget: CandidateBudget | None = None,
) -> Sample | None:
    """Try up to ``attempts`` (plan, variant) pairs until one passes all three steps.

    With ``frugal`` (language-model writers and extractors) the free checks run before the
    paid calls: admission (step 3, which depends on the plans only) before the text is
    written, the string checks (step 2) before the extractors, and the second extractor only
    when the first one honours the contract; a writer or extractor that fails
    (:class:`~core.errors.LLMError`) rejects that candidate (``llm:`` reasons, counted in
    ``llm_failures``) and the next attempt goes on. ``budget`` caps the candidates of the
    whole graph.

    Args:
        adapter: Host hooks.
        graph: The intent graph (its root is the hidden intent).
        plan_options: Alternative plan tuples (one tuple = all components of one request).
        writer: Renders the text.
        extractors: The two independent extractors.
        rng: Random stream (variant choices).
        attempts: Maximum texts to write.
        stats: Counters to update (candidates, rejections per step).
        ctx: Extraction context (computed when omitted).
        frugal: Free checks first, failures tolerated (see above).
        budget: The graph's remaining candidate allowance (None: unbounded).

    Returns:
        The verified sample, or None when every attempt was rejected.
    """
    if not plan_options:
        return None
    root = graph.root
    truth = root.ground_truth
    assert truth is not None
    ctx = ctx or extraction_context(adapter, graph)
    base = rng.randrange(1 << 16)  # surface strategy offset: requests do not all open alike
    for attempt in range(attempts):
        plans = list(plan_options[attempt % len(plan_options)])
        key = _type_key(plans)
        if budget is not None and not budget.take():
            stats.reasons["budget:candidate allowance of the graph spent"] += 1
            return None
        if frugal:
            found = _frugal_attempt(
                adapter, root, plans, key, writer, extractors, rng, base + attempt, stats, ctx
            )
            if found is None:
                continue
            written, s3, e1, e2 = found
        else:
            written = writer.write(adapter, root, plans, variant=base + attempt, rng=rng)
            stats.candidates += 1
            stats.candidates_by_type[key] += 1
            # extractors answer the whole questionnaire: they are never told the planned fault
            questionnaire = list(FaultType)
            e1 = extractors[0].extract(written.text, adapter, root, questionnaire, ctx)
            e2 = extractors[1].extract(written.text, adapter, root, questionnaire, ctx)
            s1 = check_extractions(plans, e1, e2)
            if not s1.ok:
                _reject(stats, "1", key, f"1:{key}:{s1.reason[:80]}")
                continue
            s2 = check_strings(written.text, adapter, root, plans, written.surfaces)
            if not s2.ok:
                _reject(stats, "2", key, f"2:{s2.reason[:70]}")
                continue
            s3 = admit(adapter, root, truth, plans)
        if not s3.ok:
            stats.rejected["3"] += 1
            stats.rejected_by_type[key] += 1
            stats.reasons[f"3:{s3.reason[:70]}"] += 1
            continue
        mask = mask_for(root, plans, written.surfaces)
        comps = s3.signature["components"]
        admission = "; ".join(
            f"{k.split(':', 1)[1]}={v['rule']}:{'/'.join(v['relations'])}" for k, v in comps.items()
        )
        sample = Sample(
            sample_id=Sample.make_id(graph.graph_id, written.text, mask),
            benchmark=graph.benchmark,
            graph_id=graph.graph_id,
            env_id=graph.env_id,
            root_intent_id=root.intent_id,
            query=written.text,
            faults=tuple(p.fault for p in plans),
            mask=mask,
            hidden_slots=hidden_slots(mask),
            literal_readings=tuple(combined_readings(root, plans)),
            root_ground_truth=truth,
            verifier=VerifierRecord(
                passed=True,
                attempts=attempt + 1,
                extraction_agreed=True,
                strings_ok=True,
                admission=admission,
                extractors=(extractors[0].name, extractors[1].name),
                writer=writer.name,
            ),
            source="built",
        )
        stats.samples += 1
        stats.by_fault_type[key] += 1
        return sample
    return None


def _reject(stats: GenStats, step: str, key: str, reason: str) -> None:
    stats.rejected[step] += 1
    stats.rejected_by_type[key] += 1
    stats.reasons[reason] += 1


def _frugal_attempt(
    adapter: HostAdapter,
    root: Intent,
    plans: list[FaultPlan],
    key: str,
    writer: Writer,
    extractors: tuple[Extractor, Extractor],
    rng: random.Random,
    variant: int,
    stats: GenStats,
    ctx: ExtractionContext,
) -> tuple[Written, StepResult, Extraction, Extraction] | None:
    """One candidate, free checks first; None when it was rejected (and counted)."""
    truth = root.ground_truth
    assert truth is not None
    s3 = admit(adapter, root, truth, plans)  # depends on the plans only: no text needed
    if not s3.ok:
        stats.reasons[f"3:{s3.reason[:70]}"] += 1
        stats.plans_refused += 1
        return None
    stats.candidates += 1
    stats.candidates_by_type[key] += 1
    try:
        written = writer.write(adapter, root, plans, variant=variant, rng=rng)
    except LLMError as exc:
        stats.llm_failures += 1
        _reject(stats, "1", key, f"llm:writer:{str(exc)[:60]}")
        return None
    s2 = check_strings(written.text, adapter, root, plans, written.surfaces)
    if not s2.ok:
        _reject(stats, "2", key, f"2:{s2.reason[:70]}")
        return None
    questionnaire = list(FaultType)
    try:
        e1 = extractors[0].extract(written.text, adapter, root, questionnaire, ctx)
        why = check_contract(e1, plans)
        if why is not None:
            _reject(stats, "1", key, f"1:{key}:{why[:80]}")
            return None
        e2 = extractors[1].extract(written.text, adapter, root, questionnaire, ctx)
    except LLMError as exc:
        stats.llm_failures += 1
        _reject(stats, "1", key, f"llm:extractor:{str(exc)[:60]}")
        return None
    s1 = check_extractions(plans, e1, e2)
    if not s1.ok:
        _reject(stats, "1", key, f"1:{key}:{s1.reason[:80]}")
        return None
    return written, s3, e1, e2


class CandidateBudget:
    """A graph's allowance of candidates (thread-safe: one graph is built on one thread)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self) -> bool:
        """Spend one candidate; False once the allowance is spent."""
        if self.used >= self.limit:
            return False
        self.used += 1
        return True


def attempts_for(faults: Sequence[FaultType]) -> int:
    """Attempt budget: 8 for factual error / lexical / syntactic, else 4 (composites: 5)."""
    if len(faults) > 1:
        return 5
    return ATTEMPTS_HARD if faults[0] in HARD_TYPES else ATTEMPTS_DEFAULT


def sub_seed(seed: int, *parts: str) -> int:
    """Derive a stream seed from (seed, parts) via a content hash."""
    return int(content_hash([seed, list(parts)], 12), 16)
