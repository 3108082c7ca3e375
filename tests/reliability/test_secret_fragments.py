"""Key fragments and key-shaped strings never reach the store, logs or exports (issue 32, item 2).

Before: a provider error echoing ``sk-test-SECR...ETKEY-abcdef…XYZ`` was stored and exported;
only whole keys were redacted. Now any fragment of 8 or more characters of a known key, and
anything shaped like a provider key (``sk-…``, ``Bearer …``), is masked by the one function
(:func:`core.model.redaction.redact`) that the store, exports, logs and the CLI all use.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from core.llm import ModelSpec, make_client
from core.model.redaction import install_log_redaction, redact
from core.model.run import RunOptions
from core.runner import run_sweep
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.reliability.conftest import good_reply, llm_spec
from tests.reliability.test_secrets import _cli, _store_bytes

KEY = "sk-test-" + secrets.token_hex(16) + "-XYZ"
UNKNOWN = "sk-proj-" + secrets.token_hex(18)  # shaped like a key, in no variable
BEARER = "tok" + secrets.token_hex(12)


def _fragments(text: str | bytes, key: str) -> list[str]:
    """Every substring of ``key`` of 8+ characters found in ``text``."""
    hay = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return sorted({key[i : i + 8] for i in range(len(key) - 7) if key[i : i + 8] in hay})


class _HalfMasked(BaseHTTPRequestHandler):
    """A provider that refuses and quotes the key back half-masked (as real providers do)."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        return

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        sent = self.headers.get("Authorization", "").removeprefix("Bearer ")
        shown = f"{sent[:12]}...{sent[20:32]}…{sent[-3:]}"
        body = json.dumps(
            {"error": {"message": f"Incorrect API key provided: {shown}. Header: {sent[5:40]}"}}
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def half_masked() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HalfMasked)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_fragments_and_shapes_never_reach_store_exports_or_logs(
    tmp_path: Path,
    half_masked: str,
    fake_llm_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("DRIFTBENCH_HOME", str(home))
    path = home / "driftbench.db"
    store = Store.open(path)
    caplog.set_level(logging.DEBUG)
    install_log_redaction()
    opts = RunOptions(concurrency=2, progress=False, retry_backoff_s=0, max_attempts=1)

    # 1. a provider quoting fragments of the key in its error
    spec = llm_spec(half_masked, methods=("B0",), limit=1).model_copy(update={"name": "frag"})
    client = make_client(ModelSpec.parse(spec.agent, max_retries=0), cache_path=path)
    res = run_sweep(store, spec, opts, client=client)
    assert res.errors == 1
    logging.getLogger("driftbench.test").warning("provider said %s", f"{KEY[:12]}...{KEY[-9:]}")

    # 2. replies quoting an unknown key-shaped string and a bearer token
    def leaky(body: dict[str, object]) -> Reply:
        said = good_reply(body)  # a valid action, with a credential pasted after it
        return Reply(text=f"{said}\n(debug: {UNKNOWN} Authorization: Bearer {BEARER})")

    fake_llm_server.responder = leaky
    spec2 = llm_spec(fake_llm_server.base_url, methods=("B0",), limit=1).model_copy(
        update={"name": "shape"}
    )
    run_sweep(store, spec2, opts)
    store.close()

    outputs: dict[str, str] = {}
    for run in ("frag", "shape"):
        for fmt in ("jsonl", "csv"):
            out = tmp_path / f"{run}.{fmt}"
            rc, text = _cli(path, "export", run, "--format", fmt, "--out", str(out))
            assert rc == 0, text
            outputs[f"export {run} {fmt}"] = out.read_text()
    outputs["store"] = _store_bytes(path).decode("utf-8", "replace")
    for p in home.rglob("*"):
        if p.is_file():
            outputs[str(p)] = p.read_bytes().decode("utf-8", "replace")
    outputs["logs"] = "\n".join(r.getMessage() for r in caplog.records)
    captured = capfd.readouterr()
    outputs["stdout/stderr"] = captured.out + captured.err
    for where, text in outputs.items():
        assert _fragments(text, KEY) == [], (where, _fragments(text, KEY))
        assert _fragments(text, UNKNOWN) == [], (where, _fragments(text, UNKNOWN))
        assert BEARER not in text, where
    assert "***" in outputs["export frag jsonl"]


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Incorrect API key provided: sk-test-SECR...ETKEY-abcdef…XYZ", ["sk-test-SECR"]),
        ("key sk-ant-api03-AbCdEf0123456789xyz done", ["AbCdEf0123456789"]),
        ('{"msg":"x\\nsk-proj-abcdef0123456789"}', ["abcdef0123456789"]),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc", ["eyJhbGci"]),
        ("api_key=0123456789abcdef and password: hunter2hunter2", ["0123456789abcdef", "hunter2"]),
        ("AKIAABCDEFGHIJKLMNOP in the log", ["AKIAABCDEFGHIJKLMNOP"]),
    ],
)
def test_key_shapes_are_masked_without_knowing_the_key(text: str, gone: list[str]) -> None:
    out = redact(text, secrets=[])
    for g in gone:
        assert g not in out, (text, out)
    assert "***" in out


def test_fragments_of_a_known_key_are_masked() -> None:
    key = "sk-test-SECRETKEY-abcdef0123456789XYZ"
    out = redact("provided: sk-test-SECR...ETKEY-abcdef…XYZ; tail 0123456789XYZ", [key])
    assert _fragments(out, key) == [], out
    assert out.count("***") >= 3


@pytest.mark.parametrize(
    "plain",
    [
        "the token limit was reached; ask again",
        "a desk-lamp in teal, size medium, under $30",
        "scikit-learn and risk-averse customers",
        "Bearer of good news",
        "",
    ],
)
def test_ordinary_text_is_left_alone(plain: str) -> None:
    assert redact(plain, secrets=["sk-test-SECRETKEY-abcdef0123456789XYZ"]) == plain


def test_json_stays_json_after_redaction() -> None:
    body = json.dumps({"error": "x\nsk-proj-abcdef0123456789 and Bearer abcdefgh12345"})
    assert json.loads(redact(body, secrets=[]))["error"].count("***") == 2
