"""Each fact has one definition: the llm_cache table, the annotation INSERT, markdown escaping,
litellm's offline switches, the patience cost map and the seeded sample draw."""

from __future__ import annotations

import ast
import re
import sqlite3
from pathlib import Path

import pytest

import core
from core.llm import ResponseCache
from core.llm.cache import CACHE_SCHEMA
from core.llm.env import OFFLINE_SWITCHES as LLM_SWITCHES
from core.model.config import ProtocolConfig
from core.paths import PROJECT_ROOT
from core.protocol.patience import cost_of
from core.store import LLM_CACHE_DDL, Store

SOURCES = [PROJECT_ROOT / "app.py", *(PROJECT_ROOT / "core").rglob("*.py")]
SOURCES += list((PROJECT_ROOT / "pages").rglob("*.py"))


def _text_hits(pattern: str) -> list[str]:
    rx = re.compile(pattern, flags=re.I)
    return [
        str(p.relative_to(PROJECT_ROOT))
        for p in SOURCES
        for _ in rx.finditer(p.read_text(encoding="utf-8"))
    ]


def _defs(name: str) -> list[str]:
    out = []
    for p in SOURCES:
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
                out.append(str(p.relative_to(PROJECT_ROOT)))
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out += [
                    str(p.relative_to(PROJECT_ROOT))
                    for t in targets
                    if isinstance(t, ast.Name)
                    and t.id == name
                    and node.value is not None
                    and not isinstance(node.value, ast.Name | ast.Call | ast.Attribute)
                ]
    return out


def test_one_create_table_llm_cache() -> None:
    assert _text_hits(r"CREATE TABLE[^(]*\bllm_cache\b") == ["core/store/schema.py"]
    assert CACHE_SCHEMA is LLM_CACHE_DDL


def _table_sql(path: Path) -> str:
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name='llm_cache'").fetchone()
    conn.close()
    return str(row[0])


def test_the_store_and_the_cache_create_the_same_table(tmp_path: Path) -> None:
    Store.open(tmp_path / "store.db")
    ResponseCache(tmp_path / "cache.db").clear()
    assert _table_sql(tmp_path / "store.db") == _table_sql(tmp_path / "cache.db")
    cache_first = tmp_path / "both.db"  # the cache may create it in a file the store opens later
    ResponseCache(cache_first).clear()
    store = Store.open(cache_first)
    assert _table_sql(cache_first) == _table_sql(tmp_path / "store.db")
    assert store.schema_version() >= 2


def test_one_insert_into_annotations() -> None:
    assert _text_hits(r"INSERT\s+(OR\s+\w+\s+)?INTO\s+annotations\b") == [
        "core/store/annotations.py"
    ]


def test_one_markdown_escaper() -> None:
    assert _defs("md_escape") == ["core/studio/markdown.py"]
    from core.studio import dashboards
    from core.studio.markdown import md_escape

    assert dashboards.md_escape is md_escape


def test_offline_switches_are_defined_once() -> None:
    assert _defs("OFFLINE_SWITCHES") == ["core/__init__.py"]
    assert LLM_SWITCHES is core.OFFLINE_SWITCHES
    assert _text_hits(r'"LITELLM_OFFLINE_MODE"') == ["core/__init__.py"]


@pytest.mark.parametrize("reason", ["question", "rejected_proposal", "malformed", "env_action"])
def test_the_patience_cost_map_is_protocol_config_costs(reason: str) -> None:
    cfg = ProtocolConfig(
        cost_question=1.5, cost_rejected_proposal=3.25, cost_malformed=0.75, cost_env_action=0.1
    )
    assert cost_of(reason, cfg) == cfg.costs()[reason]  # type: ignore[arg-type]
    assert _text_hits(r"self\.cost_question\b|config\.cost_question\b") == ["core/model/config.py"]


def test_one_seeded_sample_draw() -> None:
    """Only core.model.sampling draws a sample with a seeded Random().choice."""
    assert _text_hits(r"Random\([^)]*\)\.choice\(") == ["core/model/sampling.py"]
