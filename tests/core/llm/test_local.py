"""``driftbench models local`` without the model: names, hashes, loopback, the models file.

The real server is exercised by the ``realmodel`` suite (tests/realmodel); these run in every
suite, offline.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from core.cli import main
from core.errors import ConfigError
from core.llm import local
from core.llm.models import SINGLE_ROLES, load_models
from tests.fakes.openai_server import FakeOpenAIServer


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def test_unknown_names_and_non_gguf_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        local.resolve_model("no-such-model")
    assert err.value.field == "--model"
    junk = tmp_path / "x.gguf"
    junk.write_bytes(b"not a model")
    with pytest.raises(ConfigError):
        local.resolve_model(str(junk))
    rc, _, err_text = _cli("models", "local", "--model", str(junk))
    assert rc == 2 and "GGUF" in err_text


def test_the_hash_is_checked(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 64)
    ok = local.resolve_model(str(gguf))
    assert local.verify(ok) == local.file_sha256(gguf)
    bad = local.resolve_model(str(gguf), sha256="0" * 64)
    with pytest.raises(ConfigError) as err:
        local.verify(bad)
    assert err.value.field == "sha256"


def test_the_packaged_default_is_pinned() -> None:
    pm = local.default_model()
    assert pm.name == local.DEFAULT_MODEL and len(pm.sha256) == 64
    assert pm.file.endswith(".gguf") and pm.license == "Apache-2.0"


def test_the_models_file_names_every_role_with_cpu_settings(tmp_path: Path) -> None:
    text = local.models_file_text(
        "openai/m@http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", ctx=4096, max_tokens=200
    )
    path = tmp_path / "models.yaml"
    path.write_text(text)
    models = load_models(path)
    for role in SINGLE_ROLES:
        spec = getattr(models, role)
        assert spec is not None and spec.api_base == "http://127.0.0.1:9/v1", role
        assert spec.concurrency == 1 and spec.context_tokens == 4096 and spec.max_tokens
    assert models.extractors
    # one local model cannot be GRIP's two independent judges (the protocol refuses a pair of
    # one model), so the file names none and says why
    assert models.judges == [] and "No `judges`" in text


def test_listening_addresses_reads_the_socket_table() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        if not Path("/proc/net/tcp").exists():
            pytest.skip("no /proc/net/tcp here")
        assert local.listening_addresses(port) == ["127.0.0.1"]
    assert local._loopback_only(["127.0.0.1", "::1"])
    assert not local._loopback_only(["0.0.0.0"])


def test_stop_without_a_server_is_a_no_op() -> None:
    rc, out, _ = _cli("models", "local", "--stop", "--json")
    assert rc == 0 and json.loads(out)["stopped"] is False


def test_attach_to_a_running_loopback_server(fake_llm_server: FakeOpenAIServer) -> None:
    rc, out, err = _cli(
        "models", "local", "--api-base", fake_llm_server.base_url, "--model", "served", "--json"
    )
    assert rc == 0, err
    got: dict[str, Any] = json.loads(out)
    assert set(got) >= {"spec", "api_base", "model", "pid", "models_file"}
    assert got["spec"] == f"openai/served@{fake_llm_server.base_url}"
    models = load_models(got["models_file"])
    assert models.agent is not None and models.agent.model == "openai/served"
    rc, _, err = _cli("models", "local", "--api-base", "http://10.0.0.1:8000/v1", "--model", "x")
    assert rc == 2 and "127.0.0.1" in err
