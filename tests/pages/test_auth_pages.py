import json

from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.studio.auth import hash_password

APP = str(PROJECT_ROOT / "app.py")


def _password_studio(tmp_path, monkeypatch, user: str) -> None:
    """Password mode with one annotator account ``user`` whose password is ``pw``."""
    creds = tmp_path / "users.json"
    creds.write_text(
        json.dumps({"users": {user: {"role": "annotator", "password": hash_password("pw")}}})
    )
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFTBENCH_AUTH", "password")
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))


def test_password_mode_requires_sign_in(tmp_path, monkeypatch) -> None:
    _password_studio(tmp_path, monkeypatch, "ann")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value.startswith("Sign in")
    at.text_input(key="login-name").input("ann")
    at.text_input(key="login-password").input("wrong")
    at.button[0].click().run()
    assert any("wrong password" in e.value for e in at.error)
    at.text_input(key="login-password").input("pw")
    at.button[0].click().run()
    assert not at.exception
    assert at.title[0].value == "Drift-Bench++ Studio"
    assert at.session_state["auth_user"] == {"name": "ann", "role": "annotator"}


def test_repeated_wrong_passwords_lock_the_name(tmp_path, monkeypatch) -> None:
    import streamlit as st

    from core.studio.signin_throttle import FIRST_LOCK_S, FREE_FAILURES

    _password_studio(tmp_path, monkeypatch, "target")
    st.cache_resource.clear()  # a fresh throttle, whatever earlier tests did
    try:
        at = AppTest.from_file(APP, default_timeout=30).run()
        at.text_input(key="login-name").input("target")
        for _ in range(FREE_FAILURES):
            at.text_input(key="login-password").input("guess")
            at.button[0].click().run()
            assert [e.value for e in at.error] == ["Unknown user name or wrong password."]
        at.text_input(key="login-password").input("guess")
        at.button[0].click().run()
        assert f"locked for {FIRST_LOCK_S:.0f} s" in at.error[0].value
        # while locked, even the right password is not checked
        at.text_input(key="login-password").input("pw")
        at.button[0].click().run()
        assert "Too many failed attempts" in at.error[0].value
        assert "auth_user" not in at.session_state
        assert at.title[0].value.startswith("Sign in")
    finally:
        st.cache_resource.clear()
