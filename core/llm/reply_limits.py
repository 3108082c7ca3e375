"""What a provider reply may be: a capped body and believable usage (else a provider fault).

* :data:`MAX_REPLY_BYTES` — the transport stops reading a reply body at 8 MiB (a 400 MB body used
  to be read whole); :func:`read_capped` (httpx) and :func:`aread_capped` (aiohttp) raise
  :class:`~core.llm.openai_http.ProviderBadReply` the moment the cap is passed.
* :data:`MAX_REPLY_CHARS` — a reply text longer than this (any transport, litellm's included,
  which reads its own bodies) is a provider fault too.
* :data:`MAX_USAGE_TOKENS` — a reply claiming more prompt or completion tokens than any model
  takes (``10**30``) is a provider fault, never the agent's failure and never a cost.

All three are retryable provider faults: the episode ends as ``ERROR`` (resumable).
"""

from __future__ import annotations

from typing import Any

from core.llm.openai_http import ProviderBadReply

MAX_REPLY_BYTES = 8 * 1024**2
"""Largest reply body read from a provider (8 MiB; a long completion is well under 1 MiB)."""

MAX_REPLY_CHARS = 4_000_000
"""Longest reply text accepted from any transport."""

MAX_USAGE_TOKENS = 10_000_000
"""Most prompt or completion tokens one call may report (no model's context comes close)."""


def _too_big(got: int) -> ProviderBadReply:
    return ProviderBadReply(
        f"reply body larger than {MAX_REPLY_BYTES:,} bytes (stopped reading at {got:,})"
    )


def read_capped(response: Any) -> bytes:
    """The body of an ``httpx`` streamed response, at most :data:`MAX_REPLY_BYTES`.

    Raises:
        ProviderBadReply: The body is larger (the rest is never read).
    """
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_REPLY_BYTES:
        raise _too_big(0)
    parts: list[bytes] = []
    got = 0
    for chunk in response.iter_bytes():
        got += len(chunk)
        if got > MAX_REPLY_BYTES:
            raise _too_big(got)
        parts.append(chunk)
    return b"".join(parts)


async def aread_capped(response: Any) -> bytes:
    """The body of an ``aiohttp`` response, at most :data:`MAX_REPLY_BYTES`.

    Raises:
        ProviderBadReply: The body is larger (the rest is never read).
    """
    declared = response.content_length
    if declared is not None and declared > MAX_REPLY_BYTES:
        raise _too_big(0)
    parts: list[bytes] = []
    got = 0
    async for chunk in response.content.iter_chunked(1 << 16):
        got += len(chunk)
        if got > MAX_REPLY_BYTES:
            raise _too_big(got)
        parts.append(chunk)
    return b"".join(parts)


def check_reply(text: str, prompt_tokens: int, completion_tokens: int) -> None:
    """Refuse a reply whose text is oversized or whose usage is not believable.

    Raises:
        ProviderBadReply: Naming what is wrong (a retryable provider fault).
    """
    if len(text) > MAX_REPLY_CHARS:
        raise ProviderBadReply(f"reply text longer than {MAX_REPLY_CHARS:,} characters")
    for what, n in (("prompt", prompt_tokens), ("completion", completion_tokens)):
        if n < 0 or n > MAX_USAGE_TOKENS:
            shown = f"{n:,}" if n < 10**15 else f"about 10^{int(n.bit_length() * 0.30103)}"
            raise ProviderBadReply(
                f"usage claims {shown} {what} tokens (more than {MAX_USAGE_TOKENS:,}: "
                "not a believable reply)"
            )
