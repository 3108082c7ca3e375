"""The cost ledger's arithmetic and display, and redaction of every known key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.llm.ledger import ROLES, CostLedger, as_role, current, recording, split_view
from core.llm.secrets import known_secrets, redact, register_key_env


@given(
    st.lists(
        st.tuples(st.sampled_from(ROLES), st.floats(0, 5), st.booleans(), st.booleans()),
        max_size=30,
    )
)
def test_ledger_total_is_the_sum_of_provider_calls(
    calls: list[tuple[str, float, bool, bool]],
) -> None:
    book = CostLedger()
    for role, cost, cached, priced in calls:
        book.add(role, cost_usd=cost, cached=cached, priced=priced)
    expect = sum(c for _, c, cached, _ in calls if not cached)
    assert book.total_usd == pytest.approx(expect)
    rows = book.to_dict()
    assert sum(r["calls"] for r in rows.values()) == len(calls)
    merged = CostLedger()
    merged.merge(rows)
    merged.merge(book)
    assert merged.total_usd == pytest.approx(2 * expect)


def test_split_view_says_unpriced_never_zero() -> None:
    book = CostLedger()
    book.add("voice", cost_usd=0.0, priced=False)
    book.add("agent", cost_usd=0.25)
    assert split_view(book.to_dict()) == {"agent": 0.25, "voice": "unpriced"}


def test_context_ledger_and_role_override() -> None:
    outer = CostLedger()
    assert current() is None
    with recording(outer), as_role("reflection"):
        assert current() is outer
        from core.llm.ledger import role_override

        assert role_override() == "reflection"
    assert current() is None


def test_every_known_key_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret-value")
    monkeypatch.setenv("SOME_VENDOR_API_KEY", "vendor-secret-value-123")
    monkeypatch.setenv("MY_GATEWAY", "gw-secret-value-456")
    register_key_env("MY_GATEWAY")
    text = (
        "Incorrect API key provided: sk-openai-secret-value; vendor-secret-value-123; "
        "gw-secret-value-456; Authorization: Bearer abcdefgh12345678"
    )
    out = redact(text)
    for secret in ("sk-openai-secret-value", "vendor-secret-value-123", "gw-secret-value-456"):
        assert secret not in out and secret in known_secrets()
    assert "abcdefgh12345678" not in out and out.count("***") == 4
    assert redact("short key ab") == "short key ab"
