"""Golden tests: hand-built archetypes, every GRIP quantity computed by hand."""

from __future__ import annotations

import math

import pytest

from core.grip import aggregate, records_frame, score_episode
from core.grip.extract import discovery_strings
from core.grip.record import HIDDEN_TARGET_BUCKETS, Bucket
from core.model.episode import Outcome
from tests.core.grip.grip_archetypes import ARCHETYPES, POOLED
from tests.core.grip.grip_builders import EpisodeBuilder


def _same(got: object, want: object) -> bool:
    if want is None:
        return got is None
    return isinstance(got, (int, float)) and math.isclose(float(got), float(want))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(ARCHETYPES))
def test_archetype_by_hand(name: str) -> None:
    builder, expected = ARCHETYPES[name](f"ep-{name}")
    rec = score_episode(builder.header, builder.events)
    got = rec.model_dump(mode="json")
    for field, want in expected.items():
        assert _same(got[field], want) if not isinstance(want, str) else got[field] == want, (
            f"{name}.{field}: got {got[field]!r}, want {want!r}"
        )


def test_buckets_partition_hidden_target_and_earned_plus_inferred_is_success() -> None:
    recs = [score_episode(*_hb(f(f"e{i}"))) for i, f in enumerate(ARCHETYPES.values())]
    hidden = [r for r in recs if r.hidden_target]
    assert hidden and all(r.bucket in HIDDEN_TARGET_BUCKETS for r in hidden)
    assert all(r.bucket not in HIDDEN_TARGET_BUCKETS for r in recs if not r.hidden_target)
    for r in hidden:
        assert (r.earned or 0.0) + (r.inferred or 0.0) == r.success
    # each hidden-target episode in exactly one bucket, and every bucket kind is exercised
    seen = {r.bucket for r in recs}
    assert seen == set(Bucket)


def _hb(pair):  # type: ignore[no-untyped-def]
    b, _ = pair
    return b.header, b.events


def test_pooled_metrics_by_hand() -> None:
    recs = [score_episode(*_hb(f(f"e{i}"))) for i, f in enumerate(ARCHETYPES.values())]
    cells = aggregate(records_frame(recs), by=("benchmark",))
    assert set(cells["metric"]) == set(POOLED)
    for row in cells.to_dict("records"):
        value, denom = POOLED[row["metric"]]
        assert row["denominator"] == denom, row["metric"]
        if value is None:
            assert math.isnan(row["value"]), row["metric"]
        else:
            assert math.isclose(row["value"], value), row["metric"]
        assert math.isnan(row["sd"])  # one seed: no spread
    reaction = cells[cells.metric == "Reaction"].iloc[0]
    assert reaction["median"] == 1.0


def test_disclosure_for_an_older_intent_is_not_credited() -> None:
    # A reply stamped with an intent that is not current (e.g. a late reply) earns nothing.
    from core.model.events import Disclosure, UserReplied

    b = EpisodeBuilder("late")
    b.ask(("color",), answer=())
    last = b.events[-2]
    assert isinstance(last, UserReplied)
    b.events[-2] = last.model_copy(
        update={
            "intent_id": "someone-else",
            "disclosures": (Disclosure(slot="color", value="black", how="answer"),),
        }
    )
    b.ask(("size",)).propose(True).end(
        __import__("core.model.episode").model.episode.Outcome.SUCCESS
    )
    rec = score_episode(b.header, b.events)
    assert rec.bucket == Bucket.INFERRED and rec.recovery == 0.0


def test_discovery_strings() -> None:
    assert discovery_strings('["Red", "blue"]') == ("red", "blue")
    assert discovery_strings('["Red", "xy"]') == ()  # one element too short: undiscoverable
    assert discovery_strings(True) == ()
    assert discovery_strings(40.0) == ()
    assert discovery_strings(1500) == ("1500",)
    assert discovery_strings('"no longer needed"') == ("no longer needed",)


def test_recovery_counts_answers_only_and_discovery_is_its_own_column() -> None:
    """grip-3 ruling: a value that merely shows up in an observation is not recovered."""
    seen = "Results: Large Black cotton shirt $30"
    only_seen = EpisodeBuilder("seen").env("shirt", seen).propose(True)
    rec = score_episode(*_hb((only_seen.end(Outcome.SUCCESS), {})))
    assert (rec.recovery, rec.discovery, rec.bucket) == (0.0, 1.0, "INFERRED")
    # asked about both after seeing them: recovered by answers, discovery no longer needed
    asked = EpisodeBuilder("asked").env("shirt", seen).ask(("color",)).ask(("size",))
    rec = score_episode(*_hb((asked.propose(True).end(Outcome.SUCCESS), {})))
    assert (rec.recovery, rec.discovery, rec.bucket) == (1.0, 0.0, "EARNED")
