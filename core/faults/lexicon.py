"""Phrasing data for the template writer and cue lexicon for the rule extractor.

Both live as YAML under ``data/faults/``; they are validated on load (ConfigError naming file
and field when malformed).
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import pydantic_error_to_config_error
from core.model.base import Strict
from core.model.bounds import load_yaml
from core.paths import DATA_DIR

FAULTS_DIR = DATA_DIR / "faults"


class _LexiconFile(Strict):
    request_cues: tuple[str, ...]
    vague_markers: tuple[str, ...]
    deictic_markers: tuple[str, ...]
    presupposition_cues: tuple[str, ...]
    companion_cues: tuple[str, ...]
    capability_nouns: tuple[str, ...]
    extra_cues: tuple[str, ...]


class _HostTemplates(Strict):
    request: tuple[str, ...]
    indirect: tuple[str, ...]
    referential: tuple[str, ...]
    vague: tuple[str, ...]
    lexical: tuple[str, ...]
    syntactic: tuple[str, ...]
    presupposition: tuple[str, ...]
    extra: tuple[str, ...]
    companions: tuple[str, ...] = ()
    capability: tuple[str, ...] = ()
    fake_tools: tuple[str, ...] = ()


class _TemplatesFile(Strict):
    shop: _HostTemplates
    service: _HostTemplates
    generic: _HostTemplates
    offtopic: tuple[str, ...]
    indirect_rewrites: dict[str, str] = {}


def _load_yaml(path: Path) -> Any:
    return load_yaml(path)


class Lexicon:
    """Loaded phrasing data (lazy; one instance per directory)."""

    def __init__(self, directory: Path = FAULTS_DIR) -> None:
        self.directory = directory

    @cached_property
    def cues(self) -> _LexiconFile:
        """The cue lexicon."""
        path = self.directory / "lexicon.yaml"
        try:
            return _LexiconFile.model_validate(_load_yaml(path))
        except ValidationError as exc:
            raise pydantic_error_to_config_error(exc, path) from exc

    @cached_property
    def templates(self) -> _TemplatesFile:
        """The writer's phrasing variants."""
        path = self.directory / "templates.yaml"
        try:
            return _TemplatesFile.model_validate(_load_yaml(path))
        except ValidationError as exc:
            raise pydantic_error_to_config_error(exc, path) from exc

    def host(self, host_class: str) -> _HostTemplates:
        """Templates of one host class."""
        t = self.templates
        return {"shop": t.shop, "service": t.service}.get(host_class, t.generic)

    @property
    def vague(self) -> tuple[str, ...]:
        """Vague / subjective markers."""
        return self.cues.vague_markers

    @property
    def deictic(self) -> tuple[str, ...]:
        """Deictic (referential) markers."""
        return self.cues.deictic_markers

    @property
    def fake_tools(self) -> tuple[str, ...]:
        """Capabilities no τ² desk offers (project-written)."""
        return self.templates.service.fake_tools

    def companions(self, host_class: str) -> tuple[str, ...]:
        """Companion items for attachment ambiguity."""
        return self.host(host_class).companions or self.templates.generic.companions


LEXICON = Lexicon()
"""The bundled phrasing data."""
