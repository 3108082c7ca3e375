"""Before/after Aim and Recovery of the LLM ladder, against the local fake server.

The agent is the LLM policy of each method (A0–A3, real prompts and parser) calling the fake
OpenAI-compatible server on 127.0.0.1, whose scripted model asks natural questions — the way a
model or a person phrases them ("Which colour would you like?", "How would you like to be
refunded?", "How many bags?") — one per turn, then answers. The same episodes (samples,
persona, seed) run twice: *before*, with the simulated user reading messages by the word-overlap
matcher it used until now (every non-matching message a confused reply), and *after*, with the
interpreter. Aim and Recovery are GRIP's (``core.grip.extract.score_episode``). Hints and
everything else are the current code in both runs, so the difference is the reading alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from core.agents.llm_agent import LLMAgent
from core.construction.pipeline import load_bundled
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.registry import load_world
from core.grip.extract import score_episode
from core.llm import LLMClient, ModelSpec
from core.model.actions import Ask
from core.model.config import ProtocolConfig
from core.model.intent import Intent
from core.protocol.interpret import QuestionAct
from core.protocol.matching import Reading
from tests.fakes.openai_server import FakeOpenAIServer

QUESTIONS: dict[str, tuple[str, ...]] = {
    "webshop": (
        "Which colour would you like?",
        "What's your budget?",
        "Do you need any particular features?",
        "What size do you need?",
        "Anything else I should know?",
    ),
    "tau2_retail": (
        "Could you tell me which order this is about?",
        "Which items would you like to return or exchange?",
        "How would you like to be refunded?",
        "Why would you like to cancel?",
        "What would you like instead?",
        "Anything else before I go ahead?",
    ),
    "tau2_airline": (
        "What's your reservation number?",
        "Which flights would you like?",
        "Which cabin class?",
        "How many bags?",
        "Who is travelling?",
        "How would you like to pay?",
    ),
}
METHODS = ("A0", "A1", "A2", "A3")


def _responder(benchmark: str) -> Any:
    qs = QUESTIONS[benchmark]

    def answer(body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        asked = text.count("Action: Clarify")
        if asked < len(qs):
            return f"Action: Clarify\nContent: {qs[asked]}"
        return "Action: Answer\nFinal Answer: done"

    return answer


def _legacy_read_ask(action: Ask, intent: Intent, world: Any, interpreter: str = "") -> Reading:
    """The reading before the interpreter: word overlap, no open/confirm acts."""
    from bench_interpreter import legacy_read

    act, slots = legacy_read(action.text, intent, world)
    got = tuple(c.slot for c in intent.conditions if c.slot in slots)
    return Reading(
        act=QuestionAct(act="slots", slots=got) if got else QuestionAct(act=act), asked=got
    )


@contextmanager
def _legacy() -> Iterator[None]:
    saved = episode.read_ask
    episode.read_ask = _legacy_read_ask  # type: ignore[assignment]
    try:
        yield
    finally:
        episode.read_ask = saved  # type: ignore[assignment]


def _run(
    benchmark: str, n: int, server: FakeOpenAIServer
) -> list[tuple[str, float | None, float | None]]:
    graphs, samples = load_bundled(benchmark)
    by_id = {g.graph_id: g for g in graphs}
    server.responder = _responder(benchmark)
    client = LLMClient(ModelSpec(model="openai/fake-asker", api_base=server.base_url, timeout_s=10))
    load_world(benchmark)
    out = []
    for method in METHODS:
        for s in samples[:n]:
            log = InMemoryEventLog()
            eid = episode.start(
                log,
                s,
                "dependent",
                0,
                "openai/fake-asker",
                ProtocolConfig(),
                graph=by_id[s.graph_id],
                method=method,
            )
            agent = LLMAgent(method, client, benchmark)
            episode.run(log, eid, agent, max_steps=40)
            rec = score_episode(log.header(eid), log.events(eid))
            out.append((method, rec.aim, rec.recovery))
    return out


def _mean(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return statistics.fmean(vals) if vals else None


def ladder(n: int = 10) -> dict[str, dict[str, tuple[float | None, float | None, int]]]:
    """Return {benchmark: {"before"/"after": (aim, recovery, episodes)}}."""
    res: dict[str, dict[str, tuple[float | None, float | None, int]]] = {}
    with FakeOpenAIServer() as server:
        for b in QUESTIONS:
            with _legacy():
                before = _run(b, n, server)
            after = _run(b, n, server)
            res[b] = {
                k: (_mean([a for _, a, _ in v]), _mean([r for _, _, r in v]), len(v))
                for k, v in (("before", before), ("after", after))
            }
    return res


def ladder_rows(n: int = 10) -> list[dict[str, Any]]:
    """Bench rows: Aim and Recovery after (value) vs before (baseline), per benchmark."""
    rows = []
    for b, r in ladder(n).items():
        for i, metric in enumerate(("Aim", "Recovery")):
            after, before = r["after"][i], r["before"][i]
            rows.append(
                {
                    "name": f"ladder_{metric.lower()}_{b}",
                    "value": round(after, 4) if after is not None else None,
                    "unit": "mean",
                    "baseline": round(before, 4) if before is not None else None,
                    "ratio": round(after / before, 3) if after and before else None,
                    "target": "after ≥ before",
                    "met": None if after is None or before is None else after >= before,
                    "notes": f"LLM ladder A0–A3, {r['after'][2]} episodes per side, persona "
                    "dependent, seed 0, fake server asking natural questions; baseline = the "
                    "word-overlap matcher",
                }
            )
    return rows


if __name__ == "__main__":
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    for row in ladder_rows(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(row)
