"""Hot-path model construction equals validated construction."""

from __future__ import annotations

import pytest

from core.model.actions import Ask, EnvOp
from core.model.episode import TranscriptEntry
from core.model.events import AgentActed, TurnStarted
from core.model.world import EnvAction
from core.protocol.fast import construct, construct_defaults


def test_construct_equals_validation_and_serialises_identically() -> None:
    a = EnvOp(action=EnvAction(tool="search", args={"query": "teal"}))
    fast = construct(TranscriptEntry, {"turn": 2, "role": "agent", "text": "x", "action": a})
    slow = TranscriptEntry(turn=2, role="agent", text="x", action=a)
    assert fast == slow and fast.model_dump_json() == slow.model_dump_json()
    assert fast.model_fields_set == slow.model_fields_set | {"action"}


def test_construct_defaults_fills_plain_defaults_in_field_order() -> None:
    ask = Ask(text="Which size?", asks=("size",))
    fast = construct_defaults(AgentActed, {"seq": 3, "turn": 1, "action": ask})
    slow = AgentActed(seq=3, turn=1, action=ask)
    assert fast == slow and fast.model_dump_json() == slow.model_dump_json()
    assert list(fast.__dict__) == list(AgentActed.model_fields)


def test_construct_rejects_missing_and_unknown_fields() -> None:
    with pytest.raises(ValueError):
        construct(TranscriptEntry, {"turn": 1, "role": "user", "text": "x"})
    with pytest.raises(ValueError):
        construct_defaults(TurnStarted, {"seq": 0, "turn": 1, "patience": 1.0})  # no intent_id
    with pytest.raises(ValueError):
        construct_defaults(
            TurnStarted, {"seq": 0, "turn": 1, "patience": 1.0, "intent_id": "i", "bogus": 1}
        )
