"""A relay model for measuring LLM construction: real calls, answers as good as the offline ones.

To measure what ``build samples`` costs with a language-model writer and extractors — calls,
tokens and concurrency through the real client, HTTP and the fake OpenAI-compatible server —
without a model's quality deciding the count, each relay makes its real call (the fake
server's latency, the cost ledger, the response cache) and then returns what the offline
writer or extractor returns for the same plan and text. Calls per admitted sample therefore
measure the pipeline's frugality, and wall time its concurrency.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.faults.align import AlignmentExtractor
from core.faults.extract import Extraction, RuleExtractor
from core.faults.llm import LLMExtractor, LLMWriter
from core.faults.writer import TemplateWriter, Written


class RelayWriter(LLMWriter):
    """Calls the model, then writes what the template writer writes for the plan."""

    def __init__(self, spec: str) -> None:
        super().__init__(spec, temperature=0.0)
        self._template = TemplateWriter()

    def write(self, *args: Any, **kwargs: Any) -> Written:
        """Make the real call, then return the template writer's text (the writer protocol's
        arguments, passed through)."""
        super().write(*args, **kwargs)
        return self._template.write(*args, **kwargs)


class RelayExtractor(LLMExtractor):
    """Calls the model, then reads the text as an offline extractor does."""

    def __init__(self, spec: str, offline: str) -> None:
        super().__init__(spec)
        self._offline: Any = RuleExtractor(spec) if offline == "rule" else AlignmentExtractor(spec)

    def extract(self, *args: Any, **kwargs: Any) -> Extraction:
        """Make the real call, then return the offline extractor's reading (the extractor
        protocol's arguments, passed through)."""
        super().extract(*args, **kwargs)
        got: Extraction = self._offline.extract(*args, **kwargs)
        return got


def relay_build(
    world: Any, graphs: Sequence[Any], base_url: str, *, concurrency: int, per_graph: int = 1
) -> dict[str, Any]:
    """Build k=1 samples with relay writer and extractors; return counts, tokens and time."""
    import time

    import core.construction.pipeline as cons
    from core.llm.ledger import CostLedger, recording
    from core.llm.models import LLMConfig, current_config, use_config

    before = current_config()
    use_config(LLMConfig(no_cache=True))  # every call reaches the server: nothing is replayed
    writer = RelayWriter(f"openai/relay-writer@{base_url}")
    extractors = (
        RelayExtractor(f"openai/relay-rule@{base_url}", "rule"),
        RelayExtractor(f"openai/relay-align@{base_url}", "align"),
    )

    for relay in (writer, *extractors):
        relay.client.warm()  # type: ignore[attr-defined]  # litellm's price map, loaded once
    made = iter(extractors)
    original = cons.make_extractor
    cons.make_extractor = lambda spec, index=0: next(made)  # type: ignore[assignment]
    spent, t0 = CostLedger(), time.perf_counter()
    try:
        with recording(spent):
            samples, stats = cons.build_samples(
                world,
                graphs,
                writer=writer.name,
                extractors=(extractors[0].name, extractors[1].name),
                per_graph=per_graph,
                writer_instance=writer,
                concurrency=concurrency,
            )
    finally:
        cons.make_extractor = original
        use_config(before)
    seconds = time.perf_counter() - t0
    rows = spent.to_dict()
    calls = sum(int(r["provider_calls"]) for r in rows.values())
    busy = sum(float(r["seconds"]) for r in rows.values())
    return {
        "samples": len(samples),
        "candidates": stats["candidates"],
        "calls": calls,
        "calls_per_sample": calls / len(samples) if samples else None,
        "seconds": seconds,
        "busy_seconds": busy,
        "stats": stats,
    }
