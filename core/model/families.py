"""Model families read from a model spec, for the "different model families" rule.

The paper reads every request with two extractors, and every user turn with two role-realism
judges, **from different model families**: two models of one family share training data and
habits, so their agreement is weak evidence. A spec (``provider/model[@api_base]``, litellm's
form) names its provider; the family is the model line the name belongs to, found by a known
family word in the model name (``gpt-4o-mini`` → ``openai``, ``Qwen/Qwen2.5-7B-Instruct`` →
``qwen``, ``claude-3-5-haiku`` → ``anthropic``). The same model through two providers
(``openai/gpt-4o`` and ``azure/gpt-4o``) is one family. A model name with no known family word
is its own family (provider plus model name): nothing says it shares a line with another.

Offline readers (``rule``, ``align``, ``heuristic``, ``template``, ``symbolic``) have no
family and never conflict with a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import ConfigError

OFFLINE_READERS = frozenset({"rule", "align", "heuristic", "template", "symbolic", "human"})
"""Specs of the offline implementations (no model, no family)."""

FAMILY_WORDS: tuple[tuple[str, str], ...] = (
    ("chatgpt", "openai"),
    ("gpt", "openai"),
    ("davinci", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("palm", "google"),
    ("llama", "meta"),
    ("qwen", "qwen"),
    ("qwq", "qwen"),
    ("mixtral", "mistral"),
    ("mistral", "mistral"),
    ("ministral", "mistral"),
    ("codestral", "mistral"),
    ("magistral", "mistral"),
    ("pixtral", "mistral"),
    ("deepseek", "deepseek"),
    ("phi", "microsoft"),
    ("command", "cohere"),
    ("aya", "cohere"),
    ("grok", "xai"),
    ("doubao", "bytedance"),
    ("seed", "bytedance"),
    ("glm", "zhipu"),
    ("kimi", "moonshot"),
    ("moonshot", "moonshot"),
    ("yi", "01ai"),
    ("smollm", "huggingface"),
    ("granite", "ibm"),
    ("nemotron", "nvidia"),
    ("olmo", "allenai"),
    ("ernie", "baidu"),
    ("hunyuan", "tencent"),
    ("minimax", "minimax"),
)
"""Family words of model names (a word of the name, or the start of one: ``qwen2.5``)."""

_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class ModelFamily:
    """Where a model comes from: its provider (litellm prefix) and its model family."""

    provider: str
    family: str
    model: str


def model_family(spec: str) -> ModelFamily | None:
    """The provider and family of a model spec (None for an offline reader).

    >>> model_family("openai/gpt-4o-mini@http://127.0.0.1:8000/v1")
    ModelFamily(provider='openai', family='openai', model='gpt-4o-mini')
    >>> model_family("hosted_vllm/Qwen/Qwen2.5-7B-Instruct").family
    'qwen'
    >>> model_family("ollama/my-local-model").family
    'ollama:my-local-model'

    Raises:
        ConfigError: An empty spec.
    """
    text = spec.strip()
    if not text:
        raise ConfigError("empty model spec", field="model")
    if text.lower() in OFFLINE_READERS:
        return None
    text = text.split("@", 1)[0]
    provider, _, model = text.partition("/")
    if not model:
        provider, model = "", provider
    name = model.lower()
    words = _WORD.findall(name.replace(".", ""))
    for word, family in FAMILY_WORDS:
        if any(w == word or (w.startswith(word) and len(word) >= 3) for w in words):
            return ModelFamily(provider=provider.lower(), family=family, model=model)
    return ModelFamily(provider=provider.lower(), family=f"{provider.lower()}:{name}", model=model)


def same_model(a: str, b: str) -> bool:
    """Whether two specs name the same model (ignoring the provider prefix and API base)."""
    if a.strip() == b.strip():
        return True
    fa, fb = model_family(a), model_family(b)
    return fa is not None and fb is not None and fa.model.lower() == fb.model.lower()


def same_family(a: str, b: str) -> bool:
    """Whether two specs are models of one family (offline readers never are)."""
    fa, fb = model_family(a), model_family(b)
    return fa is not None and fb is not None and fa.family == fb.family


def check_independent(
    a: str, b: str, *, what: str, field: str, allow_same_family: bool = False
) -> None:
    """Refuse a pair of readers (extractors, judges) that are not independent.

    The same reader or model twice is always refused; two models of one family are refused
    unless ``allow_same_family`` (``--allow-same-family``) says so.

    Raises:
        ConfigError: Naming ``field``.
    """
    if same_model(a, b):
        raise ConfigError(
            f"the two {what} must differ (got {a!r} and {b!r}): their agreement is only "
            "evidence when they read independently",
            field=field,
        )
    if not allow_same_family and same_family(a, b):
        fam = model_family(a)
        assert fam is not None
        raise ConfigError(
            f"the two {what} {a!r} and {b!r} are both from the {fam.family} model family; "
            "the protocol needs different families (pass --allow-same-family to run anyway)",
            field=field,
        )
