"""The debrief a person reads after playing the agent: the truth they were blind to.

Only for an episode that has ended (until then the play-as-agent page must stay blind, so
:func:`agent_debrief` refuses). It tells, in the host's own words, what the simulated customer
really wanted at the start and at the end, which silent shifts fired and at which turn, why the
episode ended, and the episode's GRIP metrics (undefined ones shown as "—", never 0).
"""

from __future__ import annotations

from core.engine.eventlog import EventLog
from core.errors import ProtocolError
from core.grip import score_episode
from core.grip.metrics import EPISODE_METRICS
from core.model.base import Strict
from core.model.events import EpisodeEnded, EpisodeStarted, ShiftFired
from core.model.intent import Intent
from core.studio.plainwords import plain_outcome, plain_termination
from core.studio.roleplay import describe_shift, world_for

UNDEFINED = "—"


class DebriefShift(Strict):
    """One silent shift, where it fired and what changed."""

    turn: int
    operator: str
    change: str
    trigger: str


class DebriefMetric(Strict):
    """One GRIP metric of the episode."""

    name: str
    value: str
    meaning: str


class Debrief(Strict):
    """What the person playing the agent learns once the episode is over."""

    outcome: str
    ending: str
    opening: str
    wanted_at_start: tuple[str, ...]
    wanted_at_end: tuple[str, ...]
    shifts: tuple[DebriefShift, ...]
    metrics: tuple[DebriefMetric, ...]


def _metric_text(name: str, unit: str, value: float | None) -> str:
    if value is None or value != value:
        return UNDEFINED
    if unit == "budget":
        return f"{value:.2f} budget units"
    if unit == "turns":
        return f"{value:g} turns"
    return f"{value * 100:.0f}%"


def agent_debrief(log: EventLog, episode_id: str) -> Debrief:
    """The debrief of an ended play-as-agent episode.

    Raises:
        ProtocolError: The episode has not ended (the agent side stays blind until it does).
    """
    header = log.header(episode_id)
    events = log.events(episode_id)
    end = next((e for e in reversed(events) if isinstance(e, EpisodeEnded)), None)
    if end is None:
        raise ProtocolError("the debrief opens when the episode has ended")
    start = events[0]
    if not isinstance(start, EpisodeStarted):
        raise ProtocolError(f"episode {episode_id} has no start event")
    world = world_for(log, episode_id)
    graph = start.graph
    nodes: dict[str, Intent] = {n.intent_id: n for n in graph.nodes}
    root = nodes[start.sample.root_intent_id]

    def wants(intent: Intent) -> tuple[str, ...]:
        return tuple(world.phrase(c) for c in intent.conditions)

    shifts = []
    current = root
    for ev in events:
        if isinstance(ev, ShiftFired):
            src, dst = nodes.get(ev.edge.src), nodes.get(ev.edge.dst)
            change = (
                describe_shift(world, src, dst, ev.edge.operator)
                if src is not None and dst is not None
                else "the customer's wishes changed"
            )
            shifts.append(
                DebriefShift(
                    turn=ev.turn,
                    operator=str(ev.edge.operator),
                    change=change,
                    trigger="right after one of your messages" if ev.trigger else "silently",
                )
            )
            current = dst or current
    record = score_episode(header, events)
    metrics = tuple(
        DebriefMetric(
            name=m.name,
            value=_metric_text(m.name, m.unit, getattr(record, m.column, None)),
            meaning=m.denominator,
        )
        for m in EPISODE_METRICS
    )
    return Debrief(
        outcome=plain_outcome(str(end.outcome)),
        ending=plain_termination(str(end.reason)),
        opening=start.sample.query,
        wanted_at_start=wants(root),
        wanted_at_end=wants(current) if shifts else (),
        shifts=tuple(shifts),
        metrics=metrics,
    )
