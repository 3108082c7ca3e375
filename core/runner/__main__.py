"""``python -m core.runner --store PATH --run RUN [--options JSON]``: resume a stored run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.model.run import RunOptions
from core.runner import resume
from core.store import Store


def main() -> int:
    """Run (resume) one stored run and print its summary as JSON."""
    ap = argparse.ArgumentParser(prog="python -m core.runner")
    ap.add_argument("--store", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--options", default=None)
    args = ap.parse_args()
    options = RunOptions.model_validate_json(args.options) if args.options else None
    result = resume(Store.open(Path(args.store)), args.run, options)
    print(json.dumps(result.model_dump()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
