"""Direct transport to OpenAI-compatible endpoints: one HTTP POST per call, no SDK in between.

A spec ``openai/MODEL@API_BASE`` names a server that speaks OpenAI's chat-completions protocol
(vLLM, llama.cpp, Ollama, LM Studio, a gateway, the test fake). For those, litellm adds little
but costs a lot of CPU: several milliseconds per call in its wrappers and the openai SDK's
httpx pool, which at 64 concurrent episodes saturates a 2-core machine (see
``docs/PERFORMANCE.md``). This module sends the same request body itself:

* async calls go through one ``aiohttp`` session per event loop (closed when the loop shuts
  down); sync calls through one ``httpx.Client`` per process;
* failures become :class:`ProviderFailure` with the HTTP status, whether a retry may help and
  the server's ``Retry-After``, which the client's retry loop turns into ``LLMError``;
* prices come from litellm's local cost map (per model, looked up once);
* proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``) are honoured, as they are on
  litellm's path.

Everything else (other providers, streaming, litellm-only parameters such as
``mock_response``) still goes through litellm. ``DRIFTBENCH_LLM_TRANSPORT=litellm`` sends every
call through litellm, e.g. to compare the two.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import re
import threading
import urllib.request
import weakref
from collections.abc import AsyncIterator
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from core.llm.env import load_litellm
from core.llm.types import LLMResponse, ModelSpec, ToolCall, Usage, is_reasoning_model
from core.settings import env_name, settings

TRANSPORT_ENV = env_name("llm_transport")
"""``auto`` (default: direct for OpenAI-compatible endpoints) or ``litellm`` (always litellm)."""

BODY_PARAMS = frozenset(
    {
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "max_completion_tokens",
        "max_tokens",
        "n",
        "parallel_tool_calls",
        "presence_penalty",
        "reasoning_effort",
        "response_format",
        "seed",
        "stop",
        "temperature",
        "tool_choice",
        "top_logprobs",
        "top_p",
        "user",
    }
)
"""OpenAI chat-completions fields a caller may pass through ``**params`` on the direct path."""

TRANSPORT_PARAMS = frozenset({"timeout"})
"""Parameters the direct path honours as transport settings (never sent in the body)."""

RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
"""Client-error statuses worth retrying (every 5xx is too)."""


class ProviderFailure(Exception):  # noqa: N818 - a failure report, raised and classified
    """One failed attempt on the direct path.

    Attributes:
        status: The HTTP status (408 for a timeout), or None when no response arrived.
        retryable: Whether another attempt may succeed.
        retry_after: Seconds the server asked us to wait, if it said.
    """

    def __init__(
        self, message: str, *, status: int | None, retryable: bool, retry_after: float | None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderTimeout(ProviderFailure):
    """No complete reply within the timeout (reported as status 408, retryable)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"no reply within {seconds:g}s", status=408, retryable=True, retry_after=None
        )


class ProviderConnectionError(ProviderFailure):
    """The connection failed or dropped before a reply (retryable)."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(
            f"{type(exc).__name__}: {exc}", status=None, retryable=True, retry_after=None
        )


class ProviderHTTPError(ProviderFailure):
    """The server answered with an HTTP error status."""


class ProviderBadReply(ProviderFailure):
    """The server answered 200 with something that is not a usable completion (retryable).

    Not JSON, an error body, no choices, no text and no tool calls, a non-text content,
    structurally broken tool calls or text that is not valid Unicode: a provider fault, never
    the model's (or the agent's) behaviour.
    """

    def __init__(self, what: str, *, status: int | None = None) -> None:
        super().__init__(
            f"malformed provider reply: {what}", status=status, retryable=True, retry_after=None
        )


class Endpoint(NamedTuple):
    """Where and how one spec's requests travel."""

    url: str
    headers: dict[str, str]
    timeout_s: float


def direct_eligible(spec: ModelSpec, params: dict[str, Any], stream: bool) -> bool:
    """Whether a call can take the direct path (else it goes through litellm).

    Args:
        spec: The model spec.
        params: The call's extra parameters.
        stream: Whether the caller wants streamed deltas.

    Returns:
        True for a non-streamed call to an ``openai/…`` model at an explicit ``api_base`` whose
        parameters are all plain chat-completions fields, unless the environment forces litellm.
    """
    if settings().llm_transport == "litellm":
        return False
    if stream or spec.api_base is None or not spec.model.startswith("openai/"):
        return False
    return all(k in BODY_PARAMS or k in TRANSPORT_PARAMS or k in spec.extra for k in params)


def endpoint(spec: ModelSpec, api_key: str | None, params: dict[str, Any]) -> Endpoint:
    """The URL, headers and timeout of one call (the key only ever goes into a header)."""
    assert spec.api_base is not None  # direct_eligible checked it
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    timeout = params.get("timeout")
    timeout_s = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else None
    return Endpoint(f"{spec.api_base}/chat/completions", headers, timeout_s or spec.timeout_s)


def sampling_params(spec: ModelSpec) -> dict[str, Any]:
    """The spec's own body fields, identical on both transports.

    ``temperature`` only when the spec has one (reasoning models get none by default);
    ``max_tokens`` (``max_completion_tokens`` for reasoning models, which reject the former);
    ``reasoning_effort`` when set; then the spec's ``extra`` parameters.
    """
    out: dict[str, Any] = {}
    if spec.temperature is not None:
        out["temperature"] = spec.temperature
    if spec.max_tokens is not None:
        key = "max_completion_tokens" if is_reasoning_model(spec.model) else "max_tokens"
        out[key] = spec.max_tokens
    if spec.reasoning_effort is not None:
        out["reasoning_effort"] = spec.reasoning_effort
    out.update(spec.extra)
    return out


def request_body(
    spec: ModelSpec,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
) -> bytes:
    """The JSON body litellm would send for this call (model name without its provider)."""
    body: dict[str, Any] = {"model": spec.model.split("/", 1)[1], "messages": messages}
    body.update(sampling_params(spec))
    if tools:
        body["tools"] = tools
    body.update((k, v) for k, v in params.items() if k not in TRANSPORT_PARAMS and v is not None)
    return json.dumps(body, ensure_ascii=False).encode("utf-8", "replace")


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _http_failure(status: int, body: bytes, retry_after: str | None) -> ProviderHTTPError:
    message = body[:300].decode("utf-8", "replace")
    try:
        err = json.loads(body).get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            message = err["message"]
    except (ValueError, AttributeError):
        pass
    return ProviderHTTPError(
        f"HTTP {status}: {message[:300]}",
        status=status,
        retryable=status in RETRYABLE_STATUS or status >= 500,
        retry_after=_retry_after(retry_after),
    )


def _decode(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ProviderBadReply(f"not a JSON object: {body[:120]!r}")
    return data


# -- proxies: HTTP(S)_PROXY and NO_PROXY are honoured, as on litellm's path ---------------------
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


def _proxy_env() -> tuple[str, ...]:
    """The proxy variables as they are now (upper or lower case), for cache keys."""
    return tuple(os.environ.get(name) or os.environ.get(name.lower()) or "" for name in _PROXY_VARS)


@functools.lru_cache(maxsize=64)
def _proxy_for(url: str, env: tuple[str, ...]) -> str | None:
    """The proxy for ``url`` under proxy variables ``env`` (None: connect directly).

    Resolved once per URL and environment: reading the environment on every request costs
    more CPU than the request itself at a few hundred calls a second.
    """
    del env  # part of the cache key only; urllib reads the live environment
    parts = urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or None


# -- async: one aiohttp session per event loop -------------------------------------------------
_SESSIONS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
_KEEPERS: dict[int, AsyncIterator[None]] = {}


async def _keep(loop: asyncio.AbstractEventLoop, session: Any) -> AsyncIterator[None]:
    """Hold a session open; closes it when the loop shuts its async generators down."""
    try:
        yield
    finally:
        _SESSIONS.pop(loop, None)
        _KEEPERS.pop(id(session), None)
        await session.close()


async def _session() -> Any:
    """This event loop's shared session (created on first use)."""
    loop = asyncio.get_running_loop()
    session = _SESSIONS.get(loop)
    if session is not None and not session.closed:
        return session
    import aiohttp

    # No connection cap: the runner's semaphore bounds concurrency; a cap here would queue.
    # Proxies are resolved by _proxy_for (aiohttp's trust_env re-reads them on every request).
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=0, limit_per_host=0), trust_env=False
    )
    _SESSIONS[loop] = session
    keeper = _keep(loop, session)
    await keeper.__anext__()  # registered with the loop: asyncio.run() will close it
    _KEEPERS[id(session)] = keeper
    return session


async def apost(where: Endpoint, body: bytes) -> dict[str, Any]:
    """POST one request on the running loop and return the decoded reply.

    Raises:
        ProviderFailure: On an HTTP error status, a timeout, a dropped connection or a reply
            that is not a JSON object.
    """
    import aiohttp

    session = await _session()
    try:
        async with session.post(
            where.url,
            data=body,
            headers=where.headers,
            timeout=aiohttp.ClientTimeout(total=where.timeout_s),
            proxy=_proxy_for(where.url, _proxy_env()),
        ) as resp:
            from core.llm.reply_limits import aread_capped

            raw = await aread_capped(resp)  # a body over the cap is never read whole
            if resp.status >= 400:
                raise _http_failure(resp.status, raw, resp.headers.get("retry-after"))
    except TimeoutError:
        raise ProviderTimeout(where.timeout_s) from None
    except aiohttp.ClientError as exc:
        raise ProviderConnectionError(exc) from None
    return _decode(raw)


# -- sync: one httpx client per process --------------------------------------------------------
_SYNC: dict[tuple[int, tuple[str, ...]], Any] = {}
_SYNC_LOCK = threading.Lock()


def _sync_client() -> Any:
    """This process's client, rebuilt when the proxy variables change (httpx reads them once).

    A forked child gets its own: it must not share the parent's sockets.
    """
    key = (os.getpid(), _proxy_env())
    client = _SYNC.get(key)
    if client is None:
        with _SYNC_LOCK:
            client = _SYNC.get(key)
            if client is None:
                import httpx

                _SYNC.clear()  # the old one's sockets stay with whoever opened them
                client = httpx.Client(trust_env=True)  # proxies as on litellm's path
                _SYNC[key] = client
    return client


def post(where: Endpoint, body: bytes) -> dict[str, Any]:
    """POST one request and wait for the decoded reply (thread-safe).

    Raises:
        ProviderFailure: As :func:`apost`.
    """
    import httpx

    from core.llm.reply_limits import read_capped

    try:
        with _sync_client().stream(
            "POST", where.url, content=body, headers=where.headers, timeout=where.timeout_s
        ) as resp:
            content = read_capped(resp)  # a body over the cap is never read whole
    except httpx.TimeoutException:
        raise ProviderTimeout(where.timeout_s) from None
    except httpx.HTTPError as exc:
        raise ProviderConnectionError(exc) from None
    if resp.status_code >= 400:
        raise _http_failure(resp.status_code, content, resp.headers.get("retry-after"))
    return _decode(content)


# -- replies and prices ------------------------------------------------------------------------
_PRICES: dict[str, tuple[float, float]] = {}
_UNKNOWN: set[str] = set()
_PRICES_LOCK = threading.Lock()


def price(model: str) -> tuple[float, float]:
    """USD per prompt and per completion token, from litellm's local cost map (0 if unknown)."""
    known = _PRICES.get(model)
    if known is not None:
        return known
    with _PRICES_LOCK:
        try:
            info = load_litellm().get_model_info(model)
            found = (
                float(info.get("input_cost_per_token") or 0.0),
                float(info.get("output_cost_per_token") or 0.0),
            )
        except Exception:  # noqa: BLE001 - unmapped models (a local server's) are unpriced
            found = (0.0, 0.0)
            _UNKNOWN.add(model)
        _PRICES[model] = found
    return found


def priced(model: str) -> bool:
    """Whether the local cost map has a price for ``model`` (a zero price counts as none)."""
    return price(model) != (0.0, 0.0) and model not in _UNKNOWN


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def check_text(value: Any, what: str) -> str:
    """``value`` as reply text, or :class:`ProviderBadReply` when it is not text.

    A list of content parts (``[{"type": "text", "text": …}]``) is joined; lone surrogates
    (text that is not valid Unicode, which no file or database can store) are a decode fault.
    """
    if value is None:
        return ""
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
            else:
                raise ProviderBadReply(f"{what} has a part that is not text")
        value = "".join(parts)
    if not isinstance(value, str):
        raise ProviderBadReply(f"{what} is not text ({type(value).__name__})")
    if _SURROGATE.search(value):
        raise ProviderBadReply(f"{what} is not valid Unicode (lone surrogate)")
    return value


def check_completion(text: str, calls: list[ToolCall]) -> None:
    """An answer with neither text nor tool calls is a provider fault (retryable)."""
    if not text.strip() and not calls:
        raise ProviderBadReply("empty completion (no text and no tool calls)")


def parse_reply(spec: ModelSpec, data: dict[str, Any], latency_ms: float) -> LLMResponse:
    """Turn a chat-completions reply into an :class:`LLMResponse` (cost from the cost map).

    Raises:
        ProviderBadReply: The reply is an error body, has no usable choice, no text and no
            tool calls, non-text content or broken tool calls.
    """
    err = data.get("error")
    if err is not None and not data.get("choices"):
        message = err.get("message") if isinstance(err, dict) else err
        code = err.get("code") if isinstance(err, dict) else None
        raise ProviderBadReply(
            f"error body: {str(message)[:300]}", status=code if isinstance(code, int) else None
        )
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ProviderBadReply("no choices")
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        raise ProviderBadReply("the first choice has no message")
    message = first["message"]
    text = check_text(message.get("content"), "content")
    raw_calls = message.get("tool_calls")
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise ProviderBadReply("tool_calls is not a list")
    calls: list[ToolCall] = []
    for index, call in enumerate(raw_calls or []):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise ProviderBadReply(f"tool call {index} has no function name")
        args = function.get("arguments") if isinstance(function, dict) else None
        if args is not None and not isinstance(args, str):
            if not isinstance(args, dict):
                raise ProviderBadReply(f"tool call {index} has arguments that are not JSON text")
            args = json.dumps(args)  # some servers send an object, not the JSON string
        calls.append(
            ToolCall(
                id=str(call.get("id") or f"call_{index}"),
                name=check_text(name, "tool name"),
                arguments=check_text(args or "", "tool arguments"),
            )
        )
    check_completion(text, calls)
    usage = _obj(data.get("usage"))
    prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    per_in, per_out = price(spec.model)
    cost = prompt * per_in + completion * per_out
    finish = first.get("finish_reason")
    return LLMResponse(
        text=text,
        tool_calls=calls,
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion),
        cost_usd=cost if math.isfinite(cost) and cost > 0 else 0.0,
        cached=False,
        priced=priced(spec.model),
        model=spec.model,
        latency_ms=latency_ms,
        finish_reason=finish if isinstance(finish, str) else None,
    )
