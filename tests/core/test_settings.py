"""The one settings model: every DRIFTBENCH_* variable typed, validated, read fresh, documented."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from core.errors import ConfigError
from core.paths import PROJECT_ROOT, default_store_path, home_dir, shared_dir
from core.settings import ENV_NAMES, PREFIX, Settings, env_name, settings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults_when_nothing_is_set(clean_env: pytest.MonkeyPatch) -> None:
    s = settings()
    assert s.home is None and s.shared is None and s.credentials is None
    assert s.import_roots == ()
    assert s.auth == "none" and s.trust_role_header is False
    assert s.llm_transport == "auto" and s.play_model == ""
    assert s.grip_workers is None and s.live is False and s.fuzz_examples == 150
    assert home_dir() == PROJECT_ROOT / "var"
    assert shared_dir() == PROJECT_ROOT.parent / "shared"


def test_each_variable_is_read(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    values = {
        "DRIFTBENCH_HOME": str(tmp_path / "home"),
        "DRIFTBENCH_SHARED": str(tmp_path / "shared"),
        "DRIFTBENCH_IMPORT_ROOTS": f"{a}{os.pathsep}{os.pathsep}{b}",
        "DRIFTBENCH_AUTH": " Password ",
        "DRIFTBENCH_CREDENTIALS": str(tmp_path / "creds.yaml"),
        "DRIFTBENCH_TRUST_ROLE_HEADER": "1",
        "DRIFTBENCH_LLM_TRANSPORT": "LITELLM",
        "DRIFTBENCH_PLAY_MODEL": "openai/m@http://127.0.0.1:9/v1",
        "DRIFTBENCH_MODELS": str(tmp_path / "models.yaml"),
        "DRIFTBENCH_GRIP_WORKERS": "3",
        "DRIFTBENCH_LIVE": "yes",
        "DRIFTBENCH_FUZZ_EXAMPLES": "7",
        "DRIFTBENCH_SESSION_SECRET": "s" * 40,
        "DRIFTBENCH_SESSION_HOURS": "6",
        "DRIFTBENCH_PROXY_SECRET": "p" * 40,
        "DRIFTBENCH_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2",
        "DRIFTBENCH_PLAY_EXPIRY_HOURS": "2",
        "DRIFTBENCH_PLAY_INTERPRETER": "openai/r@http://127.0.0.1:9/v1",
        "DRIFTBENCH_MAX_RUN_EPISODES": "1234",
    }
    assert set(values) == set(ENV_NAMES)
    for k, v in values.items():
        clean_env.setenv(k, v)
    s = settings()
    assert s.home == (tmp_path / "home").resolve() and home_dir() == s.home
    assert default_store_path() == s.home / "driftbench.db"
    assert s.shared == (tmp_path / "shared").resolve() and shared_dir() == s.shared
    assert s.import_roots == (a.resolve(), b.resolve())
    assert s.auth == "password" and s.credentials == (tmp_path / "creds.yaml").resolve()
    assert s.trust_role_header is True and s.llm_transport == "litellm"
    assert s.play_model == "openai/m@http://127.0.0.1:9/v1"
    assert s.grip_workers == 3 and s.live is True and s.fuzz_examples == 7
    assert s.session_secret == "s" * 40 and s.session_hours == 6.0
    assert s.proxy_secret == "p" * 40 and s.trusted_proxies == ("10.0.0.1", "10.0.0.2")
    assert s.play_expiry_hours == 2.0 and s.play_interpreter == "openai/r@http://127.0.0.1:9/v1"
    assert s.max_run_episodes == 1234


def test_home_expands_the_user_folder(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DRIFTBENCH_HOME", "~/dbhome")
    assert settings().home == Path("~/dbhome").expanduser().resolve()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DRIFTBENCH_AUTH", "pasword"),
        ("DRIFTBENCH_TRUST_ROLE_HEADER", "maybe"),
        ("DRIFTBENCH_LLM_TRANSPORT", "grpc"),
        ("DRIFTBENCH_GRIP_WORKERS", "four"),
        ("DRIFTBENCH_GRIP_WORKERS", "-1"),
        ("DRIFTBENCH_LIVE", "sometimes"),
        ("DRIFTBENCH_FUZZ_EXAMPLES", "0"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(
    clean_env: pytest.MonkeyPatch, name: str, value: str
) -> None:
    clean_env.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        settings()
    msg = str(info.value)
    assert info.value.field == name and name in msg and repr(value) in msg
    assert "\n" not in msg
    with pytest.raises(ConfigError):  # every reader fails the same way, e.g. the store path
        default_store_path()


def test_empty_values_take_the_defaults(clean_env: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        clean_env.setenv(name, "")
    assert settings() == Settings()
    assert home_dir() == PROJECT_ROOT / "var"


@pytest.mark.parametrize("value", ["0", "false", "no", "off", "FALSE"])
def test_the_role_header_is_untrusted_unless_said_so(
    clean_env: pytest.MonkeyPatch, value: str
) -> None:
    clean_env.setenv("DRIFTBENCH_TRUST_ROLE_HEADER", value)
    assert settings().trust_role_header is False


def test_changes_are_seen_at_the_next_call(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("DRIFTBENCH_HOME", str(tmp_path / "one"))
    assert home_dir() == (tmp_path / "one").resolve()
    clean_env.setenv("DRIFTBENCH_HOME", str(tmp_path / "two"))
    assert home_dir() == (tmp_path / "two").resolve()
    clean_env.setenv("DRIFTBENCH_AUTH", "nope")
    with pytest.raises(ConfigError):
        settings()
    clean_env.setenv("DRIFTBENCH_AUTH", "header")
    assert settings().auth == "header"
    clean_env.delenv("DRIFTBENCH_HOME")
    assert home_dir() == PROJECT_ROOT / "var"


def test_settings_are_frozen(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError):
        settings().auth = "password"  # type: ignore[misc]


def test_unrelated_and_lower_case_variables_are_ignored(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DRIFTBENCH_FAKE_KEY", "sk-not-a-setting")  # an api_key_env of a test
    clean_env.setenv("driftbench_auth", "bogus")
    assert settings().auth == "none"


def test_env_name_maps_fields_to_variables() -> None:
    assert env_name("home") == "DRIFTBENCH_HOME"
    assert env_name("trust_role_header") == "DRIFTBENCH_TRUST_ROLE_HEADER"
    assert all(n.startswith(PREFIX) for n in ENV_NAMES)
    assert len(ENV_NAMES) == len(set(ENV_NAMES)) == len(Settings.model_fields)


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and re.fullmatch(r"DRIFTBENCH_[A-Z_]+", n.value)
    }


def test_nothing_else_reads_a_driftbench_variable() -> None:
    """Only core/settings.py names a DRIFTBENCH_* variable as a string in core, pages, app.py."""
    files = [PROJECT_ROOT / "app.py", *(PROJECT_ROOT / "core").rglob("*.py")]
    files += list((PROJECT_ROOT / "pages").rglob("*.py"))
    offenders = {
        str(p.relative_to(PROJECT_ROOT)): names
        for p in files
        if p.name != "settings.py" and (names := _string_constants(p))
    }
    assert not offenders, f"read DRIFTBENCH_* through core.settings: {offenders}"


def test_every_variable_is_in_the_readme_configuration_table() -> None:
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `(DRIFTBENCH_[A-Z_]+)` \|", section, flags=re.M))
    assert rows == set(ENV_NAMES)
