"""How one call travels: straight to an OpenAI-compatible endpoint, or through litellm.

``openai/…@API_BASE`` calls go straight to the endpoint (:mod:`core.llm.openai_http`);
every other provider, streamed replies and litellm-only parameters go through litellm. Both
send the same body fields (:func:`core.llm.openai_http.sampling_params`) and both replies are
checked as strictly: a malformed reply raises
:class:`~core.llm.openai_http.ProviderBadReply` (retried by the caller's retry loop).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from core.llm import openai_http
from core.llm.env import load_litellm
from core.llm.openai_http import ProviderBadReply, direct_eligible
from core.llm.prices import UNPRICED, cost_of, ensure_priced, supports
from core.llm.types import DeltaCallback, LLMResponse, ModelSpec, ToolCall, Usage


class Route(NamedTuple):
    """How one call travels: direct (``litellm`` is None) or through litellm."""

    litellm: Any | None
    where: openai_http.Endpoint | None
    body: bytes
    kwargs: dict[str, Any]
    streamed: bool


def litellm_kwargs(
    spec: ModelSpec,
    api_key: str | None,
    msgs: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
    timeout_s: float,
) -> dict[str, Any]:
    """The keyword arguments of ``litellm.completion`` for one call."""
    kwargs: dict[str, Any] = {
        "model": spec.model,
        "messages": msgs,
        "timeout": timeout_s,
        # our own loop retries; litellm and the openai SDK must not retry underneath it
        "num_retries": 0,
        "max_retries": 0,
    }
    kwargs.update(openai_http.sampling_params(spec))
    if spec.extra:  # sent as they are, as on the direct path (litellm would refuse some)
        kwargs["allowed_openai_params"] = sorted(spec.extra)
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if api_key is not None:
        kwargs["api_key"] = api_key
    if tools:
        kwargs["tools"] = tools
    kwargs.update(params)
    if "seed" in kwargs and not supports(load_litellm(), spec.model, "seed"):
        kwargs.pop("seed")  # still part of the cache key; the provider would refuse it
    return kwargs


def route(
    spec: ModelSpec,
    api_key: str | None,
    msgs: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
    streamed: bool,
    timeout_s: float,
) -> Route:
    """Choose the direct path or litellm for one call and prepare what it sends."""
    if direct_eligible(spec, params, streamed):
        where = openai_http.endpoint(spec, api_key, params)
        if "timeout" not in params:
            where = where._replace(timeout_s=timeout_s)
        body = openai_http.request_body(spec, msgs, tools, params)
        return Route(None, where, body, {}, streamed)
    litellm = load_litellm()
    ensure_priced(litellm, spec.model)
    return Route(
        litellm, None, b"", litellm_kwargs(spec, api_key, msgs, tools, params, timeout_s), streamed
    )


def send(route_: Route, msgs: list[dict[str, Any]], on_delta: DeltaCallback | None) -> Any:
    """One attempt, blocking; returns the raw reply of the route's transport."""
    if route_.litellm is None:
        assert route_.where is not None
        return openai_http.post(route_.where, route_.body)
    if route_.streamed:
        return _stream_sync(route_.litellm, route_.kwargs, msgs, on_delta)
    return route_.litellm.completion(**route_.kwargs)


async def asend(route_: Route, msgs: list[dict[str, Any]], on_delta: DeltaCallback | None) -> Any:
    """One attempt on the running event loop (see :func:`send`)."""
    if route_.litellm is None:
        assert route_.where is not None
        return await openai_http.apost(route_.where, route_.body)
    if route_.streamed:
        return await _stream_async(route_.litellm, route_.kwargs, msgs, on_delta)
    return await route_.litellm.acompletion(**route_.kwargs)


def reply(spec: ModelSpec, route_: Route, raw: Any, latency_ms: float) -> LLMResponse:
    """The raw reply of either transport as a checked :class:`LLMResponse`."""
    if route_.litellm is None:
        return openai_http.parse_reply(spec, raw, latency_ms)
    return parse_litellm(route_.litellm, spec, raw, latency_ms)


def parse_litellm(litellm: Any, spec: ModelSpec, raw: Any, latency_ms: float) -> LLMResponse:
    """A litellm reply as an :class:`LLMResponse`, checked as strictly as the direct path's.

    Raises:
        ProviderBadReply: No choice, no text and no tool calls, non-text content or broken
            tool calls.
    """
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise ProviderBadReply("no choices")
    choice = choices[0]
    finish = getattr(choice, "finish_reason", None)
    message = getattr(choice, "message", None)
    if message is None:
        raise ProviderBadReply("the first choice has no message")
    text = openai_http.check_text(getattr(message, "content", None), "content")
    calls: list[ToolCall] = []
    raw_calls = getattr(message, "tool_calls", None)
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise ProviderBadReply("tool_calls is not a list")
    for index, call in enumerate(raw_calls or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if not isinstance(name, str) or not name:
            raise ProviderBadReply(f"tool call {index} has no function name")
        args = getattr(function, "arguments", None)
        calls.append(
            ToolCall(
                id=getattr(call, "id", None) or f"call_{index}",
                name=openai_http.check_text(name, "tool name"),
                arguments=openai_http.check_text(args or "", "tool arguments"),
            )
        )
    openai_http.check_completion(text, calls)
    usage = getattr(raw, "usage", None)
    return LLMResponse(
        text=text,
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        ),
        cost_usd=cost_of(litellm, raw, spec.model),
        cached=False,
        priced=spec.model not in UNPRICED and openai_http.priced(spec.model),
        model=spec.model,
        latency_ms=latency_ms,
        finish_reason=finish if isinstance(finish, str) else None,
    )


# -- streaming (litellm only) --------------------------------------------------------------------
def _stream_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(kwargs, stream=True)
    out.setdefault("stream_options", {"include_usage": True})
    return out


def _stream_sync(
    litellm: Any, kwargs: dict[str, Any], msgs: list[dict[str, Any]], on_delta: DeltaCallback | None
) -> Any:
    chunks = []
    for chunk in litellm.completion(**_stream_kwargs(kwargs)):
        chunks.append(chunk)
        _emit(chunk, on_delta)
    return litellm.stream_chunk_builder(chunks, messages=msgs)


async def _stream_async(
    litellm: Any, kwargs: dict[str, Any], msgs: list[dict[str, Any]], on_delta: DeltaCallback | None
) -> Any:
    chunks = []
    async for chunk in await litellm.acompletion(**_stream_kwargs(kwargs)):
        chunks.append(chunk)
        _emit(chunk, on_delta)
    return litellm.stream_chunk_builder(chunks, messages=msgs)


def _emit(chunk: Any, on_delta: DeltaCallback | None) -> None:
    if on_delta is None:
        return
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        text = getattr(delta, "content", None)
        if isinstance(text, str) and text:
            on_delta(text)
