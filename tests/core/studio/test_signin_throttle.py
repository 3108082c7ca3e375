"""core.studio.signin_throttle: failed sign-ins lock a user name for a growing while."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from core.studio.signin_throttle import (
    FIRST_LOCK_S,
    FREE_FAILURES,
    MAX_LOCK_S,
    WINDOW_S,
    SignInThrottle,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_5th_failure_locks_then_doubling_locks_then_success_clears() -> None:
    clock = Clock()
    t = SignInThrottle(clock)
    assert FREE_FAILURES == 5  # the README: "after 5 failed sign-ins"
    for _ in range(FREE_FAILURES - 1):
        assert t.failed("ann") == 0.0 and t.retry_after("ann") == 0.0
    assert t.failed("ann") == FIRST_LOCK_S
    assert t.retry_after("ann") == FIRST_LOCK_S
    assert t.retry_after(" ANN ") == FIRST_LOCK_S  # one account however it is typed
    assert t.retry_after("bob") == 0.0  # other accounts are untouched
    clock.now += FIRST_LOCK_S
    assert t.retry_after("ann") == 0.0
    assert t.failed("ann") == 2 * FIRST_LOCK_S
    t.succeeded("ann")
    assert t.retry_after("ann") == 0.0 and t.failed("ann") == 0.0


def test_old_failures_are_forgotten() -> None:
    clock = Clock()
    t = SignInThrottle(clock)
    for _ in range(FREE_FAILURES - 1):
        t.failed("ann")
    clock.now += WINDOW_S + 1
    assert t.failed("ann") == 0.0


def test_unknown_names_are_locked_like_known_ones() -> None:
    t = SignInThrottle(Clock())
    for _ in range(FREE_FAILURES):
        lock = t.failed("no-such-user")
    assert lock == FIRST_LOCK_S


@given(st.lists(st.floats(min_value=0.0, max_value=120.0), max_size=40))
def test_locks_are_bounded_and_never_come_early(gaps: list[float]) -> None:
    clock = Clock()
    t = SignInThrottle(clock)
    for i, gap in enumerate(gaps):
        clock.now += gap
        lock = t.failed("ann")
        assert 0.0 <= lock <= MAX_LOCK_S
        if i < FREE_FAILURES - 1:
            assert lock == 0.0
        assert t.retry_after("ann") <= MAX_LOCK_S


def test_concurrent_failures_are_all_counted() -> None:
    t = SignInThrottle(Clock())

    def hammer() -> None:
        for _ in range(50):
            t.failed("ann")

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert t.retry_after("ann") == MAX_LOCK_S  # 400 failures: the longest lock
