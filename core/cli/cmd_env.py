"""``driftbench env golden`` and ``env play``: operate a host world directly."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.cli._common import add_json, emit, existing_dir, open_store

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
    g.add_argument(
        "--world", metavar="ID", help="replay on this world: 'bundled' or a stored world id"
    )
    g.add_argument(
        "--sample",
        metavar="ID",
        help="replay on the world this sample was built on (its root task unless --task)",
    )
    add_json(g)
    g.set_defaults(handler=cmd_golden)

    c = esub.add_parser(
        "catalogue",
        help="write a WebShop-format product catalogue of any size",
        description=(
            "Write items_shuffle.json, items_ins_v2.json, items_human_ins.json and "
            "human_goals.json in WebShop's own formats (`driftbench import webshop --from DIR` "
            "reads them like the real files). Same --products and --seed give identical files."
        ),
    )
    c.add_argument("--products", type=int, required=True, metavar="N")
    c.add_argument("--seed", type=int, default=0, metavar="S")
    c.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="a new or empty folder (never one holding data, the store or $DRIFTBENCH_HOME)",
    )
    add_json(c)
    c.set_defaults(handler=cmd_catalogue)

    pl = esub.add_parser("play", help="operate a host world by hand in the terminal")
    pl.add_argument("--benchmark", choices=_BENCHMARKS, required=True)
    pl.add_argument("--data", type=existing_dir, metavar="DIR")
    pl.set_defaults(handler=cmd_play)


def _golden(
    benchmark: str, data: Path | None, task: str | None, world: Any = None
) -> dict[str, Any]:
    if benchmark == "webshop":
        from core.envs.webshop import golden_report, load_webshop_world

        return dict(golden_report(world or load_webshop_world(data), task))
    from core.envs.tau2 import golden_report as tau2_golden
    from core.envs.tau2 import load_tau2_world

    w = world or load_tau2_world(benchmark.removeprefix("tau2_"), data)
    return dict(tau2_golden(w, task))


def _chosen_world(args: argparse.Namespace) -> tuple[Any, str | None, str | None]:
    """(world, world id, task) named by ``--sample`` or ``--world`` (None, None, task when neither).

    Raises:
        WorldRefusedError: The sample's world is missing or changed (exit 2).
    """
    from core.errors import ConfigError

    if args.sample is None and args.world is None:
        return None, None, args.task
    if args.data is not None:
        raise ConfigError("give --data, --world or --sample, not several", field="--data")
    from core.construction.worlds import resolve_sample_world, world_for
    from core.runner.plan import SampleSource

    store = open_store(args)
    if args.sample is not None:
        source = SampleSource(store)
        try:
            sample = source.sample(args.benchmark, args.sample)
        except Exception as exc:  # noqa: BLE001 - NotFoundError, reported as a flag error
            raise ConfigError(str(exc), field="--sample") from None
        if sample.benchmark != args.benchmark:
            raise ConfigError(f"sample is of {sample.benchmark}", field="--sample")
        graph = source.graph(args.benchmark, sample.graph_id)
        loaded = resolve_sample_world(store, sample, graph)
        root = graph.node(sample.root_intent_id)
        task = args.task or (root.source_record or root.base).split("+", 1)[0]
        return loaded.world, loaded.ref.world_id, task
    loaded = world_for(store, args.benchmark, world=args.world)
    return loaded.world, loaded.ref.world_id, args.task


def cmd_golden(args: argparse.Namespace) -> int:
    """Replay golden solutions and report hashes/rewards and timing."""
    world, world_id, task = _chosen_world(args)
    report = _golden(args.benchmark, args.data, task, world)
    if world_id is not None:
        report["world_id"] = world_id
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


def cmd_catalogue(args: argparse.Namespace) -> int:
    """Generate a WebShop-format catalogue (progress on stderr unless ``--json``)."""
    from core.cli._common import store_path
    from core.envs.webshop.catgen import write_catalogue
    from core.errors import ConfigError
    from core.store.outputs import check_output_dir

    if args.products < 1:
        raise ConfigError("must be at least 1", field="--products")
    check_output_dir(args.out, store_path=store_path(args))
    quiet = getattr(args, "json", False)

    def tick(done: int) -> None:
        if not quiet and (done % 50_000 == 0 or done == args.products):
            print(f"catalogue: {done:,}/{args.products:,} products", file=sys.stderr)

    result = write_catalogue(args.products, args.out, seed=args.seed, progress=tick)
    result = {**result, "seed": args.seed, "out": str(args.out)}
    size = sum(result["files"].values())
    text = (
        f"wrote {result['products']:,} products and {result['human_instructions']:,} human "
        f"instructions ({size / 1e6:,.1f} MB) to {args.out}"
    )
    return emit(args, result, text)


def cmd_play(args: argparse.Namespace) -> int:
    """Operate a host world interactively on the terminal."""
    if args.benchmark == "webshop":
        from core.envs.webshop import load_webshop_world, play_terminal

        return int(play_terminal(load_webshop_world(args.data), sys.stdin, sys.stdout))
    from core.envs.tau2 import load_tau2_world
    from core.envs.terminal import play_tools

    world = load_tau2_world(args.benchmark.removeprefix("tau2_"), args.data)
    return play_tools(world, sys.stdin, sys.stdout)
