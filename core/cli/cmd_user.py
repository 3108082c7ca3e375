"""``driftbench user interpret`` and ``driftbench user read``: how messages are read.

``user interpret`` — how the simulated user reads agent messages.

Each input line is ``{"sample_id", "question"}`` with an optional ``"turn_intent_id"`` (an
intent of the sample's graph; the root by default). Each output line is ``{"sample_id",
"question", "act", "slots", "confirm"}``: ``act`` is ``slots`` / ``open`` / ``confirm`` /
``offtopic``, ``slots`` lists slot ids of that intent (a confirmation: the slots its description
names) and ``confirm`` is true/false for confirmations (whether the described action matches the
intent), else null.

``user read`` — how the project reads a *user's* reply (a person's or a voice's). Each input
line is ``{"sample_id", "reply"}`` with optional ``"turn_intent_id"`` and ``"asked"`` (slot ids
the agent's last question asked); each output line is ``{"sample_id", "reply", "act",
"disclosures": [{"slot", "value"}], "contradictions": [{"slot", "said", "goal"}]}``
(:mod:`core.protocol.reply_reader`).

A bad line stops either command with one error naming the file and line (exit 2) before
anything is printed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from core.cli._common import fail, store_path
from core.errors import ConfigError, DriftBenchError, NotFoundError
from core.model.intent import Intent, IntentGraph
from core.model.sample import Sample

BENCHMARKS = ("mock", "tau2_retail", "tau2_airline", "webshop")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register this module's commands."""
    p = sub.add_parser("user", help="the simulated user (interpreter audit)")
    usub = p.add_subparsers(dest="user_command", metavar="COMMAND")
    q = usub.add_parser("interpret", help="read agent messages as question acts (JSON lines)")
    q.add_argument("--from", dest="source", required=True, metavar="FILE.jsonl")
    q.add_argument(
        "--interpreter", default="offline", help="'offline' (default) or MODEL[@API_BASE]"
    )
    q.set_defaults(handler=cmd_interpret)
    r = usub.add_parser("read", help="read user replies into act, disclosures, contradictions")
    r.add_argument("--from", dest="source", required=True, metavar="FILE.jsonl")
    r.add_argument("--reader", default="offline", help="'offline' (default) or MODEL[@API_BASE]")
    r.set_defaults(handler=cmd_read)
    p.set_defaults(handler=lambda args: fail("user: choose a command (interpret, read)"))


def _lines(path: Path, text_key: str = "question") -> list[tuple[int, dict[str, Any]]]:
    """Read and check the input (ConfigError naming file and line on the first problem)."""
    allowed = {"sample_id", text_key, "turn_intent_id"} | (
        {"asked"} if text_key == "reply" else set()
    )
    from core.model import bounds

    out = []
    for no, raw, problem in bounds.read_lines(path):  # bounded: /dev/zero stops at a line cap
        where = f"line {no}"
        if raw is None:
            raise ConfigError(problem or "unreadable", file=path, field=where)
        if not raw.strip():
            continue
        try:
            obj = bounds.loads(raw)
        except ValueError as exc:
            raise ConfigError(f"not JSON: {exc}", file=path, field=where) from None
        if not isinstance(obj, dict):
            raise ConfigError("each line must be a JSON object", file=path, field=where)
        extra = set(obj) - allowed
        if extra:
            raise ConfigError(f"unknown keys {sorted(extra)}", file=path, field=where)
        for key in ("sample_id", text_key):
            if not isinstance(obj.get(key), str) or not obj[key].strip():
                raise ConfigError(f"{key} must be a non-empty string", file=path, field=where)
        tid = obj.get("turn_intent_id")
        if tid is not None and not isinstance(tid, str):
            raise ConfigError("turn_intent_id must be a string", file=path, field=where)
        asked = obj.get("asked", [])
        if not isinstance(asked, list) or not all(isinstance(a, str) for a in asked):
            raise ConfigError(
                "asked must be a list of slot ids", file=path, field=f"{where}: asked"
            )
        out.append((no, obj))
    return out


class _Samples:
    """Samples and graphs by id: the store first, then the bundled benchmarks."""

    def __init__(self, args: argparse.Namespace) -> None:
        from core.runner.plan import SampleSource
        from core.store import Store

        path = store_path(args)
        store = None
        try:
            store = Store.open(path, create=False)
        except DriftBenchError:
            store = None
        self.source = SampleSource(store)
        self.store = store

    def sample(self, sample_id: str) -> Sample:
        if self.store is not None:
            try:
                return Sample.model_validate_json(self.store.sample_json(sample_id))
            except NotFoundError:
                pass
        for b in BENCHMARKS:
            try:
                return self.source.sample(b, sample_id)
            except NotFoundError:
                continue
        raise NotFoundError(f"no sample {sample_id}")

    def graph(self, sample: Sample) -> IntentGraph:
        return self.source.graph(sample.benchmark, sample.graph_id)


def _intent(graph: IntentGraph, sample: Sample, turn_intent_id: str | None) -> Intent:
    return graph.node(turn_intent_id or sample.root_intent_id)


def _resolve(
    path: Path, rows: list[tuple[int, dict[str, Any]]], samples: _Samples
) -> list[tuple[dict[str, Any], Sample, Intent]]:
    """Each line's sample and intent (ConfigError naming the file, line and field)."""
    resolved: list[tuple[dict[str, Any], Sample, Intent]] = []
    for no, obj in rows:
        where = f"line {no}"
        try:
            sample = samples.sample(obj["sample_id"])
        except NotFoundError:
            raise ConfigError(
                f"unknown sample {obj['sample_id']!r}", file=path, field=f"{where}: sample_id"
            ) from None
        graph = samples.graph(sample)
        try:
            intent = _intent(graph, sample, obj.get("turn_intent_id"))
        except KeyError:
            raise ConfigError(
                f"intent {obj.get('turn_intent_id')!r} is not in the sample's graph",
                file=path,
                field=f"{where}: turn_intent_id",
            ) from None
        resolved.append((obj, sample, intent))
    return resolved


def cmd_interpret(args: argparse.Namespace) -> int:
    """Read each input question as a question act and print one JSON line per input line."""
    from core.envs.registry import load_world
    from core.protocol.matching import read_message

    path = Path(args.source)
    resolved = _resolve(path, _lines(path), _Samples(args))
    interpreter = (args.interpreter or "offline").strip() or "offline"
    from core.llm.ledger import CostLedger, recording

    spent, fallbacks = CostLedger(), 0
    for obj, sample, intent in resolved:
        world = load_world(sample.benchmark)
        with recording(spent):
            reading = read_message(obj["question"], intent, world, interpreter)
        act = reading.act
        line: dict[str, Any] = {
            "sample_id": obj["sample_id"],
            "question": obj["question"],
            "act": act.act,
            "slots": list(act.slots),
            "confirm": act.confirm if act.act == "confirm" else None,
        }
        if reading.verdict is not None:  # a model read it: say when its answer was not used
            line["fallback"] = reading.verdict.fallback
            if reading.verdict.fallback:
                fallbacks += 1
                line["fallback_reason"] = reading.verdict.detail[:300]
        print(json.dumps(line, ensure_ascii=False), flush=True)
    if interpreter != "offline":
        _usage_note(spent, fallbacks, len(resolved))
    return 0


def _usage_note(spent: Any, fallbacks: int, total: int) -> None:
    """One stderr line: how often the model's answer was not used, and its calls and tokens."""
    import sys

    row = spent.to_dict().get("interpreter", {})
    print(
        f"interpreter: {fallbacks} of {total} answers fell back to the offline reading; "
        f"{row.get('provider_calls', 0)} model calls, {row.get('prompt_tokens', 0)} prompt + "
        f"{row.get('completion_tokens', 0)} completion tokens, {row.get('cached', 0)} cached",
        file=sys.stderr,
    )


def cmd_read(args: argparse.Namespace) -> int:
    """Read each input reply (act, disclosures, contradictions); one JSON line per input line."""
    from core.envs.registry import load_world
    from core.protocol.reply_reader import read_reply

    path = Path(args.source)
    rows = _lines(path, "reply")
    resolved = _resolve(path, rows, _Samples(args))
    for (no, obj), (_, _sample, intent) in zip(rows, resolved, strict=True):
        slots = {c.slot for c in intent.conditions}
        unknown = [a for a in obj.get("asked", []) if a not in slots]
        if unknown:
            raise ConfigError(
                f"asked names slots that are not in the intent: {unknown}",
                file=path,
                field=f"line {no}: asked",
            )
    reader = (args.reader or "offline").strip() or "offline"
    for obj, sample, intent in resolved:
        world = load_world(sample.benchmark)
        reading = read_reply(
            obj["reply"], intent, world, asked=tuple(obj.get("asked", [])), reader=reader
        )
        line = {"sample_id": obj["sample_id"], "reply": obj["reply"], **reading.payload()}
        print(json.dumps(line, ensure_ascii=False), flush=True)
    return 0
