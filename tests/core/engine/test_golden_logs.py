"""Golden event logs: a fixed symbolic sweep must record exactly the same bytes, episode by episode.

The spec is every registered benchmark × every ladder method × every persona × one seed × the
first two samples, run through the public sweep entry point (:func:`core.runner.run_sweep`) into
a fresh store. Each episode is reduced to its JSON lines (the header without its wall-clock
``created_at``, then every event as stored) and hashed; ``golden/episode_hashes.json`` holds one
sha256 per episode and ``golden/full_logs.jsonl.gz`` the complete lines of a few episodes (one
per benchmark × method), so a failure shows the first line that changed.

A second, smaller spec drives the LLM path (the mock world × every method × one persona × two
samples against a deterministic scripted model that asks, searches with a repaired reply and
answers); its logs are kept in full in ``golden/llm_logs.jsonl.gz``.

Regenerate (only when a ruling changes the protocol on purpose, and say so in the commit):
``PYTHONPATH=. python -m tests.core.engine.test_golden_logs --update``.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import json
import sys
import tempfile
from pathlib import Path

from core.envs.registry import BENCHMARKS
from core.model.run import METHODS, PERSONAS, RunOptions, RunSpec

GOLDEN = Path(__file__).parent / "golden"
HASHES = GOLDEN / "episode_hashes.json"
FULL = GOLDEN / "full_logs.jsonl.gz"
LLM_FULL = GOLDEN / "llm_logs.jsonl.gz"
FULL_PERSONA = "dependent"
"""Persona whose episodes (of the first sample) are kept in full."""

SPEC = RunSpec(
    name="golden",
    benchmarks=tuple(BENCHMARKS),
    methods=METHODS,
    personas=PERSONAS,
    seeds=(0,),
    limit=2,
)


LLM_SPEC = RunSpec(
    name="golden-llm",
    benchmarks=("mock",),
    methods=METHODS,
    personas=("avoidant",),
    seeds=(0,),
    agent="openai/golden-scripted",
    limit=2,
)


def scripted_reply(messages: list[dict[str, object]], tools: object) -> str:
    """A deterministic model: ask once, search once (unfenced: a parser repair), then answer."""
    seen = "\n".join(str(m.get("content") or "") for m in messages[1:])
    if "lessons" in seen and "digests" in seen.lower():
        return '{"lessons": [{"when": "a request names a colour", "do": "confirm the size"}]}'
    if "search[" in seen or "search(" in seen:
        return "Action: Answer\nFinal Answer: done"
    if "USER:" in seen or "User:" in seen:
        return "Action: operation\nsearch[teal shirt]"
    return "Action: Ask\nQuestion: Which size and colour would you like?"


def _lines(store: object, episode_id: str) -> list[str]:
    header = store.header(episode_id)  # type: ignore[attr-defined]
    out = [header.model_dump_json(exclude={"created_at"})]
    out += [e.model_dump_json() for e in store.events(episode_id)]  # type: ignore[attr-defined]
    return out


def record(spec: RunSpec = SPEC) -> dict[str, tuple[str, list[str]]]:
    """Run a golden spec; return ``label -> (sha256, lines)`` for every episode."""
    from core.llm import ScriptedLLM
    from core.runner import run_sweep
    from core.store import Store

    with tempfile.TemporaryDirectory() as d:
        store = Store.open(Path(d) / "golden.db")
        try:
            client = None if spec.is_symbolic else ScriptedLLM(scripted_reply)
            opts = RunOptions(workers=1, concurrency=1, progress=False)
            res = run_sweep(store, spec, opts, client=client)
            assert res.episodes == res.completed + res.errors
            out: dict[str, tuple[str, list[str]]] = {}
            for row in store.episode_rows(run_id=res.run_id):
                label = "/".join(
                    str(row[k]) for k in ("benchmark", "sample_id", "method", "persona_id", "seed")
                )
                lines = _lines(store, row["episode_id"])
                digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
                out[label] = (digest, lines)
        finally:
            store.close()
    return out


def _kept_in_full(label: str, first_samples: dict[str, str]) -> bool:
    bench, sample, _method, persona, _seed = label.split("/")
    return persona == FULL_PERSONA and first_samples.get(bench) == sample


def _first_samples(labels: list[str]) -> dict[str, str]:
    firsts: dict[str, str] = {}
    for label in sorted(labels):
        bench, sample = label.split("/")[:2]
        firsts.setdefault(bench, sample)
    return firsts


def update() -> None:
    """Rewrite the golden files from the current code."""
    got = record()
    GOLDEN.mkdir(exist_ok=True)
    HASHES.write_text(
        json.dumps({k: v[0] for k, v in sorted(got.items())}, indent=1) + "\n", encoding="utf-8"
    )
    firsts = _first_samples(list(got))
    with gzip.GzipFile(FULL, "wb", mtime=0) as fh:
        for label in sorted(got):
            if _kept_in_full(label, firsts):
                fh.write((json.dumps({"episode": label, "lines": got[label][1]}) + "\n").encode())
    llm = record(LLM_SPEC)
    with gzip.GzipFile(LLM_FULL, "wb", mtime=0) as fh:
        for label in sorted(llm):
            fh.write((json.dumps({"episode": label, "lines": llm[label][1]}) + "\n").encode())


def _full_logs(path: Path = FULL) -> dict[str, list[str]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return {r["episode"]: r["lines"] for r in map(json.loads, fh)}


def _explain(label: str, lines: list[str], full: dict[str, list[str]]) -> str:
    if label not in full:
        return f"{label}: hash differs (not kept in full; rerun a kept episode to see the diff)"
    diff = difflib.unified_diff(full[label], lines, "golden", "now", n=0, lineterm="")
    return f"{label}:\n" + "\n".join(list(diff)[:12])


def test_golden_event_logs_are_byte_identical() -> None:
    expected: dict[str, str] = json.loads(HASHES.read_text(encoding="utf-8"))
    got = record()
    assert sorted(got) == sorted(expected), "the golden spec planned other episodes"
    assert len(got) == len(BENCHMARKS) * len(METHODS) * len(PERSONAS) * 2
    full = _full_logs()
    assert full, "no episode kept in full"
    for label, lines in full.items():  # the kept logs match their own hashes
        assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == expected[label]
    changed = [k for k in sorted(got) if got[k][0] != expected[k]]
    kept = [k for k in changed if k in full]
    shown = [_explain(k, got[k][1], full) for k in (kept or changed)[:3]]
    assert not changed, f"{len(changed)} episode logs changed; first:\n" + "\n\n".join(shown)


def test_golden_llm_path_logs_are_byte_identical() -> None:
    expected = _full_logs(LLM_FULL)
    got = record(LLM_SPEC)
    assert sorted(got) == sorted(expected), "the golden LLM spec planned other episodes"
    assert len(got) == len(METHODS) * 2
    changed = [k for k in sorted(got) if got[k][1] != expected[k]]
    shown = [_explain(k, got[k][1], expected) for k in changed[:3]]
    assert not changed, f"{len(changed)} LLM-path logs changed; first:\n" + "\n\n".join(shown)


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
        print(f"wrote {HASHES} and {FULL}")
