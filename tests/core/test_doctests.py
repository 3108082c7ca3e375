"""Run the examples in core's docstrings, so documented behaviour stays true."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "core"
MODULES = sorted(
    ".".join(p.relative_to(CORE.parent).with_suffix("").parts)
    for p in CORE.rglob("*.py")
    if ">>>" in p.read_text(encoding="utf-8")
)


def test_some_modules_carry_examples() -> None:
    assert "core.agents.askbook" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
