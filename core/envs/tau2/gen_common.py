"""Shared base of the per-domain task builders of the bundled-world generator."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, TypeVar

from core.errors import ConfigError

T = TypeVar("T")


class Builder:
    """Holds the rng, the generated database and the tasks built so far."""

    def __init__(self, rng: random.Random, db: dict[str, Any], domain: str):
        self.rng = rng
        self.db = db
        self.domain = domain
        self.tasks: list[dict[str, Any]] = []
        self.taken: set[str] = set()

    def pick(self, items: Sequence[T]) -> T:
        """Pick one candidate (ConfigError when the generated world offers none)."""
        if not items:
            raise ConfigError(
                f"generated {self.domain} world has no candidate for task {len(self.tasks)}",
                field="seed",
            )
        return self.rng.choice(list(items))

    def pick_fresh(self, items: Sequence[T], key: str) -> T:
        """Pick a candidate whose ``key`` field was not used by an earlier task, if any."""
        fresh = [x for x in items if isinstance(x, dict) and x.get(key) not in self.taken]
        chosen = self.pick(fresh or list(items))
        if isinstance(chosen, dict):
            self.taken.add(str(chosen.get(key)))
        return chosen
