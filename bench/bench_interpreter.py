"""The simulated user's question interpreter: accuracy on the project question set, and cost.

* Accuracy — ``bench/data/interpreter_questions.yaml`` (a few hundred natural agent messages
  over bundled WebShop, τ² Retail/Airline and mock intents, labelled with act, slots and the
  confirmation verdict). *Exact* means the act matches, the slot set matches for ``slots``
  acts and the verdict matches for confirmations. Baseline (same run): the word-overlap matcher
  the protocol used before (label and value words, no act other than "slots").
* Cost — offline interpretation per message (the median of its repetitions, so a scheduler or
  GC pause does not count as the message's cost; :mod:`bench.timing`), p50 and p95 over the
  set's messages, warm (lexicons of each intent compiled once, as in an episode) and cold (first
  message of an intent, which compiles its lexicons). Target: p95 well under 1 ms per message.
* LLM ladder before/after — ``bench/interp_ladder.py`` (A0–A3 against the local fake server
  with an agent that asks natural questions), run here unless ``quick``.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from interp_questions import Item, load, resolve  # noqa: E402

from bench.rows import row as _row  # noqa: E402
from bench.timing import cold_ms, summary, warm_ms  # noqa: E402
from core.envs.base import HostWorld  # noqa: E402
from core.envs.registry import load_world  # noqa: E402
from core.envs.requirement_lexicon import content_words  # noqa: E402
from core.model.intent import Intent  # noqa: E402
from core.protocol import interpret as interp  # noqa: E402

TARGET_P95_MS = 0.5
FIRST_MEASURED = 0.937
"""Exact accuracy the first time the set was run, before any lexicon was tuned against it (the
set was written, then measured, then general misses fixed); the held-out number will be lower
than the tuned one."""


def legacy_read(text: str, intent: Intent, world: HostWorld) -> tuple[str, set[str]]:
    """The matcher before the interpreter: slot words ∩ content words; else confusion."""
    words = content_words(text)
    hits = {c.slot for c in intent.conditions if words & world.slot_words(c)}
    if hits:
        return "slots", hits
    ctx = world.context_facts(intent)
    if any(content_words(k) & words for k in ctx):
        return "slots", set()
    return "offtopic", set()


def _exact(item: Item, act: str, slots: set[str], confirm: bool | None) -> bool:
    if act != item.act:
        return False
    if act == "slots":
        return slots == set(item.slots)
    if act == "confirm":
        return confirm is item.confirm
    return True


def accuracy() -> dict[str, Any]:
    """Score the offline interpreter and the legacy matcher on the question set."""
    items = load()
    per: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
    conf_ok = conf_n = 0
    misses: list[str] = []
    for it in items:
        world = load_world(it.benchmark)
        got = interp.interpret(it.question, it.intent, world)
        ok = _exact(it, got.act, set(got.slots), got.confirm)
        la, ls = legacy_read(it.question, it.intent, world)
        per[it.benchmark].append((ok, got.act == it.act, _exact(it, la, ls, None)))
        if it.act == "confirm":
            conf_n += 1
            conf_ok += got.act == "confirm" and got.confirm is it.confirm
        if not ok:
            misses.append(f"{it.benchmark}: {it.question!r} -> {got.act} {list(got.slots)}")
    allrows = [r for v in per.values() for r in v]
    return {
        "n": len(allrows),
        "exact": sum(r[0] for r in allrows) / len(allrows),
        "act": sum(r[1] for r in allrows) / len(allrows),
        "legacy": sum(r[2] for r in allrows) / len(allrows),
        "confirm": conf_ok / conf_n if conf_n else None,
        "confirm_n": conf_n,
        "per": {b: (sum(r[0] for r in v) / len(v), len(v)) for b, v in sorted(per.items())},
        "legacy_per": {b: sum(r[2] for r in v) / len(v) for b, v in sorted(per.items())},
        "misses": misses,
    }


def cost(reps: int) -> dict[str, float]:
    """p50/p95 ms per message (median of its repetitions), warm and cold; the legacy p50."""
    items = load()
    worlds = {it.benchmark: load_world(it.benchmark) for it in items}

    def read(it: Item) -> object:
        return interp.interpret(it.question, it.intent, worlds[it.benchmark])

    warm = warm_ms(items, read, reps)
    cold = cold_ms(
        items,
        lambda it: it.intent.intent_id,
        lambda it: worlds[it.benchmark].memo(interp.INDEX_MEMO).clear(),
        read,
    )
    legacy = warm_ms(items, lambda it: legacy_read(it.question, it.intent, worlds[it.benchmark]), 1)
    return {**summary(warm, cold), "legacy_p50": statistics.median(legacy)}


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Accuracy and cost rows (plus the LLM ladder before/after unless ``quick``)."""
    acc = accuracy()
    per = "; ".join(
        f"{b} {v:.3f} (n={n}, before {acc['legacy_per'][b]:.3f})"
        for b, (v, n) in acc["per"].items()
    )
    qs = resolve()
    coverage = f"{qs.groups - len(qs.skipped_groups)} of {qs.groups} groups" + (
        f" (no bundled intent fits {', '.join(qs.skipped_groups)})" if qs.skipped_groups else ""
    )
    if qs.skipped_questions:
        coverage += f"; {qs.skipped_questions} questions with unfillable placeholders skipped"
    rows = [
        _row(
            "interpreter_exact_accuracy",
            acc["exact"],
            "fraction",
            acc["legacy"],
            "≥ 0.90 on the project set",
            acc["exact"] >= 0.90,
            f"n={acc['n']} over {coverage}; act accuracy {acc['act']:.3f}; first run before tuning "
            f"{FIRST_MEASURED:.3f}; {per}; baseline = the word-overlap "
            f"matcher before this change; misses: {' | '.join(acc['misses'][:4]) or 'none'}",
        ),
        _row(
            "interpreter_confirmation_accuracy",
            acc["confirm"] or 0.0,
            "fraction",
            0.0,
            "confirmations read and judged against the intent",
            (acc["confirm"] or 0.0) >= 0.9,
            f"n={acc['confirm_n']} (true and altered values); the old matcher had no confirmations",
        ),
    ]
    c = cost(3 if quick else 20)
    rows.append(
        _row(
            "interpreter_cost_per_message",
            c["p95"],
            "ms (p95)",
            c["legacy_p50"],
            f"p95 < {TARGET_P95_MS} ms (well under 1 ms)",
            c["p95"] < TARGET_P95_MS,
            f"warm p50 {c['p50']:.4f} ms; cold (compiling an intent's lexicons) p50 "
            f"{c['cold_p50']:.3f} ms, max {c['cold_max']:.3f} ms; baseline = word-overlap p50",
        )
    )
    if not quick:
        from interp_ladder import ladder_rows

        rows += ladder_rows()
    return rows


if __name__ == "__main__":
    for r in run(quick=True):
        print(r)
