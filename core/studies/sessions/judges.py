"""Session judges: the protocol, the LLM judge, human judges from labels, and running them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Protocol

from core.errors import ConfigError, LLMError
from core.faults.taxonomy import GLOSS
from core.llm import ChatModel, is_offline_name, make_client
from core.model.intent import ShiftOperator
from core.model.sample import FaultType
from core.paths import PROMPTS_DIR
from core.store import Store
from core.studies.labels import NONE, list_labels
from core.studies.sessions.format import SessionRecord
from core.studies.sessions.heuristic import LexiconJudge, StructureJudge
from core.studies.sessions.judgment import SessionJudgment
from core.studies.sessions.store import get_judgments, get_session, put_judgments, session_rows
from core.studies.studies import get_study

SHIFT_GLOSS: dict[ShiftOperator, str] = {
    ShiftOperator.REFINE: "adds a constraint to the same goal",
    ShiftOperator.RELAX: "drops or loosens a constraint",
    ShiftOperator.SUBSTITUTE: "replaces a value of the goal with another",
    ShiftOperator.PIVOT: "abandons the goal for a different one",
}


class SessionJudge(Protocol):
    """Anything that reads a session and returns a :class:`SessionJudgment`."""

    name: str

    def judge(self, session: SessionRecord) -> SessionJudgment:
        """Judge one session."""
        ...


def render_transcript(session: SessionRecord, *, max_chars: int = 12_000) -> str:
    """Render a session as plain text for a judge (tool results truncated)."""
    lines = []
    for m in session.messages:
        if m.role in ("system", "developer"):
            continue
        if m.role == "tool":
            lines.append(f"TOOL RESULT: {(m.content or '')[:300]}")
            continue
        if m.content:
            lines.append(f"{m.role.upper()}: {m.content}")
        for call in m.tool_calls:
            lines.append(f"ASSISTANT CALLS {call.function.name}({call.function.arguments[:200]})")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[:max_chars] + "\n[… truncated]"


def _prompt(name: str) -> str:
    path = PROMPTS_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"prompt template missing: {exc}", file=path) from exc


def _norm(value: Any) -> str:
    return re.sub(r"[\s\-/]+", "_", str(value).strip().lower())


def parse_judge_reply(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Extract the JSON object of a judge's reply (code fences and chatter tolerated).

    Returns:
        (object, None) on success, (None, error) otherwise.
    """
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None, "no JSON object in the reply"
    try:
        obj = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON in the reply: {exc.msg}"
    if not isinstance(obj, dict):
        return None, "the reply's JSON is not an object"
    return obj, None


class LLMSessionJudge:
    """A language-model judge (``llm:<model>``) using ``data/prompts/session_judge*.md``.

    Args:
        client: Any :class:`~core.llm.ChatModel` (a real client or a scripted fake).
        name: Judge name; defaults to ``llm:<model label>``.
    """

    kind = "llm"

    def __init__(self, client: ChatModel, name: str | None = None) -> None:
        self.client = client
        self.name = name or f"llm:{client.spec.label}"
        self._system = _prompt("session_judge_system.md").strip()
        self._template = _prompt("session_judge.md")

    def messages(self, session: SessionRecord) -> list[dict[str, Any]]:
        """Build the chat messages for one session."""
        faults = "\n".join(f"   - {f.value}: {g}" for f, g in GLOSS.items())
        shifts = "\n".join(f"   - {s.value}: {g}" for s, g in SHIFT_GLOSS.items())
        user = (
            self._template.replace("{{fault_types}}", faults)
            .replace("{{shift_types}}", shifts)
            .replace("{{transcript}}", render_transcript(session))
        )
        return [{"role": "system", "content": self._system}, {"role": "user", "content": user}]

    def judge(self, session: SessionRecord) -> SessionJudgment:
        """Ask the model; an unusable reply yields ``valid=False`` (never a guess)."""
        base = {"session_id": session.session_id, "judge": self.name, "kind": "llm"}
        try:
            reply = self.client.complete(self.messages(session), namespace="session_judge")
        except LLMError as exc:
            return SessionJudgment(**base, valid=False, error=f"model call failed: {exc}")
        obj, error = parse_judge_reply(reply.text)
        if obj is None:
            return SessionJudgment(**base, valid=False, error=error, raw=reply.text)
        faults: list[FaultType] = []
        shifts: list[ShiftOperator] = []
        dropped: list[str] = []
        for v in obj.get("fault_types") or []:
            n = _norm(v)
            if n in FaultType._value2member_map_:
                if FaultType(n) not in faults:
                    faults.append(FaultType(n))
            elif n != NONE:
                dropped.append(str(v))
        for v in obj.get("shift_types") or []:
            n = _norm(v)
            if n in ShiftOperator._value2member_map_:
                shifts.append(ShiftOperator(n))
            elif n != NONE:
                dropped.append(str(v))
        intents = tuple(str(i) for i in obj.get("intents") or [] if str(i).strip())
        return SessionJudgment(
            **base,
            intents=intents,
            fault_types=tuple(faults),
            shift_types=tuple(shifts),
            error=f"ignored unknown labels: {', '.join(dropped)}" if dropped else None,
            raw=reply.text,
        )


def make_judges(spec: str, *, cache_path: Any = None) -> tuple[SessionJudge, SessionJudge]:
    """Build the two judges named on the command line.

    Args:
        spec: ``heuristic`` (the lexicon and structure judges) or ``MODEL_A,MODEL_B``
            (two litellm model specs, each optionally ``MODEL@API_BASE``).
        cache_path: SQLite file for the LLM response cache (the store's file is fine).

    Raises:
        ConfigError: When the spec does not name exactly two judges.
    """
    if is_offline_name(spec):
        return LexiconJudge(), StructureJudge()
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if len(parts) != 2:
        raise ConfigError(
            f"expected 'heuristic' or two model specs 'MODEL_A,MODEL_B', got {spec!r}",
            file="--judges",
        )
    if parts[0] == parts[1]:
        raise ConfigError("the two judges must be different models", file="--judges")
    return (
        LLMSessionJudge(make_client(parts[0], cache_path=cache_path)),
        LLMSessionJudge(make_client(parts[1], cache_path=cache_path)),
    )


def judge_sessions(
    store: Store,
    judge: SessionJudge,
    session_ids: Iterable[str] | None = None,
    *,
    refresh: bool = False,
) -> dict[str, SessionJudgment]:
    """Run one judge over sessions (stored ones reused unless ``refresh``); store the results.

    Judgments are written in batches of 50, so an interrupted LLM pass keeps its work.

    Returns:
        Every judgment of this judge over the requested sessions, by session id.
    """
    ids = (
        list(session_ids)
        if session_ids is not None
        else [r["session_id"] for r in session_rows(store)]
    )
    have = {} if refresh else get_judgments(store, judge.name)
    out: dict[str, SessionJudgment] = {}
    batch: list[SessionJudgment] = []
    for sid in ids:
        if sid in have:
            out[sid] = have[sid]
            continue
        j = judge.judge(get_session(store, sid))
        out[sid] = j
        batch.append(j)
        if len(batch) >= 50:
            put_judgments(store, batch)
            batch = []
    if batch:
        put_judgments(store, batch)
    return out


def human_judgments(store: Store, study: str) -> dict[str, list[SessionJudgment]]:
    """Turn a study's session labels into judgments, one per (session, annotator).

    A session judgment from labels: ``fault_type`` labels (other than ``none``) are its
    fault types, ``shift_type`` labels (ordered by turn) its shifts, the latest ``intents``
    label its intents. Only annotators whose assignment on the session is done count.

    Returns:
        Per session id, the judgments in annotator-id order.
    """
    st = get_study(store, study)
    done = {
        (a, t)
        for a, t in store.conn.execute(
            "SELECT annotator_id, target_id FROM assignments WHERE study_id=? AND "
            "target_kind='session' AND status='done'",
            (st.study_id,),
        )
    }
    by: dict[tuple[str, str], dict[str, Any]] = {}
    for r in list_labels(store, study_id=st.study_id, target_kind="session", latest_only=True):
        if (r.annotator, r.target_id) not in done:
            continue
        d = by.setdefault((r.target_id, r.annotator), {"faults": [], "shifts": [], "intents": []})
        if r.label_kind == "fault_type" and r.value != NONE:
            d["faults"].append(FaultType(r.value))
        elif r.label_kind == "shift_type" and r.value != NONE:
            d["shifts"].append((r.turn or 0, ShiftOperator(r.value)))
        elif r.label_kind == "intents":
            d["intents"] = list(r.value)
    out: dict[str, list[SessionJudgment]] = {}
    for (sid, annotator), d in sorted(by.items()):
        out.setdefault(sid, []).append(
            SessionJudgment(
                session_id=sid,
                judge=f"human:{annotator}",
                kind="human",
                intents=tuple(d["intents"]),
                fault_types=tuple(f for f in FaultType if f in d["faults"]),
                shift_types=tuple(op for _, op in sorted(d["shifts"], key=lambda x: x[0])),
            )
        )
    return out


def pair_judgments(
    first: dict[str, SessionJudgment], second: dict[str, SessionJudgment]
) -> dict[str, tuple[SessionJudgment, SessionJudgment]]:
    """Pair two judges' judgments on the sessions both judged."""
    return {sid: (first[sid], second[sid]) for sid in sorted(first) if sid in second}


def human_pairs(
    judgments: dict[str, list[SessionJudgment]],
) -> dict[str, tuple[SessionJudgment, SessionJudgment]]:
    """Pair the first two human judgments of every session judged by at least two people."""
    return {sid: (js[0], js[1]) for sid, js in sorted(judgments.items()) if len(js) >= 2}
