"""Every ``DRIFTBENCH_*`` environment variable, read, typed and validated in one place.

:func:`settings` returns the :class:`Settings` of the current environment. It reads the variables
afresh whenever one of them changes (the result is memoised on their values only, so a test's
``monkeypatch.setenv`` is seen at the next call and nothing else is shared), and a bad value is
one :class:`~core.errors.ConfigError` line naming the variable, e.g.
``environment, field 'DRIFTBENCH_AUTH': Input should be 'none', 'password', 'oidc' or 'header'
(got 'pasword')``. The README's Configuration table documents each variable; a test checks
that the table and this model list the same names.

Nothing else in ``core``, the pages or ``app.py`` reads a ``DRIFTBENCH_*`` variable.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from core.errors import ConfigError

PREFIX = "DRIFTBENCH_"
"""Every variable of the project starts with this."""

_FALSE = {"0", "false", "no", "off"}
_TRUE = {"1", "true", "yes", "on"}


def _var(name: str, description: str, **kw: Any) -> Any:
    """A field read from exactly the environment variable ``DRIFTBENCH_<name>``."""
    env = PREFIX + name
    return Field(validation_alias=AliasChoices(env), description=description, **kw)


class Settings(BaseSettings):
    """The project's environment, typed. Unset or empty variables take the defaults."""

    model_config = SettingsConfigDict(
        case_sensitive=True,
        env_ignore_empty=True,
        extra="ignore",
        frozen=True,
        populate_by_name=False,
    )

    # -- where things live
    home: Path | None = _var(
        "HOME",
        "Folder of the store driftbench.db and the LLM cache (default <project>/var).",
        default=None,
    )
    shared: Path | None = _var(
        "SHARED", "Folder of third-party host data (default <project>/../shared).", default=None
    )
    import_roots: Annotated[tuple[Path, ...], NoDecode] = _var(
        "IMPORT_ROOTS",
        "os.pathsep-separated folders the studio may import server paths from.",
        default=(),
    )
    # -- the studio's auth seam
    auth: Literal["none", "password", "oidc", "header"] = _var(
        "AUTH", "Studio auth mode.", default="none"
    )
    credentials: Path | None = _var(
        "CREDENTIALS", "File of hashed studio accounts and roles.", default=None
    )
    trust_role_header: bool = _var(
        "TRUST_ROLE_HEADER",
        "header mode: take the role from X-Forwarded-Role (the proxy must strip client copies).",
        default=False,
    )
    session_secret: str | None = _var(
        "SESSION_SECRET",
        "password mode: secret (≥ 32 characters) signing sign-in cookies (default: a random one "
        "kept in $DRIFTBENCH_HOME/session_secret).",
        default=None,
    )
    session_hours: float = _var(
        "SESSION_HOURS",
        "password mode: how long a sign-in lasts, in hours.",
        default=12.0,
        gt=0,
        le=24 * 365,
        allow_inf_nan=False,
    )
    proxy_secret: str | None = _var(
        "PROXY_SECRET",
        "header mode: the value the proxy sends in X-Driftbench-Proxy-Secret.",
        default=None,
    )
    trusted_proxies: Annotated[tuple[str, ...], NoDecode] = _var(
        "TRUSTED_PROXIES",
        "header mode without a proxy secret: comma-separated proxy addresses besides loopback.",
        default=(),
    )
    play_expiry_hours: float = _var(
        "PLAY_EXPIRY_HOURS",
        "Unfinished play episodes older than this are no longer offered (0 = never).",
        default=24.0,
        ge=0,
        le=24 * 365,
        allow_inf_nan=False,
    )
    # -- language models
    llm_transport: Literal["auto", "litellm"] = _var(
        "LLM_TRANSPORT",
        "auto: direct HTTP to openai/…@API_BASE; litellm: always litellm.",
        default="auto",
    )
    models: Path | None = _var(
        "MODELS",
        "Models file (YAML): model and call settings per role (as --models).",
        default=None,
    )
    play_model: str = _var(
        "PLAY_MODEL", "Model spec offered as the agent on the play-as-user page.", default=""
    )
    play_interpreter: str = _var(
        "PLAY_INTERPRETER",
        "Model spec offered (besides offline) for how the simulated user reads a person's "
        "messages on the play-as-agent page.",
        default="",
    )
    # -- sweeps
    max_run_episodes: int = _var(
        "MAX_RUN_EPISODES",
        "Most episodes one run may plan (a bigger plan is refused before any work).",
        default=250_000,
        ge=1,
        le=100_000_000,
    )
    # -- GRIP
    grip_workers: int | None = _var(
        "GRIP_WORKERS",
        "Processes that score GRIP records (0 or 1 = never fork).",
        default=None,
        ge=0,
    )
    # -- the test suite
    live: bool = _var("LIVE", "Run tests marked live (real providers).", default=False)
    fuzz_examples: int = _var(
        "FUZZ_EXAMPLES", "Hypothesis examples of the agent fuzz test.", default=150, ge=1
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Read the process environment only: no ``.env`` file, no secrets folder."""
        return init_settings, env_settings

    @field_validator("home", "shared", "credentials", "models", mode="after")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @field_validator("import_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(Path(p).expanduser().resolve() for p in value.split(os.pathsep) if p)
        return value

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value

    @field_validator("session_secret", "proxy_secret", mode="before")
    @classmethod
    def _secret(cls, value: Any) -> Any:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("auth", "llm_transport", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("trust_role_header", "live", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE:
                return True
            if word in _FALSE:
                return False
            raise ValueError("expected 1/true/yes/on or 0/false/no/off")
        return value


def env_name(field: str) -> str:
    """Return the variable behind a :class:`Settings` field (``home`` → ``DRIFTBENCH_HOME``)."""
    alias = Settings.model_fields[field].validation_alias
    assert isinstance(alias, AliasChoices)
    return str(alias.choices[0])


ENV_NAMES: tuple[str, ...] = tuple(env_name(f) for f in Settings.model_fields)
"""Every variable the model reads, in declaration order."""


def settings_from(env: Mapping[str, str]) -> Settings:
    """Validate the settings of an explicit environment ``env`` (tests, tools), not the process's.

    Empty values count as unset, as in the process environment.

    Raises:
        ConfigError: A variable holds a bad value; the message names it, in one line.
    """
    given = {k: v for k, v in env.items() if k in ENV_NAMES and v != ""}
    try:
        return Settings.model_validate(given)
    except ValidationError as exc:
        raise _config_error(exc, given) from None


def settings() -> Settings:
    """Return the settings of the current environment (validated; fresh after any change).

    Raises:
        ConfigError: A variable holds a bad value; the message names it, in one line.
    """
    return _load(tuple(os.environ.get(name) for name in ENV_NAMES))


@functools.lru_cache(maxsize=8)
def _load(values: tuple[str | None, ...]) -> Settings:
    """Build the settings for one snapshot of the variables' values (the memo's only key)."""
    del values  # the key only: Settings() reads the same variables from os.environ
    try:
        return Settings()
    except ValidationError as exc:
        raise _config_error(exc) from None


def _config_error(exc: ValidationError, env: Mapping[str, str] | None = None) -> ConfigError:
    first = exc.errors()[0]
    loc = first.get("loc", ())
    name = str(loc[0]) if loc else PREFIX + "*"
    msg = str(first.get("msg", "invalid value")).replace("\n", " ").removeprefix("Value error, ")
    got = (os.environ if env is None else env).get(name)
    detail = f"{msg} (got {got!r})" if got is not None else msg
    return ConfigError(detail, file="environment", field=name)
