"""The suggestibility trigger judges the question's own words, never the slot ids declared.

On WebShop a feature's slot id *is* its hidden value (``attr:machine wash``), so counting
declared ids as the question's words would let an id fire an on-topic shift the text never
asked about.
"""

from __future__ import annotations

from protohelp import persona

from core.model.actions import Ask
from core.model.events import ShiftFired


def _triggered(log, eid):  # type: ignore[no-untyped-def]
    return [e for e in log.events(eid) if isinstance(e, ShiftFired) and e.trigger is not None]


def test_declared_ids_with_off_topic_text_never_trigger(play) -> None:  # type: ignore[no-untyped-def]
    p = persona("intuitive", suggestibility=1.0)
    for seed in range(20):
        q = Ask(text="Could you tell me more?", asks=("size", "color"))
        lg, eid, _ = play([q], persona_=p, seed=seed)
        assert _triggered(lg, eid) == []


def test_the_same_topic_in_words_triggers(play) -> None:  # type: ignore[no-untyped-def]
    p = persona("intuitive", suggestibility=1.0)
    hits = 0
    for seed in range(20):
        lg, eid, _ = play([Ask(text="Which size do you wear?", asks=())], persona_=p, seed=seed)
        hits += bool(_triggered(lg, eid))
    assert hits == 20
