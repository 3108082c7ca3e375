"""Slowing down password guessing: failed sign-ins per account lock it for a growing while.

PBKDF2 makes each guess cost about a tenth of a second; without a limit, a script could still
try every word of a dictionary against an annotator's account. The :data:`FREE_FAILURES`-th
failed attempt on one user name within :data:`WINDOW_S` locks that name for
:data:`FIRST_LOCK_S` (so a 6th guess is never checked), doubling with each further failure up
to :data:`MAX_LOCK_S`. A successful
sign-in clears the record. The lock is per user name (known or not, so the answer never tells
which names exist), kept in memory for the life of the studio process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

FREE_FAILURES = 5
"""Failed attempts within the window; the last of them locks the name (README: "after 5")."""
WINDOW_S = 15 * 60.0
"""Failures older than this are forgotten."""
FIRST_LOCK_S = 30.0
"""Length of the first lock; each further failure doubles it."""
MAX_LOCK_S = 15 * 60.0
"""Longest lock."""
MAX_TRACKED = 10_000
"""Names remembered at once (the oldest records are dropped beyond this)."""


@dataclass
class _Record:
    failures: list[float]
    locked_until: float = 0.0


class SignInThrottle:
    """Failed-attempt bookkeeping per user name (thread-safe).

    Args:
        clock: Monotonic seconds (injectable for tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(name: str) -> str:
        return name.strip().casefold()

    def retry_after(self, name: str) -> float:
        """Seconds until ``name`` may try again (0.0 when it may try now)."""
        with self._lock:
            rec = self._records.get(self._key(name))
            if rec is None:
                return 0.0
            return min(MAX_LOCK_S, max(0.0, rec.locked_until - self._clock()))

    def failed(self, name: str) -> float:
        """Record a failed attempt; return the lock it earned in seconds (0.0 for none)."""
        now = self._clock()
        with self._lock:
            key = self._key(name)
            rec = self._records.pop(key, None) or _Record(failures=[])
            self._records[key] = rec  # re-inserted: most recently used last
            rec.failures = [t for t in rec.failures if now - t < WINDOW_S] + [now]
            over = len(rec.failures) - FREE_FAILURES + 1
            lock = min(MAX_LOCK_S, FIRST_LOCK_S * 2.0 ** (over - 1)) if over > 0 else 0.0
            rec.locked_until = now + lock if lock else rec.locked_until
            while len(self._records) > MAX_TRACKED:
                del self._records[next(iter(self._records))]
            return lock

    def succeeded(self, name: str) -> None:
        """Forget the failures of ``name`` after a successful sign-in."""
        with self._lock:
            self._records.pop(self._key(name), None)
