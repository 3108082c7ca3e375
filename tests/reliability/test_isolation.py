"""Isolation in a shared studio (issue 22 items 4 and 5, landed with issue 21; verified here).

* A play episode belongs to the person who started it: another annotator who pastes its id
  into ``?episode=`` is refused, for both play pages.
* Header mode trusts identity headers only from the proxy: with a shared secret, a request
  without it (or with a guess) is refused; without one, only loopback or a declared proxy
  address may send them — ``X-Forwarded-User: adam`` from anywhere else is no one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.store import Store
from core.studio import plays
from core.studio import roleplay as play
from core.studio.auth import PROXY_SECRET_HEADER, header_identity


@pytest.fixture
def loaded(tmp_path: Path) -> Store:
    from core.studio.bootstrap import load_bundled_samples

    store = Store.open(tmp_path / "s.db")
    load_bundled_samples(store)
    return store


def test_annotator_b_cannot_open_annotator_as_agent_play(loaded: Store) -> None:
    eid = play.start_agent_play(
        loaded, benchmark="tau2_airline", sample_id=None, persona="rational", seed=0, player="ann"
    )
    assert plays.open_play(loaded, eid, "agent", "ann").ok
    for allow_unowned in (False, True):  # even single-user mode never hands over an owned play
        refused = plays.open_play(loaded, eid, "agent", "bob", allow_unowned=allow_unowned)
        assert not refused.ok and "another person" in refused.reason


def test_annotator_b_cannot_open_annotator_as_user_play(loaded: Store) -> None:
    eid = play.start_user_play(
        loaded, benchmark="tau2_airline", sample_id=None, persona="rational", seed=0, player="ann"
    )
    assert plays.open_play(loaded, eid, "user", "ann").ok
    assert not plays.open_play(loaded, eid, "user", "bob").ok


def _decide(headers: dict[str, str], peer: str | None, **kw: object) -> object:
    opts: dict[str, object] = {
        "proxy_secret": None,
        "trusted_proxies": (),
        "trust_role_header": False,
        "role_of": lambda name: "admin" if name == "adam" else "annotator",
    }
    opts.update(kw)
    return header_identity(headers, peer, **opts)  # type: ignore[arg-type]


def test_header_auth_refuses_a_client_that_is_not_the_proxy() -> None:
    forged = {"X-Forwarded-User": "adam"}
    remote = _decide(forged, "203.0.113.9")
    assert remote.refusal and remote.name is None  # type: ignore[attr-defined]
    via_proxy = _decide(forged, "10.0.0.5", trusted_proxies=("10.0.0.5",))
    assert via_proxy.name == "adam" and via_proxy.role == "admin"  # type: ignore[attr-defined]
    loopback = _decide(forged, None)
    assert loopback.name == "adam"  # type: ignore[attr-defined]


def test_header_auth_with_a_secret_needs_the_secret_from_everyone() -> None:
    forged = {"X-Forwarded-User": "adam", PROXY_SECRET_HEADER: "guess"}
    assert _decide(forged, None, proxy_secret="s3cret").refusal  # type: ignore[attr-defined]
    assert _decide({"X-Forwarded-User": "adam"}, None, proxy_secret="s3cret").refusal  # type: ignore[attr-defined]
    right = {"X-Forwarded-User": "adam", PROXY_SECRET_HEADER: "s3cret"}
    assert _decide(right, "203.0.113.9", proxy_secret="s3cret").name == "adam"  # type: ignore[attr-defined]


def test_a_claimed_role_header_is_ignored_unless_trusted() -> None:
    claim = {"X-Forwarded-User": "eve", "X-Forwarded-Role": "admin"}
    assert _decide(claim, None).role == "annotator"  # type: ignore[attr-defined]
