"""Provider replies: capped at the read, believable usage, and --max-cost reserved before a call.

* a 400 MB reply body is refused at the transport's read after 8 MiB (peak RSS asserted in a
  subprocess under a memory limit) — before: read whole;
* a reply claiming 10^30 tokens is a provider fault (episode ERROR, LLM error), never the
  agent's failure and never an infinite cost;
* ``--max-cost`` with 32 concurrent episodes overshoots by at most one call's estimate —
  before: 13× the cap.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from core.llm.budget import CostBudget, estimate_usd, spend_limit
from core.model.run import RunOptions, RunSpec
from core.runner import run_sweep
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.reliability.conftest import good_reply

BIG = 400 * 1024**2


class _Endless(BaseHTTPRequestHandler):
    """Answers every POST with a 400 MB JSON body, streamed (the server never holds it)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        chunked = self.path.endswith("chunked")
        if not chunked:
            self.send_header("content-length", str(BIG))
        self.end_headers()
        block = b'{"choices": [{"message": {"content": "' + b"x" * (1 << 20)
        try:
            sent = 0
            while sent < BIG:
                self.wfile.write(block)
                sent += len(block)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def endless() -> Any:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


LIMITED = textwrap.dedent(
    """
    import asyncio, json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024**2, 1536 * 1024**2))
    from core.llm import openai_http
    from core.llm.openai_http import Endpoint, ProviderBadReply
    where = Endpoint(sys.argv[1], {"content-type": "application/json"}, 60.0)
    nowhere = Endpoint("http://127.0.0.1:9/v1/chat/completions", {}, 5.0)
    for warm in (lambda: openai_http.post(nowhere, b"{}"),
                 lambda: asyncio.run(openai_http.apost(nowhere, b"{}"))):
        try:  # load every module either path needs, so the baseline includes them
            warm()
        except Exception:
            pass
    out = {"base_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    for name, call in (
        ("sync", lambda: openai_http.post(where, b"{}")),
        ("async", lambda: asyncio.run(openai_http.apost(where, b"{}"))),
    ):
        try:
            call()
            out[name] = "read whole"
        except ProviderBadReply as exc:
            out[name] = str(exc)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/chat/completions/chunked"])
def test_a_400MB_reply_is_refused_at_the_read_with_flat_memory(endless: str, path: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", LIMITED, endless + path],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("sync", "async"):
        assert "larger than 8,388,608 bytes" in got[name], got
    assert got["peak_mb"] - got["base_mb"] < 100, got  # the 400 MB body is never held


# -- usage -----------------------------------------------------------------------------------------
def test_a_reply_claiming_1e30_tokens_is_a_provider_fault(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    fake_llm_server.responder = lambda body: Reply(
        text=good_reply(body), prompt_tokens=10**30, completion_tokens=5
    )
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=(0,),
        limit=1,
        agent=f"openai/gpt-4o-mini@{fake_llm_server.base_url}",
    )
    result = run_sweep(store, spec, RunOptions(workers=1, progress=False, max_attempts=1))
    assert result.errors == 1 and result.completed == 0
    (row,) = store.episode_rows(run_id=result.run_id)
    assert row["outcome"] == "ERROR"
    assert row["summary"]["reason"] == "llm_error", row["summary"]
    assert "usage claims" in row["summary"]["error"]
    raw = (tmp_path / "s.db").read_bytes()
    assert b"Infinity" not in raw and b"1000000000000000000000000000000" not in raw


# -- cost reservation ----------------------------------------------------------------------------
def test_concurrent_calls_cannot_overshoot_the_limit_by_more_than_one_estimate() -> None:
    budget = CostBudget(0.01)
    started = []
    estimate = 0.004
    lock = threading.Lock()

    def call() -> None:
        from core.llm.budget import BudgetExhausted

        try:
            amount = budget.reserve(estimate)
        except BudgetExhausted:
            return
        with lock:
            started.append(amount)
        budget.settle(amount, estimate)

    threads = [threading.Thread(target=call) for _ in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert budget.spent_usd <= 0.01 + estimate + 1e-12
    assert budget.reserved_usd == pytest.approx(0.0)


def test_max_cost_with_32_concurrent_episodes_stops_within_one_call(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    fake_llm_server.latency_s = 0.05
    fake_llm_server.responder = lambda body: Reply(text=good_reply(body))
    store = Store.open(tmp_path / "s.db")
    spec = RunSpec(
        benchmarks=("mock",),
        methods=("B0",),
        personas=("rational",),
        seeds=tuple(range(8)),
        agent=f"openai/gpt-4o-mini@{fake_llm_server.base_url}",
    )
    cap = 0.0001
    options = RunOptions(
        workers=1, concurrency=32, max_cost_usd=cap, progress=False, max_attempts=1
    )
    result = run_sweep(store, spec, options)
    assert result.status == "budget_exceeded", result
    from core.llm.openai_http import price

    biggest = max(len(json.dumps(r["messages"])) for r in fake_llm_server.requests)
    one_call = estimate_usd([{"content": "x" * biggest}], None, price("openai/gpt-4o-mini"))
    assert one_call > 0
    assert result.cost_usd <= cap + one_call, (result.cost_usd, cap, one_call)
    from core.cli.cmd_run import run_exit_code

    assert run_exit_code(result.status, result.completed, result.errors) == 3


def test_no_budget_no_reservation() -> None:
    with spend_limit(None):
        from core.llm.budget import reserve

        claim = reserve([{"content": "hi"}], 10, (1.0, 1.0))
        assert claim.budget is None
