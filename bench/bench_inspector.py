"""Studio Inspect page: server time to render a 100-turn episode (target < 0.5 s).

A 100-turn τ² Airline episode is built with a scripted agent (read-only tool calls cost no
patience, so the turn cap of 100 ends it), stored in a temporary store, and the Inspect page is
rendered through Streamlit's AppTest with the episode deep-linked. AppTest adds fixed costs of
its own (polling sleeps; re-scanning installed packages for components on every run, which a
real server does once at start), so the page's server time is reported as the AppTest time
minus the AppTest time of an empty page measured in the same run. Baseline (same run): the same
page for a 10-turn episode, so the ratio shows how render time grows with episode length.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.construction.pipeline import load_bundled
from core.engine import episode
from core.model.actions import EnvOp, Propose
from core.model.config import ProtocolConfig
from core.model.world import EnvAction
from core.paths import PROJECT_ROOT
from core.store import Store

TARGET_S = 0.5

if str(PROJECT_ROOT) not in sys.path:  # pages/ imports pages.common like the real server does
    sys.path.insert(0, str(PROJECT_ROOT))


def _episode(store: Store, turns: int) -> str:
    graphs, samples = load_bundled("tau2_airline")
    sample = next(s for s in samples if len(s.faults) == 1)
    graph = next(g for g in graphs if g.graph_id == sample.graph_id)
    eid = episode.start(store, sample, "rational", 0, "bench", ProtocolConfig(), graph=graph)
    user = graph.root.context.get("user_id", "mia_li_3668")
    for _ in range(turns - 1):
        op = EnvOp(action=EnvAction(tool="get_user_details", args={"user_id": user}))
        view = episode.step(store, eid, op)
        if view.ended or view.forced_final:
            break
    episode.step(store, eid, Propose(text="done"))
    view = episode.agent_view(store, eid)
    if not view.ended:
        episode.step(store, eid, Propose(text="done"))
    return eid


EMPTY_PAGE = "import streamlit as st\nst.title('empty')\n"


def _skip_component_rescans() -> None:
    """AppTest re-scans every installed package for components per run; a server does it once."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    def once(self: Any, *, start_file_watching: bool = True) -> None:
        return None

    BidiComponentManager.discover_and_register_components = once  # type: ignore[method-assign]


def _render_seconds(eid: str | None, reps: int) -> float:
    from streamlit.testing.v1 import AppTest

    times = []
    for _ in range(reps):
        if eid is None:
            at = AppTest.from_string(EMPTY_PAGE, default_timeout=60)
        else:
            at = AppTest.from_file(str(PROJECT_ROOT / "pages" / "inspect.py"), default_timeout=60)
            at.query_params["episode"] = eid
        t0 = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return statistics.median(times)


def run(quick: bool = False) -> list[dict[str, Any]]:
    reps = 3 if quick else 7
    with tempfile.TemporaryDirectory() as home:
        old = os.environ.get("DRIFTBENCH_HOME")
        os.environ["DRIFTBENCH_HOME"] = home
        try:
            store = Store.open(Path(home) / "driftbench.db")
            graphs, samples = load_bundled("tau2_airline")
            store.put_graphs_and_samples(graphs, samples, source="bundled")
            long_id = _episode(store, 100)
            short_id = _episode(store, 10)
            n_long = len(episode.agent_view(store, long_id).transcript)
            _render_seconds(short_id, 1)  # warm imports and caches
            _skip_component_rescans()
            empty = _render_seconds(None, reps)
            short = max(_render_seconds(short_id, reps) - empty, 1e-6)
            long = max(_render_seconds(long_id, reps) - empty, 1e-6)
        finally:
            if old is None:
                os.environ.pop("DRIFTBENCH_HOME", None)
            else:
                os.environ["DRIFTBENCH_HOME"] = old
    return [
        {
            "name": "inspector render, 100-turn episode (AppTest, server side)",
            "value": long,
            "unit": "s",
            "baseline": short,
            "ratio": short / long if long else None,
            "target": f"< {TARGET_S} s",
            "met": long < TARGET_S,
            "notes": (
                f"baseline = same page, 10-turn episode; {n_long} transcript lines; "
                f"AppTest harness overhead {empty:.3f} s subtracted"
            ),
        }
    ]
