"""The studio's variables in one place, and header auth that trusts only its proxy (22.5)."""

from __future__ import annotations

import pytest

from core.errors import ConfigError
from core.studio.auth import PROXY_SECRET_HEADER, header_identity
from core.studio.env import studio_env


def test_defaults_and_parsing() -> None:
    env = studio_env({})
    assert env.auth == "none" and env.session_hours == 12.0 and env.play_expiry_hours == 24.0
    assert env.proxy_secret is None and env.trusted_proxies == ()
    env = studio_env(
        {
            "DRIFTBENCH_AUTH": "header",
            "DRIFTBENCH_SESSION_HOURS": "0.5",
            "DRIFTBENCH_TRUSTED_PROXIES": " 10.0.0.5, 10.0.0.6 ",
            "DRIFTBENCH_PROXY_SECRET": "shh",
            "DRIFTBENCH_TRUST_ROLE_HEADER": "1",
            "DRIFTBENCH_PLAY_EXPIRY_HOURS": "0",
        }
    )
    assert env.session_ttl_s == 1800 and env.trusted_proxies == ("10.0.0.5", "10.0.0.6")
    assert env.proxy_secret == "shh" and env.trust_role_header and env.play_expiry_hours == 0


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DRIFTBENCH_AUTH", "ldap"),
        ("DRIFTBENCH_SESSION_HOURS", "soon"),
        ("DRIFTBENCH_SESSION_HOURS", "0"),
        ("DRIFTBENCH_SESSION_HOURS", "nan"),
        ("DRIFTBENCH_PLAY_EXPIRY_HOURS", "-1"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        studio_env({name: value})


def _decide(headers: dict[str, str], peer: str | None, **kw: object):  # type: ignore[no-untyped-def]
    opts: dict[str, object] = {
        "proxy_secret": None,
        "trusted_proxies": (),
        "trust_role_header": False,
        "role_of": lambda name: "researcher" if name == "res" else "annotator",
    }
    opts.update(kw)
    return header_identity(headers, peer, **opts)  # type: ignore[arg-type]


def test_without_a_secret_only_loopback_or_declared_proxies_may_name_a_user() -> None:
    ok = _decide({"X-Forwarded-User": "adam"}, None)  # loopback: the proxy on this host
    assert (ok.name, ok.role, ok.refusal) == ("adam", "annotator", None)
    remote = _decide({"X-Forwarded-User": "adam", "X-Forwarded-Role": "admin"}, "203.0.113.9")
    assert remote.name is None and remote.refusal and "proxy" in remote.refusal
    declared = _decide({"x-forwarded-user": "res"}, "10.0.0.5", trusted_proxies=("10.0.0.5",))
    assert (declared.name, declared.role) == ("res", "researcher")


def test_with_a_secret_every_request_must_carry_it() -> None:
    kw = {"proxy_secret": "s3cret"}
    assert _decide({"X-Forwarded-User": "adam"}, None, **kw).refusal
    wrong = {"X-Forwarded-User": "adam", PROXY_SECRET_HEADER: "guess"}
    assert _decide(wrong, None, **kw).refusal
    right = {"X-Forwarded-User": "adam", PROXY_SECRET_HEADER: "s3cret"}
    assert _decide(right, "198.51.100.7", **kw).name == "adam"  # any address, with the secret


def test_the_role_header_counts_only_when_trusted_and_valid() -> None:
    h = {"X-Forwarded-User": "adam", "X-Forwarded-Role": "admin"}
    assert _decide(h, None).role == "annotator"
    assert _decide(h, None, trust_role_header=True).role == "admin"
    bogus = {"X-Forwarded-User": "adam", "X-Forwarded-Role": "root"}
    assert _decide(bogus, None, trust_role_header=True).role == "annotator"
    assert _decide({}, None).name is None and _decide({}, None).refusal is None
