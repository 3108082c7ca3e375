"""Property tests (hypothesis) over random action sequences on the mock world."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protohelp import ListAgent, ask, buy, persona, search

from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import mock_graph, mock_samples
from core.model.actions import Ask, Malformed, Propose
from core.model.config import ProtocolConfig
from core.model.events import PatienceCharged, ShiftFired, TurnStarted, dump_event, parse_event
from core.protocol.state import replay
from core.protocol.views import state_dict

PIDS = ["rational", "dependent", "avoidant", "intuitive", "spontaneous"]
SAMPLES = mock_samples()


def _action(i: int):
    return [
        ask("color", "What colour?"),
        ask("size", "Which size?"),
        ask(None, "Anything else?"),
        Ask(text="What's your budget and the material?"),
        search("teal shirt"),
        buy("s01"),
        buy("s04"),
        Propose(text="done"),
        Malformed(raw="??"),
    ][i]


episodes = st.tuples(
    st.sampled_from(PIDS),
    st.integers(0, 1000),
    st.sampled_from([0.0, 0.6, 1.0]),
    st.integers(0, len(SAMPLES) - 1),
    st.lists(st.integers(0, 8), max_size=25),
)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(spec):
    pid, seed, fire, si, acts = spec
    log = InMemoryEventLog()
    eid = episode.start(
        log, SAMPLES[si], pid, seed, "L", ProtocolConfig(shift_fire_prob=fire), graph=mock_graph()
    )
    state = episode.run(log, eid, ListAgent([_action(i) for i in acts]))
    return log, eid, state


@SETTINGS
@given(episodes)
def test_patience_never_increases_never_negative(spec):
    log, eid, state = _run(spec)
    seq = [log.events(eid)[0].budget]
    for e in log.events(eid):
        if isinstance(e, PatienceCharged):
            assert e.before == seq[-1]
            seq.append(e.after)
        elif isinstance(e, TurnStarted):
            assert e.patience == seq[-1]
    assert all(b >= a for a, b in zip(seq[1:], seq, strict=False))
    assert min(seq) >= 0.0 and state.ended


@SETTINGS
@given(episodes)
def test_shifts_never_exceed_placements(spec):
    log, eid, _ = _run(spec)
    n = len(persona(spec[0]).shift_placements)
    fired = [e for e in log.events(eid) if isinstance(e, ShiftFired)]
    assert len(fired) <= n
    assert len({e.edge.dst for e in fired}) == len(fired)


@SETTINGS
@given(episodes)
def test_event_log_round_trips_through_json(spec):
    log, eid, _ = _run(spec)
    events = log.events(eid)
    text = json.dumps([dump_event(e) for e in events])
    back = [parse_event(d) for d in json.loads(text)]
    assert back == events
    assert [e.seq for e in events] == list(range(len(events)))


@SETTINGS
@given(episodes)
def test_replay_reproduces_the_state(spec):
    log, eid, state = _run(spec)
    assert state_dict(replay(log.events(eid))) == state_dict(state)


@SETTINGS
@given(episodes)
def test_same_seed_same_policy_identical_log(spec):
    a, ea, _ = _run(spec)
    b, eb, _ = _run(spec)
    da = json.dumps([dump_event(e) for e in a.events(ea)], sort_keys=True)
    db = json.dumps([dump_event(e) for e in b.events(eb)], sort_keys=True)
    assert da == db
    assert a.header(ea).deterministic_dump() == b.header(eb).deterministic_dump()
