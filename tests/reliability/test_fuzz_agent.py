"""Fuzzed agent output: the parser, the episode loop and LLM agents never raise unhandled errors.

Three layers, each driven by hypothesis with explicit example counts (fast enough for the
normal suite):

* ``parse_reply`` / ``from_tool_calls`` on arbitrary and near-miss text;
* ``core.engine.episode.step`` with random typed actions (any tool name, any JSON arguments);
* LLM agents of every method on the mock benchmark, fed random text through ``ScriptedLLM``.

After every episode: seq contiguous, exactly one ``episode_ended`` (last), patience never rises
and never drops below 0, and the stored events round-trip through the event parser.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.agents.factory import build_agent
from core.agents.wire import ParseResult, from_tool_calls, parse_reply
from core.engine import episode
from core.engine.eventlog import InMemoryEventLog
from core.envs.mock import load_mock_world, mock_graph, mock_samples
from core.errors import ProtocolError
from core.llm import ScriptedLLM
from core.model.actions import Ask, EnvOp, Malformed, Propose
from core.model.events import parse_event
from core.model.run import PERSONAS
from core.model.world import EnvAction, ToolSpec
from core.settings import settings as driftbench_settings
from tests.reliability.conftest import assert_episode_invariants

WORLD = load_mock_world()
TOOLS: list[ToolSpec] = [
    *WORLD.tools(),
    ToolSpec(
        name="update_order",
        description="A keyword tool with several parameters (τ²-style).",
        parameters={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "items": {"type": "array"}},
        },
        kind="write",
    ),
]
SAMPLES = mock_samples()
GRAPH = mock_graph()
METHODS = ("B0", "A0", "A1", "A2", "A3", "L0", "RS", "LIT")
FUZZ = settings(
    max_examples=driftbench_settings().fuzz_examples,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

# -- text strategies -------------------------------------------------------------------------
_words = st.sampled_from(
    [
        "Action:",
        "action :",
        "**Action**:",
        "Operation",
        "Clarify",
        "Answer",
        "Final Answer:",
        "Content:",
        "Candidates: [a, b",
        "Predicted user question:",
        "MEMORY: {",
        'MEMORY: {"k": [1, 2]}',
        "}",
        "```",
        "```python\n",
        "search[",
        "search[red shoes]",
        'buy(item_id="s01")',
        "view(item_id=",
        "update_order(order_id='#1', items=[1, {2: 3}])",
        'update_order{"order_id": 1}',
        "click[buy now]",
        "\n",
        "\\",
        "[[[[",
        "((((",
        "{{{{",
        "\x00",
        "\u202e",
        "🙂",
        "<script>alert(1)</script>",
    ]
)
near_miss = st.lists(st.one_of(_words, st.text(max_size=20)), max_size=25).map(" ".join)
any_text = st.one_of(st.text(max_size=400), near_miss, st.binary(max_size=200).map(repr))

json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def _check_result(res: ParseResult) -> None:
    assert isinstance(res.action, (EnvOp, Ask, Propose, Malformed))
    if isinstance(res.action, Malformed):
        assert res.action.problems, "a malformed action says what is wrong"
    else:
        assert res.ok
    if isinstance(res.action, EnvOp):
        assert res.action.action.tool in {t.name for t in TOOLS}
    stored = res.action.model_dump_json()  # what the event log keeps …
    assert type(res.action).model_validate_json(stored) == res.action  # … reads back equal


@FUZZ
@given(text=any_text, can_ask=st.booleans(), memory=st.booleans())
def test_parse_reply_never_raises(text: str, can_ask: bool, memory: bool) -> None:
    res = parse_reply(text, TOOLS, can_ask=can_ask, state_labels=("MEMORY",) if memory else ())
    _check_result(res)
    if not can_ask:
        assert not isinstance(res.action, Ask)


@FUZZ
@given(
    calls=st.lists(
        st.tuples(
            st.one_of(st.sampled_from([t.name for t in TOOLS]), st.text(max_size=12)),
            st.one_of(st.text(max_size=60), json_value.map(json.dumps)),
        ),
        max_size=3,
    ),
    raw=st.text(max_size=40),
)
def test_native_tool_calls_never_raise(calls: list[tuple[str, str]], raw: str) -> None:
    _check_result(from_tool_calls(calls, TOOLS, raw=raw))


# -- typed actions through the episode loop ---------------------------------------------------
actions = st.one_of(
    st.builds(
        lambda tool, args: EnvOp(action=EnvAction(tool=tool, args=args)),
        st.one_of(st.sampled_from([t.name for t in TOOLS]), st.text(max_size=10)),
        st.dictionaries(
            st.one_of(st.sampled_from(["query", "item_id", "target"]), st.text(max_size=8)),
            json_value,
            max_size=3,
        ),
    ),
    st.builds(
        lambda text, asks: Ask(text=text, asks=asks),
        any_text,
        st.one_of(
            st.none(), st.lists(st.sampled_from(["color", "size", "x"]), max_size=3).map(tuple)
        ),
    ),
    st.builds(lambda text: Propose(text=text), any_text),
    st.builds(lambda raw: Malformed(raw=raw, problems=("fuzz",)), st.text(max_size=50)),
)


def _check_log(log: InMemoryEventLog, eid: str) -> None:
    events = log.events(eid)
    dumped = [json.loads(e.model_dump_json()) for e in events]
    assert_episode_invariants(dumped)
    assert [parse_event(d) for d in dumped] == events  # what the store keeps reads back equal
    assert log.outcome(eid) is not None


@FUZZ
@given(
    sample_i=st.integers(0, len(SAMPLES) - 1),
    persona=st.sampled_from(PERSONAS),
    seed=st.integers(0, 2**31),
    acts=st.lists(actions, min_size=1, max_size=40),
)
def test_random_typed_actions_keep_invariants(
    sample_i: int, persona: str, seed: int, acts: list[Any]
) -> None:
    log = InMemoryEventLog()
    sample = SAMPLES[sample_i]
    eid = episode.start(log, sample, persona, seed, "fuzz", graph=GRAPH, method="A2")
    for action in acts:
        view = episode.agent_view(log, eid)
        if view.ended:
            with pytest.raises(ProtocolError):
                episode.step(log, eid, action)
            break
        episode.step(log, eid, action)
    while not episode.agent_view(log, eid).ended:  # finish: answer until judged
        episode.step(log, eid, Propose(text="done"))
    _check_log(log, eid)


# -- LLM agents fed random text ---------------------------------------------------------------
@FUZZ
@given(
    method=st.sampled_from(METHODS),
    sample_i=st.integers(0, len(SAMPLES) - 1),
    persona=st.sampled_from(PERSONAS),
    replies=st.lists(any_text, min_size=1, max_size=12),
)
def test_llm_agents_on_random_text_keep_invariants(
    method: str, sample_i: int, persona: str, replies: list[str]
) -> None:
    sample = SAMPLES[sample_i]
    client = ScriptedLLM(replies, cycle=True)
    from core.agents.lessons import LessonBook
    from core.runner.plan import literal_intent

    agent = build_agent(
        method,
        world=WORLD,
        literal=literal_intent(sample, GRAPH),
        client=client,
        lessons=LessonBook(banned_words=set()),
    )
    log = InMemoryEventLog()
    eid = episode.start(log, sample, persona, 0, client.spec.label, graph=GRAPH, method=method)
    state = episode.run(log, eid, agent, max_steps=200)
    assert state.ended
    _check_log(log, eid)
    if state.outcome is not None and state.outcome.value == "ERROR":
        pytest.fail(f"random text ended the episode as ERROR: {log.events(eid)[-1]}")


def test_native_tool_call_with_nan_is_rejected_or_round_trips() -> None:
    res = from_tool_calls([("search", '{"query": NaN}')], TOOLS)
    if isinstance(res.action, Malformed):
        return
    assert EnvOp.model_validate_json(res.action.model_dump_json()) == res.action
