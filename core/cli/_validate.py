"""Argparse types for every numeric and path flag: a bad value is one line and exit 2.

Each type refuses, before any command runs (so before the store is opened):

* integers that are not integers, have more than :data:`~core.model.bounds.MAX_INT_DIGITS`
  digits, or fall outside the flag's range (``--seeds 99999999999999999999``, ``--branching 0``,
  ``--per-graph -1``);
* numbers that are NaN, infinite or negative where a budget is meant (``--max-cost -1|nan``);
* an output path that is a directory, under ``/proc`` or ``/sys``, or whose folder is missing
  (``export --out /tmp``, ``export --out /proc/version``);
* (model specs that cannot name a model — ``openai/@``, ``@@@`` — are refused by
  :func:`core.model.bounds.check_model_spec`, which the runner's spec check calls.)

The limits are listed in ``docs/RELIABILITY.md``.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

from core.model.bounds import MAX_COUNT

_SPECIAL_ROOTS = (Path("/proc"), Path("/sys"))
"""Output under these is refused: they are kernel interfaces, not files."""


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``[lo, hi]``."""

    def parse(value: str) -> int:
        text = value.strip()
        digits = text.lstrip("+-")
        if len(digits) > 30:  # far beyond any range here, and never fed to int() whole
            raise argparse.ArgumentTypeError(
                f"a number with {len(digits)} digits is out of range (allowed {lo}..{hi})"
            )
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
        if n < lo or n > hi:
            raise argparse.ArgumentTypeError(f"{n} is out of range (allowed {lo}..{hi})")
        return n

    parse.__name__ = "whole number"
    return parse


def seeds(value: str) -> int:
    """``--seeds``: a whole number of sane size (the command checks 1 .. ``MAX_SEEDS``)."""
    return int_in(-(2**63), 2**63 - 1)(value)


def positive(value: str) -> int:
    """A count of at least 1 (``--branching``, ``--workers``, ``--limit`` …)."""
    return int_in(1, MAX_COUNT)(value)


def any_int(value: str) -> int:
    """Any whole number of sane size (a seed value)."""
    return int_in(-(2**63), 2**63 - 1)(value)


def money(value: str) -> float:
    """``--max-cost``: a finite amount of US dollars, at least 0."""
    try:
        x = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite amount")
    if x < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (give 0 or more US dollars)")
    return x


def output_file(value: str) -> Path:
    """An output file path: not a directory, not a kernel file, in an existing folder."""
    path = Path(value).expanduser()
    resolved = path.resolve()
    if resolved.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a directory; give a file name")
    if any(resolved == r or r in resolved.parents for r in _SPECIAL_ROOTS):
        raise argparse.ArgumentTypeError(f"{value} is a kernel file, not an output file")
    if not resolved.parent.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: folder {path.parent} does not exist")
    return path


def judges(value: str) -> str:
    """``grip --judges``: ``heuristic``, ``human`` or exactly two model specs ``A,B``.

    Checked before the report is built, so a bad value writes nothing (not even a cache table).
    """
    from core.errors import ConfigError
    from core.model.bounds import check_model_spec

    text = value.strip()
    if text in ("heuristic", "human", "models"):  # models: the models file's two judges
        return text
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise argparse.ArgumentTypeError(
            f"{value!r}: give heuristic, human, models, or two model specs MODEL_A,MODEL_B"
        )
    for part in parts:
        try:
            check_model_spec(part, field="--judges")
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(exc.detail) from None
    return text
