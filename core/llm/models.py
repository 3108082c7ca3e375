"""Model settings per role: the models file (``--models FILE.yaml`` / ``DRIFTBENCH_MODELS``).

A models file names, per role, the model and how to call it; every field but ``model`` is
optional and the same on both transports (direct HTTP and litellm)::

    agent:
      model: openai/gpt-5-mini            # litellm model string
      api_base: https://gateway.example/v1  # optional: an OpenAI-compatible endpoint
      api_key_env: GATEWAY_KEY            # the variable holding its key (never the key)
      temperature: null                   # null: send none (the default for reasoning models)
      max_tokens: 2048
      timeout_s: 120
      max_retries: 2
      reasoning_effort: low
      system_role: developer              # system | developer | user (merged into the turn)
      extra: {top_p: 0.9}                 # further provider parameters, sent as they are
    voice: {model: openai/gpt-4o-mini}
    interpreter: {model: openai/gpt-4o-mini}
    reflection: {model: openai/gpt-4o-mini}   # A3's lessons (default: the agent's model)
    judges: [{model: openai/gpt-4o}, {model: anthropic/claude-3-5-sonnet-20240620}]
    writer: {model: openai/gpt-4o-mini}
    extractors: [{model: openai/gpt-4o-mini}, {model: openai/gpt-4o}]

How it applies (:func:`resolve_spec`): a command-line spec (``--agent MODEL[@BASE]``) that
matches an entry of the file (same ``model`` or ``model@api_base``) takes that entry's
settings; a role left out on the command line takes its entry of the file. ``--api-key-env
VAR`` names the key variable of every spec that does not name one. The process-wide choice
is :func:`configure` (the CLI calls it); forked workers inherit it, Ray workers get it passed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from core.errors import ConfigError
from core.llm.secrets import register_key_env
from core.llm.types import ModelSpec, is_reasoning_model
from core.model.base import Strict
from core.settings import settings

MAX_MODELS_FILE_BYTES = 1_000_000
"""A models file larger than this is refused."""

SINGLE_ROLES = ("agent", "voice", "interpreter", "reflection", "writer")
LIST_ROLES = ("judges", "extractors")

ROLE_MAX_TOKENS = {
    "agent": 1024,
    "reflection": 1024,
    "voice": 256,
    "interpreter": 256,
    "judge": 512,
    "writer": 512,
    "extractor": 768,
}
"""The completion cap of a role whose spec names none (a server stops generating there, so an
abandoned or rambling request never runs on)."""

REASONING_MAX_TOKENS = 16384
"""The cap of a reasoning model whose spec names none (its hidden reasoning counts too)."""


def completion_cap(spec: ModelSpec, role: str) -> int:
    """The completion cap a call of ``role`` sends: the spec's, else the role's default.

    >>> completion_cap(ModelSpec(model="openai/x"), "voice")
    256
    >>> completion_cap(ModelSpec(model="openai/o3-mini"), "voice")
    16384
    >>> completion_cap(ModelSpec(model="openai/x", max_tokens=64), "agent")
    64
    """
    if spec.max_tokens is not None:
        return spec.max_tokens
    if is_reasoning_model(spec.model):
        return REASONING_MAX_TOKENS
    return ROLE_MAX_TOKENS.get(role, 1024)


def with_completion_cap(spec: ModelSpec, role: str) -> ModelSpec:
    """``spec`` with its completion cap made explicit (every call then sends one)."""
    if spec.max_tokens is not None:
        return spec
    return spec.model_copy(update={"max_tokens": completion_cap(spec, role)})


class ModelsFile(Strict):
    """A parsed models file: one :class:`ModelSpec` per single role, lists for the others."""

    agent: ModelSpec | None = Field(default=None, description="The LLM policy.")
    voice: ModelSpec | None = Field(default=None, description="The simulated user's voice.")
    interpreter: ModelSpec | None = Field(default=None, description="The user's reader.")
    reflection: ModelSpec | None = Field(default=None, description="A3's lesson writer.")
    writer: ModelSpec | None = Field(default=None, description="Sample construction writer.")
    judges: list[ModelSpec] = Field(default_factory=list, description="GRIP judges (two).")
    extractors: list[ModelSpec] = Field(default_factory=list, description="Verifier extractors.")

    def entries(self) -> list[ModelSpec]:
        """Every spec of the file."""
        out = [s for s in (getattr(self, r) for r in SINGLE_ROLES) if s is not None]
        return [*out, *self.judges, *self.extractors]

    def find(self, text: str) -> ModelSpec | None:
        """The entry whose label or model string is ``text`` (the first one)."""
        for spec in self.entries():
            if text in (spec.label, spec.model):
                return spec
        return None


class LLMConfig(Strict):
    """The process-wide model choices of one command (picklable, for Ray workers)."""

    models: ModelsFile | None = Field(default=None, description="The models file, parsed.")
    models_path: str | None = Field(default=None, description="Where it was read from.")
    api_key_env: str | None = Field(default=None, description="--api-key-env.")
    no_cache: bool = Field(default=False, description="--no-cache: never answer from cache.")


_LOCK = threading.Lock()
_CONFIG: LLMConfig | None = None


def load_models(path: Path | str) -> ModelsFile:
    """Read and validate a models file.

    Raises:
        ConfigError: One line naming the file and the field.
    """
    from core.model.bounds import load_yaml

    p = Path(path)
    if not p.is_file():
        raise ConfigError("models file not found (or not a file)", file=p)
    if p.stat().st_size > MAX_MODELS_FILE_BYTES:
        raise ConfigError(f"larger than {MAX_MODELS_FILE_BYTES} bytes", file=p)
    data = load_yaml(p, max_bytes=MAX_MODELS_FILE_BYTES, what="models file")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("must be a mapping of roles", file=p)
    try:
        models = ModelsFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err.get("loc", ())) or "models"
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        raise ConfigError(msg, file=p, field=loc) from None
    for role in LIST_ROLES:
        n = len(getattr(models, role))
        if role == "judges" and n not in (0, 2):
            raise ConfigError(f"expected two judges, got {n}", file=p, field="judges")
    for spec in models.entries():
        register_key_env(spec.api_key_env)
    return models


def configure(
    models: Path | str | None = None,
    *,
    api_key_env: str | None = None,
    no_cache: bool = False,
) -> LLMConfig:
    """Set the process's model choices (``None`` models: ``DRIFTBENCH_MODELS`` if set).

    Raises:
        ConfigError: A bad models file or variable name.
    """
    global _CONFIG
    path = models if models is not None else settings().models
    parsed = load_models(path) if path is not None else None
    if api_key_env is not None:
        ModelSpec.parse("x/y", api_key_env=api_key_env)  # validates the name (names the field)
        register_key_env(api_key_env)
    cfg = LLMConfig(
        models=parsed,
        models_path=str(path) if path is not None else None,
        api_key_env=api_key_env,
        no_cache=no_cache,
    )
    with _LOCK:
        _CONFIG = cfg
    return cfg


def use_config(cfg: LLMConfig | None) -> None:
    """Install a config received from elsewhere (a Ray worker); None resets to the default."""
    global _CONFIG
    if cfg is not None:
        register_key_env(cfg.api_key_env)
        for spec in cfg.models.entries() if cfg.models else ():
            register_key_env(spec.api_key_env)
    with _LOCK:
        _CONFIG = cfg


def current_config() -> LLMConfig:
    """The process's model choices (read from ``DRIFTBENCH_MODELS`` on first use)."""
    global _CONFIG
    with _LOCK:
        cfg = _CONFIG
    if cfg is None:
        path = settings().models
        cfg = LLMConfig(models=load_models(path), models_path=str(path)) if path else LLMConfig()
        with _LOCK:
            _CONFIG = cfg
    return cfg


def role_entry(role: str, index: int = 0) -> ModelSpec | None:
    """The models file's spec for ``role`` (``judges``/``extractors``: the index-th), if any."""
    models = current_config().models
    if models is None:
        return None
    if role in LIST_ROLES or role in ("judge", "extractor"):
        field = role if role in LIST_ROLES else role + "s"
        items: list[ModelSpec] = getattr(models, field)
        return items[index] if index < len(items) else None
    value: ModelSpec | None = getattr(models, role, None)
    return value


def role_label(role: str, index: int = 0) -> str | None:
    """The spec string of the models file's entry for ``role`` (``model@api_base``), if any."""
    spec = role_entry(role, index)
    return spec.label if spec is not None else None


def resolve_spec(text: str | ModelSpec | None, role: str = "agent", **overrides: Any) -> ModelSpec:
    """The :class:`ModelSpec` to call for ``text`` in ``role`` under the current config.

    Args:
        text: A spec string (``MODEL[@API_BASE]``), a spec, or None for the role's entry.
        role: The role (selects the models-file entry when ``text`` is None).
        **overrides: Spec fields that win over everything (tests: ``timeout_s`` …).

    Raises:
        ConfigError: No spec and no entry for the role, or an invalid spec.
    """
    cfg = current_config()
    if isinstance(text, ModelSpec):
        spec = text
    else:
        found = None
        own = role_entry(role)
        if text and own is not None and text.strip() in (own.label, own.model):
            found = own  # the role's own entry first (one model may serve several roles)
        elif text:
            found = cfg.models.find(text.strip()) if cfg.models is not None else None
        else:
            found = own
        if found is None and not text:
            raise ConfigError(f"no model given for the {role} role", field=role)
        spec = found if found is not None else ModelSpec.parse(str(text))
    if spec.api_key_env is None and cfg.api_key_env is not None:
        spec = spec.model_copy(update={"api_key_env": cfg.api_key_env})
    if overrides:
        data = spec.model_dump(exclude_unset=False)
        if "temperature" not in spec.model_fields_set and "temperature" not in overrides:
            data.pop("temperature")  # keep the reasoning-model default
        data.update(overrides)
        try:
            spec = ModelSpec(**data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first.get("loc", ())) or "model"
            raise ConfigError(str(first.get("msg")), file="model spec", field=loc) from None
    register_key_env(spec.api_key_env)
    return spec


RUN_ROLES = ("agent", "voice", "interpreter", "reflection")
"""The LLM roles of a sweep, whose settings are part of the run's identity."""


def run_models(roles: Mapping[str, str | None]) -> dict[str, dict[str, Any]] | None:
    """The settings of each LLM role a run uses, as stored in its spec.

    Args:
        roles: Role → the model spec string it uses (None or an offline name: not an LLM).

    Returns:
        Role → the full :class:`ModelSpec` (completion cap made explicit), or None when no
        role is an LLM.
    """
    from core.llm.types import is_offline_name

    out: dict[str, dict[str, Any]] = {}
    for role, label in roles.items():
        if not label or is_offline_name(label) or label in ("offline", "mute", "human"):
            continue
        spec = with_completion_cap(resolve_spec(label, role), role)
        out[role] = spec.model_dump(mode="json")
    return out or None


@contextlib.contextmanager
def run_config(models: Mapping[str, Mapping[str, Any]] | None) -> Iterator[LLMConfig]:
    """Install a run's recorded role settings as the process's models for its duration.

    Every client built while it is open (agent, voice, interpreter, reflection — in this
    process and in forked workers) resolves to the settings the run was created with, so a
    resumed run calls its models exactly as before, whatever the models file says now.
    """
    before = current_config()
    if not models:
        yield before
        return
    roles = {
        role: ModelSpec.model_validate(dict(value))
        for role, value in models.items()
        if role in RUN_ROLES
    }
    base = before.models or ModelsFile()
    cfg = before.model_copy(update={"models": base.model_copy(update=roles)})
    use_config(cfg)
    try:
        yield cfg
    finally:
        use_config(before)
