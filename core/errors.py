"""The project's small exception hierarchy.

Exceptions are caught in two places only: the orchestrator (which turns them into an ending
event) and the page (which turns them into ``st.error``). The CLI maps every
:class:`DriftBenchError` to one clear line on stderr and exit code 2.
"""

from __future__ import annotations

from pathlib import Path


class DriftBenchError(Exception):
    """Root of every error the engine raises on purpose."""


class ConfigError(DriftBenchError):
    """A data or configuration file is missing or malformed.

    Attributes:
        file: The offending file (or directory), when known.
        field: The dotted path of the offending field inside the file, when known.
        detail: What is wrong, in one sentence.
    """

    def __init__(self, detail: str, *, file: str | Path | None = None, field: str | None = None):
        self.file = str(file) if file is not None else None
        self.field = field
        self.detail = detail
        parts = []
        if self.file:
            parts.append(self.file)
        if field:
            parts.append(f"field '{field}'")
        prefix = ": ".join([", ".join(parts)]) if parts else ""
        super().__init__(f"{prefix}: {detail}" if prefix else detail)


class NotFoundError(DriftBenchError):
    """A named object (run, episode, sample, world, persona …) does not exist."""


class ProtocolError(DriftBenchError):
    """An agent, user or caller broke the turn protocol (e.g. acting on an ended episode)."""


class LLMError(DriftBenchError):
    """A language-model call failed after the configured retries.

    Attributes:
        model: The model spec that failed.
        status: HTTP-like status code when the provider returned one.
        retryable: Whether a later attempt (e.g. a resumed sweep) may succeed.
    """

    def __init__(
        self, detail: str, *, model: str = "", status: int | None = None, retryable: bool = True
    ):
        self.model = model
        self.status = status
        self.retryable = retryable
        super().__init__(f"{model}: {detail}" if model else detail)


def pydantic_error_to_config_error(exc: Exception, file: str | Path) -> ConfigError:
    """Turn a pydantic ``ValidationError`` into a :class:`ConfigError` naming file and field.

    Args:
        exc: The validation error (any exception with an ``errors()`` method works).
        file: The file that was being validated.

    Returns:
        A ConfigError whose field is the dotted location of the first error.
    """
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        return ConfigError(first.get("msg", str(exc)), file=file, field=loc or None)
    return ConfigError(str(exc), file=file)
