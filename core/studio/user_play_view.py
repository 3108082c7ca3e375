"""The play-as-user page's view: the user view plus verdicts and silent shifts in plain words."""

from __future__ import annotations

from pydantic import Field

from core.engine import episode
from core.engine.eventlog import EventLog
from core.envs.base import HostWorld
from core.model.base import Strict
from core.model.episode import UserView
from core.model.events import EpisodeEnded, EpisodeStarted, ProposalJudged, ShiftFired, TurnStarted
from core.model.intent import Intent
from core.studio.plainwords import plain_reason
from core.studio.play_worlds import episode_loader


class VerdictLine(Strict):
    """One proposal the agent made and how execution judged it."""

    turn: int
    accepted: bool
    reason: str = Field(description="The host's reason code (researchers only).")
    plain: str = Field(default="", description="The verdict in plain words (what people see).")
    score: float | None = None
    via: str


class ShiftBanner(Strict):
    """One silent shift of the user's goal, in plain words for the person playing the user."""

    turn: int
    operator: str
    text: str = Field(description="What changed, phrased with the host's phrases.")
    after_reply: bool


class UserPlayView(Strict):
    """Everything the play-as-user page shows."""

    user: UserView
    method: str
    agent: str
    turn: int
    verdicts: tuple[VerdictLine, ...] = ()
    shifts: tuple[ShiftBanner, ...] = ()
    reason: str | None = Field(default=None, description="Termination reason once ended.")


def describe_shift(world: HostWorld, src: Intent, dst: Intent, operator: str) -> str:
    """Say in the user's words how ``dst`` differs from ``src``."""
    if operator == "pivot" or src.env_id != dst.env_id or src.base != dst.base:
        wants = "; ".join(world.phrase(c) for c in dst.conditions)
        return f"something else now ({dst.env_id}): {wants}"
    old, new = src.slot_map(), dst.slot_map()
    parts = []
    for slot, cond in new.items():
        if slot not in old:
            parts.append(f"new: {world.phrase(cond)}")
        elif old[slot].value != cond.value or old[slot].op != cond.op:
            parts.append(f"changed: {world.phrase(cond)} (was: {world.phrase(old[slot])})")
    parts += [f"dropped: {world.phrase(c)}" for s, c in old.items() if s not in new]
    return "; ".join(parts) or "your wishes changed"


def user_play_view(log: EventLog, episode_id: str) -> UserPlayView:
    """Build the play-as-user page's view: the user view plus verdicts and shift banners."""
    header = log.header(episode_id)
    events = log.events(episode_id)
    loader = episode_loader(log, episode_id)
    user = episode.user_view(log, episode_id, world_loader=loader)
    world = loader(header.benchmark)
    nodes: dict[str, Intent] = {}
    turn, reason = 0, None
    verdicts, shifts = [], []
    for ev in events:
        if isinstance(ev, EpisodeStarted):
            nodes = {n.intent_id: n for n in ev.graph.nodes}
        elif isinstance(ev, TurnStarted):
            turn = ev.turn
        elif isinstance(ev, ProposalJudged):
            verdicts.append(
                VerdictLine(
                    turn=ev.turn,
                    accepted=ev.accepted,
                    reason=ev.reason,
                    plain=plain_reason(ev.reason, accepted=ev.accepted),
                    score=ev.score,
                    via=ev.via,
                )
            )
        elif isinstance(ev, ShiftFired):
            src, dst = nodes.get(ev.edge.src), nodes.get(ev.edge.dst)
            text = (
                describe_shift(world, src, dst, ev.edge.operator)
                if src is not None and dst is not None
                else "your wishes changed"
            )
            shifts.append(
                ShiftBanner(
                    turn=ev.turn, operator=ev.edge.operator, text=text, after_reply=ev.after_reply
                )
            )
        elif isinstance(ev, EpisodeEnded):
            reason = ev.reason.value
    return UserPlayView(
        user=user,
        method=header.method,
        agent=header.agent,
        turn=turn,
        verdicts=tuple(verdicts),
        shifts=tuple(shifts),
        reason=reason,
    )
