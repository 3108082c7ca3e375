"""bench_interpreter runs on whatever is bundled: no tool is assumed, no row helper misused."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import bench.bench_interpreter as bi

iq = sys.modules[bi.resolve.__module__]  # bench/interp_questions.py, as the bench imports it


@pytest.fixture
def question_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "questions.yaml"
    monkeypatch.setattr(iq, "DATA", path)
    iq.resolve.cache_clear()
    yield path
    iq.resolve.cache_clear()


def test_a_group_nothing_bundled_fits_is_skipped_and_named(question_file: Path) -> None:
    question_file.write_text(
        "- bench: tau2_airline\n"
        "  intent: {args: [amount], tool: no_such_tool}\n"
        "  questions:\n"
        "    - ['How much?', slots, ['arg:amount']]\n"
        "- bench: tau2_airline\n"
        "  intent: {args: [reservation_id], tool: cancel_reservation}\n"
        "  questions:\n"
        "    - ['Which reservation?', slots, ['arg:reservation_id']]\n"
        "    - ['Is {nothing_fills_this} right?', confirm, [], true]\n",
        encoding="utf-8",
    )
    qs = iq.resolve()
    assert qs.groups == 2 and qs.skipped_groups == ("tau2_airline:no_such_tool",)
    assert qs.skipped_questions == 1
    (item,) = qs.items
    assert item.question == "Which reservation?" and item.slots
    assert {c.slot.split(":")[2] for c in item.intent.conditions} == {"cancel_reservation"}


def test_a_tool_no_graph_node_writes_comes_from_the_hosts_tasks(question_file: Path) -> None:
    """Bundled airline graphs keep no send_certificate node; the host's task seeds do."""
    question_file.write_text(
        "- bench: tau2_airline\n"
        "  intent: {args: [amount, user_id], tool: send_certificate}\n"
        "  questions:\n"
        "    - ['What amount were you promised?', slots, ['arg:amount']]\n",
        encoding="utf-8",
    )
    qs = iq.resolve()
    assert not qs.skipped_groups and len(qs.items) == 1
    assert qs.items[0].slots == {"arg:0:send_certificate:amount"}


def test_quick_run_returns_every_row() -> None:
    iq.resolve.cache_clear()
    rows = bi.run(quick=True)
    assert [r["name"] for r in rows] == [
        "interpreter_exact_accuracy",
        "interpreter_confirmation_accuracy",
        "interpreter_cost_per_message",
    ]
    assert re.search(r"n=\d+ over \d+ of \d+ groups", rows[0]["notes"])
    assert all(r["value"] is not None and r["baseline"] is not None for r in rows)
