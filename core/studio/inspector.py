"""Read models of the Inspect page: find episodes by facets and describe one for researchers.

Researcher-only: these functions read the sample's mask and fault types. Agent-side pages never
call them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.model.base import StrictMutable
from core.model.events import EpisodeStarted, Event
from core.store import Store
from core.studio.plainwords import plain_status

FACETS = ("run", "benchmark", "method", "persona", "outcome", "fault")
"""Filters offered by :func:`episode_index`."""


def episode_index(
    store: Store,
    *,
    run: str | None = None,
    benchmark: str | None = None,
    method: str | None = None,
    persona: str | None = None,
    outcome: str | None = None,
    fault: str | None = None,
    episode: str | None = None,
    limit: int = 5000,
) -> list[dict[str, Any]]:
    """List episodes matching every given facet, newest first, with their fault types."""
    sql = (
        "SELECT e.episode_id, e.run_id, r.name AS run, e.benchmark, e.method, e.persona_id,"
        " e.seed, e.status, e.outcome, e.n_events, e.parent_episode_id, e.sample_id,"
        " s.fault_types, e.created_at FROM episodes e"
        " LEFT JOIN runs r ON r.run_id = e.run_id"
        " LEFT JOIN samples s ON s.sample_id = e.sample_id"
    )
    where: list[str] = []
    args: list[Any] = []
    for column, value in (
        ("e.episode_id", episode),
        ("e.benchmark", benchmark),
        ("e.method", method),
        ("e.persona_id", persona),
        ("e.outcome", outcome),
    ):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if run:
        where.append("(e.run_id = ? OR r.name = ?)")
        args += [run, run]
    if fault:
        where.append("(',' || s.fault_types || ',') LIKE ?")
        args.append(f"%,{fault},%")
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY e.created_at DESC, e.episode_id LIMIT ?"
    args.append(int(limit))
    cur = store.conn.execute(sql, args)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def facet_values(store: Store) -> dict[str, list[str]]:
    """Distinct values of each facet present in the store (for the filter widgets)."""
    conn = store.conn

    def distinct(sql: str) -> list[str]:
        return [str(r[0]) for r in conn.execute(sql).fetchall() if r[0] is not None]

    faults: set[str] = set()
    for (ft,) in conn.execute(
        "SELECT DISTINCT s.fault_types FROM samples s JOIN episodes e ON e.sample_id = s.sample_id"
    ):
        faults.update(f for f in str(ft).split(",") if f)
    return {
        "run": distinct("SELECT name FROM runs ORDER BY created_at DESC"),
        "benchmark": distinct("SELECT DISTINCT benchmark FROM episodes ORDER BY 1"),
        "method": distinct("SELECT DISTINCT method FROM episodes ORDER BY 1"),
        "persona": distinct("SELECT DISTINCT persona_id FROM episodes ORDER BY 1"),
        "outcome": distinct("SELECT DISTINCT outcome FROM episodes ORDER BY 1"),
        "fault": sorted(faults),
    }


class HiddenTruth(StrictMutable):
    """What the researcher reveal shows: the hidden intent, the mask, the faults."""

    query: str
    faults: list[str]
    hidden_slots: list[str]
    mask: list[dict[str, Any]]
    root_conditions: list[dict[str, Any]]
    persona: str
    budget: float
    thresholds: list[float]
    fates: list[bool]
    graph_nodes: int = Field(description="Nodes of the intent graph (root + children).")


def hidden_truth(events: list[Event]) -> HiddenTruth:
    """Extract the researcher reveal from an episode's first event."""
    first = events[0]
    if not isinstance(first, EpisodeStarted):
        raise ValueError("episode log does not start with episode_started")
    s = first.sample
    root = first.graph.node(s.root_intent_id)
    return HiddenTruth(
        query=s.query,
        faults=[str(f) for f in s.faults],
        hidden_slots=list(s.hidden_slots),
        mask=[m.model_dump(mode="json") for m in s.mask],
        root_conditions=[c.model_dump(mode="json") for c in root.conditions],
        persona=first.persona.id,
        budget=first.budget,
        thresholds=list(first.thresholds),
        fates=list(first.fates),
        graph_nodes=len(first.graph.nodes),
    )


# ------------------------------------------------------------------------------ the log viewer
TABLE_COLUMNS: tuple[str, ...] = (
    "episode",
    "run",
    "benchmark",
    "method",
    "persona",
    "seed",
    "outcome",
    "events",
    "faults",
    "branch of",
    "created",
)
"""Columns of the Inspect page's episode table (all text but ``seed`` and ``events``)."""


def table_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`episode_index` rows as the episode table shows them (one type per column).

    Every column holds one type (text, or whole numbers for seed and events), so the table's
    Arrow conversion never meets a mixed-type column.
    """
    out = []
    for r in rows:
        out.append(
            {
                "episode": str(r["episode_id"]),
                "run": str(r.get("run") or r.get("run_id") or ""),
                "benchmark": str(r["benchmark"]),
                "method": str(r["method"]),
                "persona": str(r["persona_id"]),
                "seed": int(r["seed"]),
                "outcome": plain_status(r.get("outcome"), r.get("status")),
                "events": int(r.get("n_events") or 0),
                "faults": str(r.get("fault_types") or "").replace(",", ", "),
                "branch of": str(r.get("parent_episode_id") or ""),
                "created": str(r.get("created_at") or "")[:19].replace("T", " "),
            }
        )
    return out


def choose_episode(ids: list[str], current: str | None, clicked: str | None) -> str | None:
    """The episode the Inspect page shows: a click wins, then the current one, then the first.

    The selection follows the filters: when the current episode is filtered out, the first
    episode of the filtered list is shown (it is never pinned back into the list).

    >>> choose_episode(["a", "b"], "b", None), choose_episode(["a"], "b", None)
    ('b', 'a')
    >>> choose_episode(["a", "b"], "a", "b"), choose_episode([], "a", None) is None
    ('b', True)
    """
    if clicked is not None and clicked in ids:
        return clicked
    if current is not None and current in ids:
        return current
    return ids[0] if ids else None


class RevealCondition(StrictMutable):
    """One condition of the hidden intent, in the host's words."""

    slot: str
    op: str
    value: str
    phrase: str


class RevealMask(StrictMutable):
    """How the opening request treats one slot of the truth."""

    slot: str
    kind: str
    fault: str
    true_value: str
    stated_value: str
    surface: str
    hidden: bool


class RevealShift(StrictMutable):
    """One silent shift: where it fired and what changed."""

    turn: int
    operator: str
    delta: str
    trigger: str
    to_intent: str


class Reveal(StrictMutable):
    """The researcher reveal as structured fields."""

    query: str
    faults: list[str]
    hidden_slots: list[str]
    persona: str
    budget: float
    thresholds: list[float]
    fates: list[str]
    mask: list[RevealMask]
    start_intent: list[RevealCondition]
    final_intent: list[RevealCondition]
    shifts: list[RevealShift]
    lessons: list[str] = Field(
        default_factory=list, description="A3: the lesson book in force (one line per entry)."
    )


def _plain(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return ", ".join(_plain(x) for x in v)
    return str(v)


def reveal(events: list[Event], world: Any | None = None) -> Reveal:
    """The researcher reveal of an episode: request, faults, mask, hidden intents, shifts.

    Args:
        events: The episode's events (the first is ``episode_started``).
        world: The host world (its ``phrase`` words each condition); None = ``slot op value``.
    """
    from core.model.events import ShiftFired

    first = events[0]
    if not isinstance(first, EpisodeStarted):
        raise ValueError("episode log does not start with episode_started")
    s = first.sample
    graph = first.graph
    hidden = set(s.hidden_slots)

    def conditions(intent_id: str) -> list[RevealCondition]:
        intent = graph.node(intent_id)
        out = []
        for c in intent.conditions:
            try:
                phrase = world.phrase(c) if world is not None else ""
            except Exception:  # noqa: BLE001 - a host that cannot word a condition
                phrase = ""
            out.append(
                RevealCondition(
                    slot=c.slot,
                    op=str(c.op),
                    value=_plain(c.value),
                    phrase=phrase or f"{c.slot} {c.op} {_plain(c.value)}",
                )
            )
        return out

    shifts = [
        RevealShift(
            turn=ev.turn,
            operator=str(ev.edge.operator),
            delta=_plain(ev.edge.delta),
            trigger="after an agent question" if ev.trigger else "scheduled",
            to_intent=ev.edge.dst,
        )
        for ev in events
        if isinstance(ev, ShiftFired)
    ]
    final = shifts[-1].to_intent if shifts else s.root_intent_id
    return Reveal(
        query=s.query,
        faults=[str(f) for f in s.faults],
        hidden_slots=list(s.hidden_slots),
        persona=first.persona.id,
        budget=first.budget,
        thresholds=list(first.thresholds),
        fates=["fires" if f else "skipped" for f in first.fates],
        mask=[
            RevealMask(
                slot=m.slot,
                kind=str(getattr(m.kind, "value", m.kind)),
                fault=str(m.fault.value) if m.fault else "",
                true_value=_plain(m.true_value),
                stated_value=_plain(m.stated_value),
                surface=m.surface or "",
                hidden=m.slot in hidden,
            )
            for m in s.mask
        ],
        start_intent=conditions(s.root_intent_id),
        final_intent=conditions(final) if shifts else [],
        shifts=shifts,
        lessons=lesson_lines(events),
    )


def lesson_lines(events: list[Event]) -> list[str]:
    """A3's lesson book as recorded in the episode (``lesson_book`` event), one line each."""
    from core.model.events import LessonBookUsed

    book = next((e for e in events if isinstance(e, LessonBookUsed)), None)
    if book is None:
        return []
    head = (
        f"{book.book}: generation {book.generation} (generations of {book.generation_size}), "
        f"built from {book.episodes_seen} finished episodes"
    )
    lines = [head]
    for x in book.lessons:
        if "when" in x:
            lines.append(f"when {x.get('when')}: {x.get('do')}")
        else:
            lines.append(
                f"{x.get('signature')} · {x.get('family')}: {x.get('paid')}/{x.get('asked')} paid"
            )
    if len(lines) == 1:
        lines.append("(empty book)")
    return lines
