"""Model health: how the language models behaved in a run, beside its GRIP metrics.

Failures are events, never results. This section counts them per run × benchmark × method
(with the run's agent, user voice and action format, so the format is shown in every report):

* ``actions`` and ``malformed`` (the malformed-action rate, per format and model), re-prompts,
  replies cut at the completion cap (``truncated``), window slides (``context_slides``);
* LLM voice replies rejected for echoing or saying what was not planned (``voice_rejected``)
  and replaced by the template line (``voice_fallbacks``);
* rejected A3 reflections (``reflections_rejected``) and interpreter answers not used
  (``interpreter_fallbacks``);
* tokens per episode and seconds per provider call, from every role's cost ledger.

Everything is read from the stored events and episode summaries; a symbolic run with the
template voice has no row (nothing here is about it).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from core.model.run import agent_of_spec_json, is_symbolic_agent
from core.store import Store

COUNTERS = (
    "actions",
    "malformed",
    "reprompts",
    "truncated",
    "context_slides",
    "voice_rejected",
    "voice_fallbacks",
    "reflections_rejected",
    "interpreter_reads",
    "interpreter_fallbacks",
)


def _run_info(store: Store, run_id: str) -> dict[str, Any] | None:
    row = store.conn.execute("SELECT spec FROM runs WHERE run_id=?", (run_id,)).fetchone()
    if row is None:
        return None
    try:
        spec = json.loads(row[0])
    except ValueError:
        return None
    agent = agent_of_spec_json(row[0])
    voice = str(spec.get("user_voice") or "template")
    interpreter = (spec.get("config") or {}).get("interpreter") or "offline"
    if is_symbolic_agent(agent) and voice in ("template", "mute", "human"):
        if interpreter in ("offline", None):
            return None
    return {
        "agent": agent,
        "user_voice": voice,
        "action_format": spec.get("action_format") or "text",
        "interpreter": interpreter,
    }


def _count(kind: str, body: dict[str, Any], row: dict[str, Any]) -> None:
    if kind == "agent_action":
        row["actions"] += 1
        action = body.get("action") or {}
        if isinstance(action, dict) and action.get("kind") == "malformed":
            row["malformed"] += 1
    elif kind == "repair":
        target, detail = body.get("target"), str(body.get("detail") or "")
        if target == "action_format":
            if detail.startswith("reprompt"):
                row["reprompts"] += 1
            elif detail.startswith("truncated"):
                row["truncated"] += 1
            elif detail.startswith("context_window"):
                row["context_slides"] += 1
        elif target == "voice_rejected":
            row["voice_rejected"] += 1
        elif target == "voice_fallback":
            row["voice_fallbacks"] += 1
        elif target == "reflection":
            row["reflections_rejected"] += 1
    elif kind == "question_read":
        row["interpreter_reads"] += 1
        if body.get("fallback"):
            row["interpreter_fallbacks"] += 1


def model_health(store: Store, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """One row per LLM run × benchmark × method (empty when no run used a language model)."""
    out: list[dict[str, Any]] = []
    for run_id in run_ids:
        info = _run_info(store, run_id)
        if info is None:
            continue
        rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(
            lambda: {
                **dict.fromkeys(COUNTERS, 0),
                "episodes": 0,
                "errors": 0,
                "tokens": 0,
                "provider_calls": 0,
                "seconds": 0.0,
                "truncated_calls": 0,
            }
        )
        eps = store.conn.execute(
            "SELECT episode_id, benchmark, method, outcome, summary FROM episodes "
            "WHERE run_id=? AND status='ended'",
            (run_id,),
        ).fetchall()
        cell_of: dict[str, tuple[str, str]] = {}
        for eid, bench, method, outcome, summary in eps:
            cell = (str(bench), str(method))
            cell_of[eid] = cell
            row = rows[cell]
            row["episodes"] += 1
            row["errors"] += int(outcome == "ERROR")
            try:
                ledger = (json.loads(summary or "{}") or {}).get("cost_by_role") or {}
            except ValueError:
                ledger = {}
            for entry in ledger.values():
                row["tokens"] += int(entry.get("prompt_tokens") or 0)
                row["tokens"] += int(entry.get("completion_tokens") or 0)
                row["provider_calls"] += int(entry.get("provider_calls") or 0)
                row["seconds"] += float(entry.get("seconds") or 0.0)
                row["truncated_calls"] += int(entry.get("truncated") or 0)
        if not cell_of:
            continue
        events = store.conn.execute(
            "SELECT e.episode_id, e.kind, e.body FROM events e JOIN episodes p "
            "ON p.episode_id = e.episode_id WHERE p.run_id=? AND p.status='ended' AND e.kind "
            "IN ('agent_action', 'repair', 'question_read')",
            (run_id,),
        )
        for eid, kind, body in events:
            found = cell_of.get(eid)
            if found is not None:
                _count(kind, json.loads(body), rows[found])
        for (bench, method), row in sorted(rows.items()):
            n, calls = row["episodes"], row["provider_calls"]
            out.append(
                {
                    "run_id": run_id,
                    "benchmark": bench,
                    "method": method,
                    **info,
                    **{k: v for k, v in row.items() if k != "seconds"},
                    "malformed_rate": row["malformed"] / row["actions"] if row["actions"] else None,
                    "tokens_per_episode": row["tokens"] / n if n else None,
                    "seconds_per_call": row["seconds"] / calls if calls else None,
                }
            )
    return out


def health_table(rows: Sequence[dict[str, Any]]) -> str:
    """The model-health rows as plain-text lines (for ``grip``'s table)."""
    if not rows:
        return ""
    lines = ["model health (failures are events, not results):"]
    for r in rows:
        rate = "—" if r["malformed_rate"] is None else f"{r['malformed_rate']:.0%}"
        per_call = "—" if r["seconds_per_call"] is None else f"{r['seconds_per_call']:.1f}s"
        tokens = "—" if r["tokens_per_episode"] is None else f"{r['tokens_per_episode']:.0f}"
        lines.append(
            f"  {r['benchmark']}/{r['method']} {r['agent']} [{r['action_format']}]: "
            f"malformed {r['malformed']}/{r['actions']} ({rate}), truncated {r['truncated']}, "
            f"re-prompts {r['reprompts']}, window slides {r['context_slides']}, voice rejected "
            f"{r['voice_rejected']} (fallbacks {r['voice_fallbacks']}), reflections rejected "
            f"{r['reflections_rejected']}, interpreter fallbacks {r['interpreter_fallbacks']}/"
            f"{r['interpreter_reads']}, errors {r['errors']}/{r['episodes']}, tokens/episode "
            f"{tokens}, per call {per_call}"
        )
    return "\n".join(lines)
