"""``driftbench verify``: the oracle on every selected sample, against its own world."""

from __future__ import annotations

import argparse
import sys
import time

from core.cli import _validate as V
from core.cli._common import add_json, emit, open_store
from core.errors import ConfigError

EXIT_FAILED = 1
"""Exit code when at least one sample fails."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``verify``."""
    from core.runner.plan import KNOWN_SPLITS

    p = sub.add_parser(
        "verify",
        help="run the oracle on every selected sample against the world it was built on",
        description=(
            "For every selected sample: load the world it was built on (a missing world or a "
            "changed fingerprint is a failure), check that every node of its intent graph "
            "executes to its stored ground truth and that the oracle's actions are accepted, "
            "then play one ORACLE episode through the engine, which must end in SUCCESS. "
            "Exits 1 and lists the failures when any sample fails."
        ),
    )
    p.add_argument(
        "--benchmark", default=None, help="benchmark id(s), comma-separated (default: all)"
    )
    p.add_argument(
        "--source",
        default=None,
        help="only samples of this provenance (bundled, built, release, NAME)",
    )
    p.add_argument("--split", default=None, choices=KNOWN_SPLITS, help="only this split")
    p.add_argument(
        "--limit",
        type=V.positive,
        default=None,
        help="the first N selected samples per benchmark, in sample-id order",
    )
    add_json(p)
    p.set_defaults(handler=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify the selected samples; exit 1 with the failures listed when any fails."""
    from core.construction.verify import VerifyReport, verify_sample
    from core.construction.worlds import WorldRefusedError
    from core.envs.registry import BENCHMARKS
    from core.runner.plan import SampleSource

    if args.limit is not None and args.limit < 1:
        raise ConfigError("must be at least 1", field="--limit")
    benchmarks = (
        [b.strip() for b in args.benchmark.split(",") if b.strip()]
        if args.benchmark
        else ["webshop", "tau2_retail", "tau2_airline"]
    )
    for b in benchmarks:
        if b not in BENCHMARKS:
            raise ConfigError(f"unknown benchmark {b!r}", field="--benchmark")
    store = open_store(args)
    source = SampleSource(store)
    selected = []
    for b in benchmarks:
        rows = source.rows(b, args.source, args.split)
        if args.limit is not None:
            rows = rows[: args.limit]
        selected += [(b, r) for r in rows]
    if not selected:
        raise ConfigError("no samples match the selection", field="--source")
    report = VerifyReport()
    t0 = time.perf_counter()
    for b, row in selected:
        sid = str(row["sample_id"])
        label = str(row.get("source") or "")
        try:
            sample = source.sample(b, sid)
            graph = source.graph(b, sample.graph_id)
            world = source.world(sample)
        except (WorldRefusedError, ConfigError) as exc:
            report.add(sid, b, label, str(exc))
            continue
        except Exception as exc:  # noqa: BLE001 - one broken sample is a finding, not a crash
            report.add(sid, b, label, f"{type(exc).__name__}: {exc}")
            continue
        report.add(sid, b, label, verify_sample(world, sample, graph))
    seconds = round(time.perf_counter() - t0, 3)
    lines = [
        f"verified {report.checked} samples: {report.passed} passed, "
        f"{len(report.failed)} failed ({seconds:.1f}s)"
    ]
    lines += [
        f"  FAIL {f['benchmark']} {f['sample_id']} ({f['source']}): {f['reason']}"
        for f in report.failed
    ]
    emit(args, report.as_dict([("seconds", seconds)]), "\n".join(lines))
    sys.stdout.flush()
    return EXIT_FAILED if report.failed else 0
