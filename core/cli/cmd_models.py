"""``driftbench models local``: a local OpenAI-compatible model server for every LLM seat."""

from __future__ import annotations

import argparse

from core.cli import _validate as V
from core.cli._common import add_json, emit


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register this module's commands."""
    p = sub.add_parser("models", help="local model servers (see docs/MODELS.md)")
    inner = p.add_subparsers(dest="models_command", metavar="SUBCOMMAND")
    q = inner.add_parser(
        "local",
        help="start (or stop) llama.cpp's server on 127.0.0.1 with a packaged instruct model",
        description=(
            "Start llama.cpp's OpenAI-compatible server on 127.0.0.1 with a small instruct "
            "model that a Python package ships (default smollm2-135m-instruct; or any GGUF "
            "path), check the file's SHA-256, wait until it answers, and print the model spec "
            "and a models file naming it for every role. --stop ends it. Install the server "
            "and the model with `make local`."
        ),
    )
    q.add_argument("--model", default=None, help="a packaged model name or a GGUF file path")
    q.add_argument("--port", type=V.int_in(1, 65535), default=None, help="TCP port (default free)")
    q.add_argument("--stop", action="store_true", help="stop the running local server")
    q.add_argument("--threads", type=V.int_in(1, 256), default=1, help="CPU threads (default 1)")
    q.add_argument(
        "--ctx", type=V.int_in(512, 1_000_000), default=4096, help="context window (tokens)"
    )
    q.add_argument(
        "--max-tokens",
        type=V.int_in(16, 100_000),
        default=256,
        help="completion cap written into the models file (default 256)",
    )
    q.add_argument(
        "--backend",
        choices=("xllamacpp", "llama-cpp-python"),
        default="xllamacpp",
        help="xllamacpp (prebuilt wheel, default) or llama-cpp-python[server] (compiled)",
    )
    q.add_argument("--sha256", default=None, help="expected SHA-256 of a GGUF given by path")
    q.add_argument(
        "--api-base",
        default=None,
        metavar="URL",
        help="attach to a server that already runs on 127.0.0.1 instead of starting one "
        "(Ollama: http://127.0.0.1:11434/v1, vLLM: http://127.0.0.1:8000/v1); --model names "
        "the model it serves",
    )
    q.add_argument(
        "--concurrency",
        type=V.int_in(1, 256),
        default=1,
        help="requests in flight to the server (written into the models file; default 1)",
    )
    add_json(q)
    q.set_defaults(handler=cmd_models_local)
    p.set_defaults(handler=lambda _args: _usage(p))


def _usage(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2


def cmd_models_local(args: argparse.Namespace) -> int:
    """Start or stop the local server and print how to use it."""
    from core.llm import local

    if args.stop:
        out = local.stop()
        text = f"stopped the local server (pid {out['pid']})" if out["stopped"] else "no server"
        return emit(args, out, text)
    if args.api_base:
        if not args.model:
            from core.errors import ConfigError

            raise ConfigError("name the served model with --model", field="--model")
        att = local.attach(
            args.api_base,
            args.model,
            ctx=args.ctx,
            max_tokens=args.max_tokens,
            concurrency=args.concurrency,
        )
        return emit(
            args,
            att,
            f"attached to {att['api_base']} ({att['model']})\nspec: {att['spec']}\n"
            f"models file: {att['models_file']}",
        )
    state = local.start(
        args.model,
        port=args.port,
        threads=args.threads,
        ctx=args.ctx,
        max_tokens=args.max_tokens,
        backend=args.backend,
        sha256=args.sha256,
    )
    payload = {
        "spec": state["spec"],
        "api_base": state["api_base"],
        "model": state["model"],
        "pid": state["pid"],
        "models_file": state["models_file"],
        **{k: v for k, v in state.items() if k not in ("spec", "api_base", "model", "pid")},
    }
    text = (
        f"{'reusing' if state.get('reused') else 'started'} {state['model']} on "
        f"{state['api_base']} (pid {state['pid']}, {state['threads']} thread(s), one request at "
        f"a time)\nspec: {state['spec']}\nmodels file: {state['models_file']}\n"
        f"use it: DRIFTBENCH_MODELS={state['models_file']} driftbench run ... "
        "--action-format json\nstop it: driftbench models local --stop"
    )
    return emit(args, payload, text)
