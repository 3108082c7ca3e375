"""proto-4 (issue 31: confirmations judged by value kinds, a wrong one answered with a hint):
the default config's version is bumped; a stored older config keeps its own."""

from __future__ import annotations

from core.model.config import PROTOCOL_VERSION, ProtocolConfig


def test_default_is_proto_3() -> None:
    assert PROTOCOL_VERSION == "proto-4" and ProtocolConfig().version == "proto-4"


def test_an_old_run_keeps_reporting_its_version() -> None:
    stored = ProtocolConfig().model_dump(mode="json")
    stored["version"] = "proto-2"
    old = ProtocolConfig.model_validate(stored)
    assert old.version == "proto-2"
    assert old.config_hash() != ProtocolConfig().config_hash()
    again = ProtocolConfig.model_validate_json(old.model_dump_json())
    assert again.version == "proto-2" and again.config_hash() == old.config_hash()
