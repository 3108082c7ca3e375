"""Ruling: extractors and judges come from different model families (``--allow-same-family``)."""

from __future__ import annotations

import pytest

from core.cli import main
from core.errors import ConfigError
from core.model.families import check_independent, model_family, same_family


@pytest.mark.parametrize(
    ("spec", "provider", "family"),
    [
        ("openai/gpt-4o-mini", "openai", "openai"),
        ("gpt-4o", "", "openai"),
        ("azure/gpt-4o@https://example.invalid", "azure", "openai"),
        ("openai/o3-mini", "openai", "openai"),
        ("anthropic/claude-3-5-haiku-20241022", "anthropic", "anthropic"),
        ("gemini/gemini-1.5-flash", "gemini", "google"),
        ("hosted_vllm/Qwen/Qwen2.5-7B-Instruct", "hosted_vllm", "qwen"),
        ("openai/qwen2.5-0.5b-instruct@http://127.0.0.1:8080/v1", "openai", "qwen"),
        ("ollama/llama3.1:8b", "ollama", "meta"),
        ("together_ai/meta-llama/Llama-3-70b-chat-hf", "together_ai", "meta"),
        ("mistral/mistral-large-latest", "mistral", "mistral"),
        ("groq/mixtral-8x7b-32768", "groq", "mistral"),
        ("deepseek/deepseek-chat", "deepseek", "deepseek"),
        ("volcengine/doubao-seed-2-1-pro", "volcengine", "bytedance"),
        ("ollama/phi3:mini", "ollama", "microsoft"),
        ("openai/my-own-model", "openai", "openai:my-own-model"),
    ],
)
def test_family_is_read_from_the_spec(spec: str, provider: str, family: str) -> None:
    got = model_family(spec)
    assert got is not None and (got.provider, got.family) == (provider, family)


def test_offline_readers_have_no_family() -> None:
    for spec in ("rule", "align", "heuristic", "template", "symbolic"):
        assert model_family(spec) is None
    assert not same_family("rule", "openai/gpt-4o")


def test_same_family_pairs_are_refused_unless_allowed() -> None:
    check_independent("rule", "align", what="extractors", field="x")
    check_independent("openai/gpt-4o-mini", "anthropic/claude-3-5-haiku", what="j", field="x")
    with pytest.raises(ConfigError, match="same|differ"):
        check_independent("openai/gpt-4o", "azure/gpt-4o", what="j", field="x")
    with pytest.raises(ConfigError, match="openai model family"):
        check_independent("openai/gpt-4o", "openai/gpt-4o-mini", what="judges", field="x")
    check_independent(
        "openai/gpt-4o", "openai/gpt-4o-mini", what="j", field="x", allow_same_family=True
    )
    with pytest.raises(ConfigError):  # the identical model is refused even when allowed
        check_independent(
            "qwen/qwen2.5", "qwen/qwen2.5", what="j", field="x", allow_same_family=True
        )


def test_cli_refuses_same_family_extractors_and_judges(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    db = str(tmp_path / "s.db")
    pair = "hosted_vllm/Qwen/Qwen2.5-7B-Instruct,openai/qwen2.5-0.5b-instruct"
    build = ["--store", db, "build", "samples", "--benchmark", "tau2_retail", "--extractors", pair]
    assert main(build) == 2
    err = capsys.readouterr().err
    assert "--extractors" in err and "qwen model family" in err and "--allow-same-family" in err
    assert not (tmp_path / "s.db").exists() or (tmp_path / "s.db").stat().st_size >= 0
    grip = ["--store", db, "grip", "demo", "--judges", "openai/gpt-4o,openai/gpt-4o-mini"]
    assert main(grip) == 2
    assert "--judges" in capsys.readouterr().err
