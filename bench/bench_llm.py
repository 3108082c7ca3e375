"""Cost of the LLM door: per-call overhead of core.llm over a raw HTTP POST, and cache hits.

Everything runs against the local fake OpenAI-compatible server (127.0.0.1, no network). The
baseline is a raw ``http.client`` POST (keep-alive) to the same server in the same run, so the
difference is what our client adds per call. ``openai/…@API_BASE`` specs take the direct path
(``core.llm.openai_http``); the same client is also measured through litellm
(``DRIFTBENCH_LLM_TRANSPORT=litellm``, the path of every other provider) against a bare
``litellm.completion`` call.
"""

from __future__ import annotations

import asyncio
import functools
import http.client
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from bench.rows import row
from core.llm import LLMClient, ModelSpec, ResponseCache, load_litellm
from core.llm.openai_http import TRANSPORT_ENV
from tests.fakes.openai_server import FakeOpenAIServer

MESSAGES = [
    {"role": "system", "content": "You are a shopping assistant."},
    {"role": "user", "content": "I need red running shoes under 50 dollars, size 42."},
]

_row = functools.partial(row, speedup=True)
"""A row whose ratio is how many times faster than the baseline."""


def _median_ms(fn: Callable[[], Any], reps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _interleaved_medians_ms(fns: list[Callable[[], Any]], reps: int) -> list[float]:
    """Median ms of each function, sampled round-robin so machine drift hits all alike."""
    for fn in fns:
        for _ in range(3):
            fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(reps):
        for index, fn in enumerate(fns):
            started = time.perf_counter()
            fn()
            samples[index].append((time.perf_counter() - started) * 1000)
    return [statistics.median(s) for s in samples]


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Measure raw HTTP and bare litellm vs LLMClient (uncached, cached), and an async fan-out."""
    reps = 30 if quick else 200
    rows: list[dict[str, Any]] = []
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        url = urlparse(server.base_url)
        body = json.dumps({"model": "fake-local", "messages": MESSAGES, "temperature": 0.0})
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)

        def raw_post() -> None:
            conn.request(
                "POST",
                "/v1/chat/completions",
                body=body,
                headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
            )
            json.loads(conn.getresponse().read())

        spec = ModelSpec(model="openai/fake-local", api_base=server.base_url, timeout_s=10)
        plain = LLMClient(spec)
        litellm = load_litellm()

        def bare_litellm() -> None:
            litellm.completion(
                model="openai/fake-local",
                messages=MESSAGES,
                temperature=0.0,
                api_base=server.base_url,
                api_key="x",
                timeout=10,
                num_retries=0,
                max_retries=0,
            )

        def via_litellm() -> None:
            os.environ[TRANSPORT_ENV] = "litellm"
            try:
                plain.complete(MESSAGES)
            finally:
                os.environ.pop(TRANSPORT_ENV, None)

        raw_ms, bare_ms, client_ms, litellm_ms = _interleaved_medians_ms(
            [raw_post, bare_litellm, lambda: plain.complete(MESSAGES), via_litellm], reps
        )
        conn.close()
        overhead = client_ms - raw_ms
        rows.append(
            _row(
                "llm_call_uncached (direct path)",
                client_ms,
                "ms",
                raw_ms,
                "engine overhead over a raw local POST < 15 ms per call",
                overhead < 15.0,
                f"median of {reps}; overhead {overhead:.2f} ms (request body, httpx, parsing, "
                "cost lookup); baseline = raw http.client POST",
            )
        )
        rows.append(
            _row(
                "llm_call_uncached (through litellm)",
                litellm_ms,
                "ms",
                bare_ms,
                "core.llm adds < 1.5 ms over a bare litellm.completion call",
                litellm_ms - bare_ms < 1.5,
                f"median of {reps}; our share: {litellm_ms - bare_ms:.2f} ms (key, stats, "
                f"parsing); the direct path takes {client_ms:.2f} ms, "
                f"{bare_ms / client_ms:.1f}x faster than bare litellm",
            )
        )

        cached = LLMClient(spec, cache=ResponseCache(Path(tmp) / "cache.db"))
        cached.complete(MESSAGES)
        hit_ms = _median_ms(lambda: cached.complete(MESSAGES), reps)
        assert cached.stats.provider_calls == 1, "cache hits must not reach the server"
        rows.append(
            _row(
                "llm_call_cached",
                hit_ms,
                "ms",
                raw_ms,
                "cache hit faster than a raw local HTTP round-trip, < 2 ms",
                hit_ms < 2.0 and hit_ms < raw_ms,
                f"median of {reps}; SQLite WAL lookup + model rebuild, no request sent",
            )
        )

        n = 16 if quick else 64
        server.latency_s = 0.2
        fan = LLMClient(spec)

        async def sweep() -> None:
            await asyncio.gather(
                *(fan.acomplete([{"role": "user", "content": f"q{i}"}]) for i in range(n))
            )

        asyncio.run(sweep())  # warm the async client pool
        started = time.perf_counter()
        asyncio.run(sweep())
        wall = time.perf_counter() - started
        rows.append(
            _row(
                f"llm_async_fanout_{n}x200ms",
                wall,
                "s",
                0.2,
                f"{n} concurrent calls at 200 ms latency finish in < 1.0 s",
                wall < 1.0,
                "baseline = one call's injected latency (perfect concurrency)",
            )
        )
    return rows


if __name__ == "__main__":
    for row in run(quick=True):
        print(row)
