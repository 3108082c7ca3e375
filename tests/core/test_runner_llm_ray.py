"""LLM sweeps on the Ray backend (async actors, the driver the one writer): the same records
as the local backend, against the fake OpenAI-compatible server."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.model.run import RunOptions
from core.runner import run_sweep
from core.store import Store
from tests.fakes.openai_server import FakeOpenAIServer
from tests.reliability.conftest import good_reply, llm_spec

pytest.importorskip("ray")


def test_ray_llm_sweep_writes_the_same_records_as_local(
    tmp_path: Path, fake_llm_server: FakeOpenAIServer
) -> None:
    fake_llm_server.responder = good_reply
    spec = llm_spec(fake_llm_server.base_url, methods=("B0", "A2"), limit=3)
    results = {}
    for backend in ("local", "ray"):
        store = Store.open(tmp_path / f"{backend}.db")
        opts = RunOptions(backend=backend, workers=2, concurrency=4, progress=False)
        res = run_sweep(store, spec, opts)
        assert res.status == "completed" and res.completed == 6, res
        rows = sorted(store.episode_rows(run_id=spec.run_id()), key=lambda r: r["episode_id"])
        results[backend] = [
            (r["episode_id"], r["outcome"], store.event_jsons(r["episode_id"])) for r in rows
        ]
        store.close()
    assert results["ray"] == results["local"]
