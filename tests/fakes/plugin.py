"""Pytest plugin: a network guard, a fake OpenAI-compatible server and a scripted-LLM factory.

Enable it from ``tests/conftest.py`` with ``pytest_plugins = ["tests.fakes.plugin"]``.

* Network guard (autouse, installed for the whole session): ``socket.socket.connect`` /
  ``connect_ex``, ``socket.create_connection`` and ``socket.getaddrinfo`` refuse any address that
  is not loopback (127.0.0.0/8, ::1, ``localhost``) or a Unix socket, *before* any packet is
  sent. Libraries often swallow connection errors and retry, so every refusal is also recorded
  and the test fails at teardown even if the exception was caught. Tests marked
  ``@pytest.mark.live`` (run only with ``DRIFTBENCH_LIVE=1``) or ``@pytest.mark.allow_network``
  are exempt. Loopback traffic (the fake server, Streamlit, Playwright's browser) is allowed.
* ``fake_llm_server``: a started :class:`FakeOpenAIServer`, stopped after the test.
* ``scripted_llm``: a factory ``scripted_llm(replies_or_fn, **kw) -> ScriptedLLM``.
* ``network_guard``: the guard object, for tests that check it.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from core.settings import env_name, settings
from tests.fakes.openai_server import FakeOpenAIServer

LIVE_ENV = env_name("live")


class NetworkBlockedError(RuntimeError):
    """Raised by the guard when code tries to reach a non-loopback address.

    Deliberately not an OSError: HTTP stacks treat OSError as a transient network failure.
    """


def _is_local_host(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.strip().strip("[]").lower()
    if name in ("localhost", "localhost.", "") or name.endswith(".localhost"):
        return True
    name = name.split("%", 1)[0]  # IPv6 zone id
    try:
        addr = ipaddress.ip_address(name)
    except ValueError:
        return False  # a DNS name other than localhost: refuse without resolving it
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped.is_loopback
    return addr.is_loopback


def _is_ip_literal(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


class NetworkGuard:
    """Patches the socket module so only loopback and Unix-socket connections go through.

    Attributes:
        enabled: Whether refusals are enforced (the plugin turns it off for exempt tests).
        violations: Descriptions of refused attempts since the last :meth:`take_violations`.
    """

    def __init__(self) -> None:
        self.enabled = True
        self.violations: list[str] = []
        self._lock = threading.Lock()
        self._installed = False
        self._real_connect: Callable[..., Any] = socket.socket.connect
        self._real_connect_ex: Callable[..., Any] = socket.socket.connect_ex
        self._real_create_connection: Callable[..., Any] = socket.create_connection
        self._real_getaddrinfo: Callable[..., Any] = socket.getaddrinfo
        self._real_gethostbyname: Callable[..., Any] = socket.gethostbyname
        self._real_gethostbyname_ex: Callable[..., Any] = socket.gethostbyname_ex

    # -- decisions ---------------------------------------------------------------------------
    def _check_address(self, family: int, address: Any) -> None:
        if not self.enabled:
            return
        if family == getattr(socket, "AF_UNIX", object()) or isinstance(address, (str, bytes)):
            return  # Unix-domain sockets never leave the machine
        host = address[0] if isinstance(address, tuple) and address else address
        if not _is_local_host(host):
            self._refuse(f"connect to {address!r}")

    def _refuse(self, what: str) -> None:
        with self._lock:
            self.violations.append(what)
        raise NetworkBlockedError(f"network guard: tests may only reach loopback; refused {what}")

    def take_violations(self) -> list[str]:
        """Return and forget the recorded refusals."""
        with self._lock:
            out, self.violations = self.violations, []
        return out

    @contextmanager
    def expect_violation(self) -> Iterator[list[str]]:
        """Let a test provoke refusals on purpose; yields the list they are collected into."""
        seen: list[str] = []
        try:
            yield seen
        finally:
            seen.extend(self.take_violations())

    # -- patching ----------------------------------------------------------------------------
    def install(self) -> None:
        """Patch the socket module (idempotent)."""
        if self._installed:
            return
        guard = self

        def connect(sock: socket.socket, address: Any) -> None:
            guard._check_address(sock.family, address)
            guard._real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            guard._check_address(sock.family, address)
            result: int = guard._real_connect_ex(sock, address)
            return result

        def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            if guard.enabled and not _is_local_host(address[0]):
                guard._refuse(f"create_connection to {address!r}")
            sock: socket.socket = guard._real_create_connection(address, *args, **kwargs)
            return sock

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            # Resolving a DNS name is itself traffic; IP literals resolve locally.
            if (
                guard.enabled
                and host is not None
                and not _is_ip_literal(host)
                and not _is_local_host(host)
            ):
                guard._refuse(f"DNS lookup of {host!r}")
            return guard._real_getaddrinfo(host, *args, **kwargs)

        def resolver(real: Callable[..., Any]) -> Callable[..., Any]:
            def resolve(host: Any) -> Any:
                if guard.enabled and not _is_ip_literal(host) and not _is_local_host(host):
                    guard._refuse(f"DNS lookup of {host!r}")
                return real(host)

            return resolve

        socket.socket.connect = connect  # type: ignore[method-assign,assignment]
        socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
        socket.create_connection = create_connection  # type: ignore[assignment]
        socket.getaddrinfo = getaddrinfo
        socket.gethostbyname = resolver(self._real_gethostbyname)
        socket.gethostbyname_ex = resolver(self._real_gethostbyname_ex)
        self._installed = True

    def uninstall(self) -> None:
        """Restore the real socket functions."""
        if not self._installed:
            return
        socket.socket.connect = self._real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = self._real_connect_ex  # type: ignore[method-assign]
        socket.create_connection = self._real_create_connection
        socket.getaddrinfo = self._real_getaddrinfo
        socket.gethostbyname = self._real_gethostbyname
        socket.gethostbyname_ex = self._real_gethostbyname_ex
        self._installed = False


GUARD = NetworkGuard()
"""The session's guard (installed by :func:`pytest_configure`)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"live: calls a real model provider; skipped unless {LIVE_ENV}=1"
    )
    config.addinivalue_line("markers", "allow_network: exempt from the network guard")
    # litellm's streaming types trigger a harmless pydantic warning on first use
    config.addinivalue_line(
        "filterwarnings", "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"
    )
    # HTTP clients honour *_PROXY variables; loopback calls to the fake server must stay direct.
    for var in ("NO_PROXY", "no_proxy"):
        present = [p for p in os.environ.get(var, "").split(",") if p]
        wanted = [h for h in ("127.0.0.1", "localhost", "::1") if h not in present]
        os.environ[var] = ",".join(present + wanted)
    GUARD.install()


def pytest_unconfigure(config: pytest.Config) -> None:
    GUARD.uninstall()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if settings().live:
        return
    skip = pytest.mark.skip(reason=f"live model test; set {LIVE_ENV}=1 to run")
    for item in items:
        if item.get_closest_marker("live") is not None:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _network_guard(request: pytest.FixtureRequest) -> Iterator[NetworkGuard]:
    exempt = (
        request.node.get_closest_marker("live") is not None
        or request.node.get_closest_marker("allow_network") is not None
    )
    GUARD.install()
    GUARD.take_violations()
    GUARD.enabled = not exempt
    try:
        yield GUARD
    finally:
        GUARD.enabled = True
        leaked = GUARD.take_violations()
    if leaked:
        pytest.fail(
            "test tried to reach the network (refused by the guard): " + "; ".join(leaked[:5]),
            pytrace=False,
        )


@pytest.fixture
def network_guard(_network_guard: NetworkGuard) -> NetworkGuard:
    """The active :class:`NetworkGuard`."""
    return _network_guard


@pytest.fixture
def fake_llm_server() -> Iterator[FakeOpenAIServer]:
    """A started fake OpenAI-compatible server on 127.0.0.1 (stopped after the test)."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def scripted_llm() -> Callable[..., Any]:
    """Factory: ``scripted_llm(replies_or_function, **kwargs) -> ScriptedLLM``."""
    from core.llm import ScriptedLLM

    def make(replies: Any, **kwargs: Any) -> ScriptedLLM:
        return ScriptedLLM(replies, **kwargs)

    return make
