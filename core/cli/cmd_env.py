"""``driftbench env golden`` and ``env play``: operate a host world directly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.cli._common import add_json, emit, existing_dir

_BENCHMARKS = ("webshop", "tau2_retail", "tau2_airline")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``env`` and its sub-commands."""
    p = sub.add_parser("env", help="operate a host world directly")
    esub = p.add_subparsers(dest="what", metavar="WHAT", required=True)

    g = esub.add_parser("golden", help="replay every task's golden solution")
    g.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    g.add_argument(
        "--data", type=existing_dir, metavar="DIR", help="host data dir (default bundled)"
    )
    g.add_argument("--task", metavar="ID", help="only this task id")
    add_json(g)
    g.set_defaults(handler=cmd_golden)

    pl = esub.add_parser("play", help="operate a host world by hand in the terminal")
    pl.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    pl.add_argument("--data", type=existing_dir, metavar="DIR")
    pl.set_defaults(handler=cmd_play)


def _golden(benchmark: str, data: Path | None, task: str | None) -> dict[str, Any]:
    if benchmark == "webshop":
        from core.envs.webshop import golden_report, load_webshop_world

        return dict(golden_report(load_webshop_world(data), task))
    from core.envs.tau2 import golden_report as tau2_golden
    from core.envs.tau2 import load_tau2_world

    return dict(tau2_golden(load_tau2_world(benchmark.removeprefix("tau2_"), data), task))


def cmd_golden(args: argparse.Namespace) -> int:
    """Replay golden solutions and report hashes/rewards and timing."""
    report = _golden(args.benchmark, args.data, args.task)
    tasks = report["tasks"]
    lines = [f"{report['benchmark']}: {len(tasks)} tasks"]
    if "initial_state_hash" in report:
        lines.append(f"initial state hash {report['initial_state_hash']}")
    for t in tasks:
        if "final_state_hash" in t:
            lines.append(
                f"  {t['task_id']:>8}  {t['final_state_hash'][:16]}…  "
                f"tool errors {t['tool_errors']}  {t['ms']:.1f} ms"
            )
        else:
            lines.append(f"  {t['task_id']:>8}  reward {t['reward']:.3f}  {t['ms']:.1f} ms")
    return emit(args, report, "\n".join(lines))


def cmd_play(args: argparse.Namespace) -> int:
    """Operate a host world interactively on the terminal."""
    if args.benchmark == "webshop":
        from core.envs.webshop import load_webshop_world, play_terminal

        return int(play_terminal(load_webshop_world(args.data), sys.stdin, sys.stdout))
    from core.envs.tau2 import load_tau2_world
    from core.envs.terminal import play_tools

    world = load_tau2_world(args.benchmark.removeprefix("tau2_"), args.data)
    return play_tools(world, sys.stdin, sys.stdout)
