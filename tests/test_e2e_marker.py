"""The ``e2e`` marker applies to every real-browser test, so ``-m "not e2e"`` really skips them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collected(*args: str) -> tuple[int, int]:
    """(selected, total) of a ``--collect-only`` run over ``tests/e2e``."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/e2e",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    tail = proc.stdout.strip().splitlines()[-1]
    m = re.search(r"no tests collected \((\d+) deselected\)", tail)
    if m:
        return 0, int(m.group(1))
    m = re.search(r"(\d+)/(\d+) tests? collected", tail)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.search(r"(\d+) tests? collected", tail)
    assert m, proc.stdout + proc.stderr
    return int(m.group(1)), int(m.group(1))


def test_not_e2e_deselects_every_browser_test() -> None:
    everything, total = _collected()
    assert everything == total and total >= 10  # the folder's tests are all there
    assert _collected("-m", "e2e") == (total, total)
    assert _collected("-m", "not e2e") == (0, total)
