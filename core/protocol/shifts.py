"""The silent-shift scheduler.

* Thresholds = placement × initial budget, crossed when patience falls to or below them (a 1.0
  placement is crossed at the start). Each crossing pops a fate drawn at episode start: *fire*
  makes one shift due, *skip* is recorded and the goal stands.
* A due shift fires after the user's reply to a question (at most one per exchange) and all due
  shifts are flushed before a proposal is adjudicated. Environment actions never fire shifts.
* Moves: the graph's stored root edges plus every other pair classified by the one shift rule
  (:func:`core.model.shift.classify_shift`), kept on the graph object
  (:meth:`core.model.intent.IntentGraph.transitions`).
* Destination: a category drawn from the benchmark's mix (resampling among populated
  categories), then a uniform edge (sorted by destination); no revisits.
* Suggestibility: an on-topic question (the interpreter reads its own words as asking about a
  non-pivot edge's changed slots; declared slot ids do not count) fires a shift with the
  persona's probability, restricted to the matched categories, consuming the last remaining
  placement, so the number of shifts never grows.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.envs.base import HostWorld
from core.model.config import BenchmarkProtocol, ProtocolConfig
from core.model.events import ShiftDue, ShiftEdge, ShiftFired, ShiftSkipped, ShiftTrigger
from core.model.intent import IntentGraph
from core.model.shift import delta_slots
from core.protocol.emit import Emitter
from core.protocol.rng import draw, pick, weighted
from core.protocol.state import EpisodeState


def draw_fates(rng_key: str, n: int, fire_prob: float, enabled: bool = True) -> tuple[bool, ...]:
    """Pre-draw the fire (True) / skip fate of each of ``n`` placements."""
    if not enabled or fire_prob <= 0.0:
        return tuple(False for _ in range(n))
    return tuple(draw(rng_key, "shift-fire", i) < fire_prob for i in range(n))


def transitions(graph: IntentGraph, src_id: str) -> tuple[ShiftEdge, ...]:
    """Return every legal move from ``src_id`` (see :meth:`IntentGraph.transitions`).

    Stored edges for the root, every other pair classified by the one shift rule
    (:func:`core.model.shift.classify_shift`); the table is kept on the graph object.
    """
    return graph.transitions(src_id)


def legal_edges(state: EpisodeState, config: ProtocolConfig) -> list[ShiftEdge]:
    """Return moves from the current node that the revisit rule allows."""
    assert state.graph is not None
    edges = transitions(state.graph, state.intent_id)
    if config.allow_revisit:
        return list(edges)
    seen = set(state.visited)
    return [e for e in edges if e.dst not in seen]


def choose_destination(
    edges: Sequence[ShiftEdge], bp: BenchmarkProtocol, rng_key: str, index: int
) -> ShiftEdge | None:
    """Draw a category from the mix (resampling empty ones), then a uniform edge.

    Args:
        edges: Legal edges.
        bp: The benchmark's mix and empty-category rule.
        rng_key: Episode random key.
        index: Which shift of the episode this is (counter base).
    """
    tried: set[str] = set()
    for attempt in range(len(bp.category_mix) + 1):
        mix = [(c, p) for c, p in bp.category_mix.items() if p > 0 and c not in tried]
        if not mix:
            return None
        cat = weighted(mix, draw(rng_key, "shift-destination", index * 64 + attempt))
        pool = [e for e in edges if e.operator == cat]
        if pool:
            return pick(pool, draw(rng_key, "shift-edge", index * 64 + attempt))
        if bp.on_empty_category == "skip":
            return None
        tried.add(cat)
    return None


def shifting_on(config: ProtocolConfig) -> bool:
    """Return whether silent shifts are enabled at all."""
    return config.shifts_enabled and config.shift_fire_prob > 0.0


def mark_due(em: Emitter, config: ProtocolConfig) -> None:
    """Consume every threshold at or above the current patience, popping its fate."""
    st = em.state
    while st.thresholds and st.patience <= st.thresholds[0] + config.epsilon:
        t = st.thresholds[0]
        if st.fates[0]:
            em.emit(ShiftDue, threshold=t)
        else:
            em.emit(ShiftSkipped, threshold=t, reason="fate_skip")


def fire_due(em: Emitter, config: ProtocolConfig, *, after_reply: bool) -> ShiftFired | None:
    """Fire one due shift (or record why it could not move the goal)."""
    st = em.state
    if st.due <= 0:
        return None
    if not shifting_on(config):
        em.emit(ShiftSkipped, reason="disabled")
        return None
    if st.shifts_fired >= st.max_shifts:
        em.emit(ShiftSkipped, reason="cap_reached")
        return None
    assert st.sample is not None
    bp = config.for_benchmark(st.sample.benchmark)
    edge = choose_destination(legal_edges(st, config), bp, st.rng_key, st.shifts_fired)
    if edge is None:
        em.emit(ShiftSkipped, reason="no_destination")
        return None
    return _fire(em, edge, trigger=None, after_reply=after_reply, consumed="due", threshold=None)


def flush(em: Emitter, config: ProtocolConfig) -> list[ShiftFired]:
    """Fire every due shift (before adjudication / the forced final answer)."""
    out = []
    while em.state.due > 0:
        got = fire_due(em, config, after_reply=False)
        if got is not None:
            out.append(got)
    return out


def _fire(
    em: Emitter,
    edge: ShiftEdge,
    *,
    trigger: ShiftTrigger | None,
    after_reply: bool,
    consumed: str,
    threshold: float | None,
) -> ShiftFired:
    st = em.state
    assert st.graph is not None
    dst = st.graph.node(edge.dst)
    return em.emit(
        ShiftFired,
        edge=edge,
        dst_slots=tuple(c.slot for c in dst.conditions),
        trigger=trigger,
        after_reply=after_reply,
        consumed=consumed,
        threshold=threshold,
    )


def trigger_matches_text(
    state: EpisodeState, question: str, world: HostWorld, config: ProtocolConfig
) -> list[tuple[ShiftEdge, list[str]]]:
    """Return legal non-pivot edges whose changed slots the question's own words ask about.

    On-topic is judged by the simulated user's interpreter on the message text (over each
    edge's changed slots), never by slot ids an agent declares.
    """
    from core.protocol.interpret import asked_about

    assert state.graph is not None
    src = state.current
    out = []
    for e in legal_edges(state, config):
        if e.operator == "pivot":
            continue
        dst = state.graph.node(e.dst)
        conds = {c.slot: c for c in (*dst.conditions, *src.conditions)}
        changed = [conds[s] for s in delta_slots(src, dst)]
        hit = asked_about(question, world, changed)
        if hit:
            out.append((e, hit))
    return out


def try_trigger(
    em: Emitter, question: str, asked: Sequence[str], world: HostWorld, config: ProtocolConfig
) -> ShiftFired | None:
    """Fire a suggestibility-triggered shift if the question is on-topic and the coin says so.

    The trigger consumes the last remaining placement (or, with none left, a due shift); with
    neither left it fires nothing.
    """
    st = em.state
    assert st.persona is not None
    if not (shifting_on(config) and config.suggestibility_enabled):
        return None
    if st.shifts_fired >= st.max_shifts or (not st.thresholds and st.due <= 0):
        return None
    matches = trigger_matches_text(st, question, world, config)
    if not matches:
        return None
    if draw(st.rng_key, "shift-trigger", st.turn) >= st.persona.suggestibility:
        return None
    cats = sorted({e.operator for e, _ in matches})
    cat = pick(cats, draw(st.rng_key, "trigger-category", st.turn))
    pool = [(e, hit) for e, hit in matches if e.operator == cat]
    edge, hit = pick(pool, draw(st.rng_key, "trigger-edge", st.turn))
    trig = ShiftTrigger(slots=tuple(hit), categories=tuple(cats))
    if st.thresholds:
        return _fire(
            em,
            edge,
            trigger=trig,
            after_reply=True,
            consumed="placement",
            threshold=st.thresholds[-1],
        )
    return _fire(em, edge, trigger=trig, after_reply=True, consumed="due", threshold=None)
