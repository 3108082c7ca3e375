"""The process behind ``driftbench models local``: one llama.cpp server on 127.0.0.1.

Run as ``python -m core.llm.local_serve --model PATH --port P [--threads N] [--ctx N]
[--backend xllamacpp|llama-cpp-python]``. ``xllamacpp`` (the default) embeds llama.cpp's own
C++ server from a prebuilt wheel; ``llama-cpp-python`` runs ``python -m llama_cpp.server``
(that package compiles llama.cpp from source when installed). Either way the server binds
127.0.0.1 only, serves one request at a time (one slot), and this process stays in the
foreground until SIGTERM or SIGINT, which stop the server.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

LOOPBACK = "127.0.0.1"


def _serve_xllamacpp(args: argparse.Namespace) -> int:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.model_alias = args.alias
    params.hostnames = [LOOPBACK]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = 1
    params.n_predict = args.max_tokens
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_threads_http = 2
    params.cache_prompt = True
    params.endpoint_metrics = True
    params.ui = False
    params.warmup = True
    server = xlc.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    del server
    return 0


def _serve_llama_cpp_python(args: argparse.Namespace) -> int:
    argv = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        args.model,
        "--model_alias",
        args.alias,
        "--host",
        LOOPBACK,
        "--port",
        str(args.port),
        "--n_threads",
        str(args.threads),
        "--n_ctx",
        str(args.ctx),
    ]
    os.execv(sys.executable, argv)  # replaces this process: the pid stays the server's
    return 0  # pragma: no cover


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and serve until told to stop."""
    p = argparse.ArgumentParser(prog="python -m core.llm.local_serve")
    p.add_argument("--model", required=True)
    p.add_argument("--alias", default="local-model")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--max-tokens", type=int, default=1024)
    p.add_argument("--backend", choices=("xllamacpp", "llama-cpp-python"), default="xllamacpp")
    args = p.parse_args(argv)
    if args.backend == "llama-cpp-python":
        return _serve_llama_cpp_python(args)
    return _serve_xllamacpp(args)


if __name__ == "__main__":
    raise SystemExit(main())
