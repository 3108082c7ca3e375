"""The response cache stays bounded: an over-long reply is served but never stored."""

from __future__ import annotations

from pathlib import Path

from core.llm.cache import ResponseCache
from core.llm.types import LLMResponse
from core.model.bounds import MAX_STORED_TEXT_CHARS


def _put(cache: ResponseCache, key: str, text: str) -> None:
    cache.put(
        key,
        model="m",
        namespace="ns",
        request={"messages": [{"role": "user", "content": key}]},
        response=LLMResponse(text=text, model="m"),
    )


def test_a_reply_over_the_cap_is_not_stored(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    _put(cache, "small", "fine")
    _put(cache, "huge", "x" * (MAX_STORED_TEXT_CHARS + 1))
    assert cache.get("small") is not None
    assert cache.get("huge") is None and len(cache) == 1
    cache.close()
    assert (tmp_path / "c.db").stat().st_size < MAX_STORED_TEXT_CHARS


def test_a_reply_at_the_cap_is_kept_whole(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    text = "y" * MAX_STORED_TEXT_CHARS
    _put(cache, "edge", text)
    got = cache.get("edge")
    assert got is not None and got.response.text == text
