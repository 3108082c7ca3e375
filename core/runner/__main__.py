"""``python -m core.runner --store PATH --run RUN [--options JSON]``: resume a stored run."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from core.errors import DriftBenchError
from core.model.run import RunOptions
from core.runner import resume
from core.runner.lifecycle import Terminated
from core.store import Store


def main() -> int:
    """Run (resume) one stored run and print its summary as JSON."""
    ap = argparse.ArgumentParser(prog="python -m core.runner")
    ap.add_argument("--store", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--options", default=None)
    args = ap.parse_args()
    options = RunOptions.model_validate_json(args.options) if args.options else None
    try:
        result = resume(Store.open(Path(args.store)), args.run, options)
    except Terminated:
        print("terminated by SIGTERM; the run is interrupted and resumable", file=sys.stderr)
        return 143
    except DriftBenchError as exc:
        print(f"driftbench: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.model_dump()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
