import json

import pytest

from core.errors import ConfigError
from core.studio.auth import (
    allowed,
    authenticate,
    hash_password,
    load_credentials,
    pages_for,
    verify_password,
)


def test_hash_roundtrip_and_salt() -> None:
    h1, h2 = hash_password("s3cret"), hash_password("s3cret")
    assert h1 != h2 and h1.startswith("pbkdf2_sha256$")
    assert verify_password("s3cret", h1) and not verify_password("wrong", h1)
    assert not verify_password("s3cret", "garbage")


def test_credentials_file(tmp_path) -> None:
    path = tmp_path / "users.json"
    path.write_text(
        json.dumps({"users": {"ann": {"role": "annotator", "password": hash_password("pw")}}})
    )
    creds = load_credentials(path)
    assert authenticate(creds, "ann", "pw") == "annotator"
    assert authenticate(creds, "ann", "nope") is None
    assert authenticate(creds, "ghost", "pw") is None


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('{"users": {"a": {"role": "king", "password": "x"}}}', "users.a.role"),
        ('{"users": {"a": {"role": "admin", "password": "plain"}}}', "users.a.password"),
        ('{"people": {}}', "users"),
    ],
)
def test_bad_credentials_name_file_and_field(tmp_path, content, field) -> None:
    path = tmp_path / "users.json"
    path.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_credentials(path)
    assert info.value.file == str(path)
    assert info.value.field is not None and info.value.field.startswith(field.split(".")[0])
    assert field in str(info.value) or info.value.field == field


def test_role_gating() -> None:
    assert allowed("annotator", "play_user") and not allowed("annotator", "inspect")
    assert allowed("researcher", "grip") and allowed("admin", "data")
    assert not allowed("nobody", "home")
    assert "inspect" not in pages_for("annotator") and "inspect" in pages_for("researcher")
