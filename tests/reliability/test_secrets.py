"""API keys never reach the store file, logs or exports.

Keys are set in the environment for the test only. An LLM sweep runs against the fake server
(once with the default client, which sends the provider's usual key variable to a custom
``api_base``; once with ``api_key_env``), including a provider that echoes the key back in its
error message, as some do — with a plain CLI-style spec that names no ``api_key_env``, so the
redaction must cover every key the process knows. Then the store's bytes (db + WAL + shm),
every log record, the process output, ``driftbench export`` in JSONL and CSV,
``runs``/``doctor`` JSON and every file under ``DRIFTBENCH_HOME`` are searched for the key.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.cli import main
from core.llm import ModelSpec, make_client
from core.model.run import RunOptions
from core.runner import run_sweep
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.reliability.conftest import good_reply, llm_spec

KEY = "sk-test-" + secrets.token_hex(20)
ENV_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DRIFTBENCH_TEST_KEY")


class _EchoKeyHandler(BaseHTTPRequestHandler):
    """A provider that rejects every call and quotes the Authorization header back."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        body = json.dumps(
            {"error": {"message": f"Incorrect API key provided: {auth}", "type": "invalid_key"}}
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def echo_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _EchoKeyHandler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture
def keys_in_env(monkeypatch: pytest.MonkeyPatch) -> str:
    for name in ENV_KEYS:
        monkeypatch.setenv(name, KEY)
    return KEY


def _cli(store: Path, *argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(store), *argv])
    return rc, out.getvalue() + err.getvalue()


def _store_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))


def _assert_absent(key: str, where: str, data: bytes | str) -> None:
    raw = data.encode() if isinstance(data, str) else data
    for needle in (key, key[8:], key[-16:]):  # the key, its secret part, a tail fragment
        assert needle.encode() not in raw, f"API key found in {where}"


def test_api_keys_never_reach_store_logs_or_exports(
    tmp_path: Path,
    keys_in_env: str,
    fake_llm_server: FakeOpenAIServer,
    echo_server: str,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = keys_in_env
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    path = home / "driftbench.db"
    store = Store.open(path)
    caplog.set_level(logging.DEBUG)
    opts = RunOptions(concurrency=2, progress=False, retry_backoff_s=0, max_attempts=1)

    # 1. the default client: openai/…@API_BASE sends the provider's usual key variable
    server = fake_llm_server
    server.responder = good_reply
    server.script([Fault.http(500), Fault.empty()])
    spec = llm_spec(server.base_url, methods=("B0", "A2"), limit=2)
    first = run_sweep(store, spec, opts)
    assert first.completed + first.errors == 4
    assert all(h.get("authorization") == f"Bearer {key}" for h in server.headers)

    # 2. api_key_env: the key is sent (the provider sees it) but is stored nowhere
    spec2 = llm_spec(server.base_url, methods=("B0",), limit=2).model_copy(update={"name": "k"})
    client = make_client(
        ModelSpec.parse(spec2.agent, api_key_env="OPENAI_API_KEY"), cache_path=path
    )
    client.read_cache = False  # step 1 cached these very requests; ask the provider again
    n = len(server.headers)
    run_sweep(store, spec2, opts, client=client)
    assert any(key in h.get("authorization", "") for h in server.headers[n:]), "key not used"

    # 3. a provider that quotes the key back in its error message (no api_key_env named)
    spec3 = llm_spec(echo_server, methods=("B0",), limit=1).model_copy(update={"name": "echo"})
    client3 = make_client(ModelSpec.parse(spec3.agent, max_retries=0), cache_path=path)
    third = run_sweep(store, spec3, opts, client=client3)
    assert third.errors == 1
    (row,) = store.episode_rows(run_id=spec3.run_id())
    error = json.loads(store.event_jsons(row["episode_id"])[-1])["error"]
    assert "401" in error or "key" in error.lower()

    outputs: dict[str, str] = {}
    for run in (first.run, "k", "echo"):
        for fmt in ("jsonl", "csv"):
            out = tmp_path / f"{run}.{fmt}"
            rc, text = _cli(path, "export", run, "--format", fmt, "--out", str(out))
            assert rc == 0, text
            outputs[f"export {run} {fmt}"] = out.read_text()
            rc, text = _cli(path, "export", run, "--format", fmt)
            outputs[f"export {run} {fmt} (stdout)"] = text
    for argv in (("runs", "--json"), ("doctor", "--json")):
        rc, text = _cli(path, *argv)
        assert rc == 0
        outputs[" ".join(argv)] = text
    assert "openai" in json.loads(outputs["doctor --json"])["providers"]  # names only …
    store.close()

    for where, text in outputs.items():
        _assert_absent(key, where, text)
    _assert_absent(key, "store file (db + wal + shm)", _store_bytes(path))
    for p in home.rglob("*"):
        if p.is_file():
            _assert_absent(key, str(p), p.read_bytes())
    _assert_absent(key, "log records", "\n".join(r.getMessage() for r in caplog.records))
    _assert_absent(key, "log records (args)", "\n".join(repr(r.args) for r in caplog.records))
    captured = capfd.readouterr()
    _assert_absent(key, "stdout/stderr", captured.out + captured.err)
