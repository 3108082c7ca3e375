"""Who owns a running sweep, and that its workers never outlive it.

Three guarantees, each cheap:

* **One owner per run.** The process that runs a sweep holds an exclusive ``flock`` on
  ``.driftbench-locks/<store name>.<run_id>.lock`` beside the store for as long as it plays
  (:class:`RunLock`). The kernel drops the lock when that process ends, however it ends
  (``kill -9`` included), so "is anybody still running this?" is a non-blocking lock attempt
  (:func:`owner_alive`). A second identical sweep started meanwhile is refused before it
  writes anything (:class:`RunBusyError`, exit 2).
* **Workers die with their parent.** Every process forked while a sweep runs
  (:func:`guard_children`) asks the kernel for ``SIGKILL`` when its parent dies
  (``prctl(PR_SET_PDEATHSIG)`` on Linux, through ctypes) and also runs a watchdog thread that
  exits once its parent pid changes (any POSIX system). Forked children close their copy of the
  owner lock at once, so only the owner holds it.
* **SIGTERM is an interruption, not a vanishing.** While a sweep runs in the main thread,
  SIGTERM raises :class:`Terminated`; the sweep writes what it has, marks the run
  ``interrupted`` (resumable) and exits 143.

A run row still saying ``running`` whose lock nobody holds is shown as ``interrupted``
(:func:`effective_status`); resuming it plays the missing episodes.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from core.errors import ConfigError

LOCK_DIR = ".driftbench-locks"
"""Folder beside the store file holding the run owner locks (not ``<store>*``, so a glob of
the store's own files never picks it up)."""
PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal a process gets when its parent dies (Linux)."""
WATCHDOG_POLL_S = 0.5
"""How often a worker's watchdog checks that its parent is still there."""
PENDING_GRACE_S = 60.0
"""A run left ``pending`` this long with no owner is shown as interrupted (a launch that died
before its worker took the lock)."""
ACTIVE_STATUSES = frozenset({"pending", "running", "cancelling"})
"""Stored statuses that claim somebody is working on the run."""
STATUS_INTERRUPTED = "interrupted"
"""A run whose owner is gone (killed, terminated, crashed): resumable."""


class RunBusyError(ConfigError):
    """The run is being played by another live process (refused before anything is written)."""


class Terminated(Exception):  # noqa: N818 - named after the signal's meaning
    """Raised in the main thread by SIGTERM while a sweep runs."""


# ---------------------------------------------------------------------------------- owner lock
def lock_path(store_path: Path, run_id: str) -> Path:
    """The lock file of ``run_id`` beside the store file."""
    store_path = Path(store_path)
    return store_path.parent / LOCK_DIR / f"{store_path.name}.{run_id}.lock"


_HELD: set[int] = set()
"""Lock file descriptors held by this process (closed in forked children)."""


class RunLock:
    """The exclusive owner lock of one run (a ``flock`` the kernel drops when we die)."""

    def __init__(self, store_path: Path, run_id: str) -> None:
        self.path = lock_path(store_path, run_id)
        self.run_id = run_id
        self.fd: int | None = None

    def acquire(self, name: str | None = None) -> None:
        """Take the lock or raise :class:`RunBusyError` naming the live owner.

        Raises:
            RunBusyError: Another live process holds it.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read_owner(fd)
            os.close(fd)
            raise RunBusyError(
                f"run {name or self.run_id!r} is already running{owner}; wait for it, cancel "
                "it, or give a different --name",
                field="--name",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {datetime.now(UTC).isoformat(timespec='seconds')}\n".encode())
        self.fd = fd
        _HELD.add(fd)

    def release(self) -> None:
        """Drop the lock (idempotent); the lock file stays, empty of meaning."""
        if self.fd is not None:
            _HELD.discard(self.fd)
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
                os.close(self.fd)
            self.fd = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_owner(fd: int) -> str:
    try:
        raw = os.pread(fd, 200, 0).decode("utf-8", "replace").split()
    except OSError:
        return ""
    return f" (process {raw[0]}, since {raw[1]})" if len(raw) >= 2 else ""


def owner_alive(store_path: Path, run_id: str) -> bool:
    """Whether a live process holds ``run_id``'s owner lock (a probe: takes and drops it)."""
    path = lock_path(store_path, run_id)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock we took; never one another open file holds
    return False


def effective_status(store_path: Path, row: dict[str, Any], *, now: float | None = None) -> str:
    """A run's status as it really is: an active status with no live owner is ``interrupted``.

    Args:
        store_path: The store file (the locks live beside it).
        row: A ``runs`` row (``run_id``, ``status``, ``updated_at``).
        now: The current time (tests).
    """
    status = str(row.get("status") or "")
    if status not in ACTIVE_STATUSES or owner_alive(store_path, str(row["run_id"])):
        return status
    if status == "pending":
        try:
            updated = datetime.fromisoformat(str(row.get("updated_at"))).timestamp()
        except ValueError:
            updated = 0.0
        if (now if now is not None else time.time()) - updated < PENDING_GRACE_S:
            return status  # a launch whose worker has not taken the lock yet
    return STATUS_INTERRUPTED


def sweep_status(store_path: Path, row: dict[str, Any], spec_json: str | None = None) -> str:
    """:func:`effective_status` for a sweep's run row; other runs (branches, imports) as stored.

    Args:
        store_path: The store file.
        row: A ``runs`` row.
        spec_json: The run's stored spec (``row["spec"]`` when omitted).
    """
    from pydantic import ValidationError

    from core.model.run import RunSpec

    raw = spec_json if spec_json is not None else row.get("spec")
    try:
        RunSpec.model_validate_json(str(raw))
    except ValidationError:
        return str(row.get("status") or "")
    return effective_status(store_path, row)


# ---------------------------------------------------------------------------------- children
_GUARD = {"depth": 0, "parent": 0}


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux only).

    Returns:
        True when the request was accepted.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = _libc()
        return bool(libc is not None and libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def start_watchdog(parent: int, poll_s: float = WATCHDOG_POLL_S) -> threading.Thread:
    """A daemon thread that ends this process at once when its parent pid changes."""

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(poll_s)

    t = threading.Thread(target=watch, name="driftbench-parent-watchdog", daemon=True)
    t.start()
    return t


def _after_fork_in_child() -> None:
    if _GUARD["depth"] <= 0:
        return
    parent = _GUARD["parent"]
    for fd in list(_HELD):  # only the owner holds the run lock
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()
    _GUARD["depth"] = 0
    with contextlib.suppress(ValueError, OSError):  # a worker dies of SIGTERM, as before
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    set_parent_death_signal()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
    start_watchdog(parent)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@contextlib.contextmanager
def guard_children() -> Iterator[None]:
    """Within this block every forked child dies with this process (see the module doc)."""
    _GUARD["depth"] += 1
    _GUARD["parent"] = os.getpid()
    try:
        yield
    finally:
        _GUARD["depth"] -= 1


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within this block SIGTERM raises :class:`Terminated` (main thread only; else a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated("terminated by SIGTERM")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
