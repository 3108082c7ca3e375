"""Real-browser tests: the studio on a free loopback port, driven by Debian chromium.

No browser is downloaded: Playwright launches ``/usr/bin/chromium`` (``make test`` installs it
from Debian's packages). Waits are on ``/_stcore/health`` and on the app's rendered markers,
never on fixed sleeps. Screenshots go to ``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARTIFACTS = PROJECT_ROOT / "test-artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

E2E_DIR = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under ``tests/e2e`` ``e2e`` (before ``-m`` selects).

    A ``pytestmark`` in a conftest marks nothing, so the marker is added here, by path; this
    hook sees the whole session's items and touches only this folder's.
    """
    for item in items:
        if E2E_DIR in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_studio(
    home: Path, extra_env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Start the studio on a free port with ``home`` as DRIFTBENCH_HOME; return (proc, url)."""
    port = _free_port()
    env = {**os.environ, "DRIFTBENCH_HOME": str(home), **(extra_env or {})}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pages.common.launch",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(proc.stdout.read().decode() if proc.stdout else "studio exited")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as resp:
                if resp.read() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("studio did not become healthy within 60 s")


@pytest.fixture(scope="session")
def studio_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store initialised with the bundled data and the demo sweep."""
    home = tmp_path_factory.mktemp("e2e_home")
    subprocess.run(
        [sys.executable, "-c", "from core.cli import main; raise SystemExit(main(['init']))"],
        cwd=PROJECT_ROOT,
        env={**os.environ, "DRIFTBENCH_HOME": str(home)},
        check=True,
        capture_output=True,
    )
    return home


@pytest.fixture(scope="session")
def studio_url(studio_home: Path) -> Iterator[str]:
    """URL of a running studio over the initialised store."""
    proc, url = start_studio(studio_home)
    yield url
    proc.terminate()
    proc.wait(timeout=15)


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """A headless Debian chromium driven by Playwright.

    Module-scoped on purpose: Playwright's sync API keeps an event loop running in the main
    thread while it is open, which would break ``asyncio.run`` in tests collected later.
    """
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} absent: install Debian's chromium (make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def tab(chromium):  # type: ignore[no-untyped-def]
    """A fresh browser context and page."""
    ctx = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    yield page
    ctx.close()


def wait_for_app(page) -> None:  # type: ignore[no-untyped-def]
    """Wait until the Streamlit app is connected and its script has finished running."""
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')


def screenshot(page, name: str) -> Path:  # type: ignore[no-untyped-def]
    """Save a full-page screenshot as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
