"""Start the studio: ``python -m pages.common.launch [streamlit options]``.

The fixed project layout keeps pages in a top-level ``pages/`` folder, which Streamlit also
treats as its legacy automatic page discovery: the very first script run of a server process
would show a file-name sidebar instead of the role-based ``st.navigation`` of ``app.py``.
Marking the process as a navigation (v2) app before the server starts avoids that.
"""

from __future__ import annotations

import os
import sys

from streamlit.runtime.pages_manager import PagesManager
from streamlit.web import cli

from core.paths import PROJECT_ROOT
from core.studio.env import check_settings


def server_environment() -> None:
    """Let the studio see each connection's real TCP peer (header mode trusts peers).

    The web server (uvicorn) would otherwise replace the peer of a loopback connection with the
    address a same-host proxy puts in ``X-Forwarded-For``, so header mode could no longer tell
    that the request came through that proxy and refused it. With no forwarding source trusted,
    the peer stays the proxy's own address (loopback, or one of ``DRIFTBENCH_TRUSTED_PROXIES``).
    """
    os.environ["FORWARDED_ALLOW_IPS"] = ""


def main(argv: list[str] | None = None) -> None:
    """Run ``streamlit run app.py`` with the given extra options (after checking the settings)."""
    problem = check_settings()
    if problem is not None:  # a bad DRIFTBENCH_* value: one line, exit 2, no server
        print(problem, file=sys.stderr)
        raise SystemExit(2)
    server_environment()
    PagesManager.uses_pages_directory = False
    sys.argv = [
        "streamlit",
        "run",
        str(PROJECT_ROOT / "app.py"),
        *(argv if argv is not None else sys.argv[1:]),
    ]
    cli.main()


if __name__ == "__main__":
    main()
