"""Internal codes in plain words, for the people who play.

Hosts judge a proposal with reason codes (``golden_actions_missing:modify_user_address``,
``reward=0.650``, ``over_price_limit``) and episodes end with termination reasons
(``forced_final_rejected``). Researchers read those codes on the Inspect page; a person playing
the user or the agent must never see them. Every function here returns a sentence; an unknown
code becomes words (underscores to spaces), never the code itself.
"""

from __future__ import annotations

from core.studio.toolcalls import tool_title

_FIXED: dict[str, str] = {
    "golden_actions_complete": "Everything that was asked for has been done.",
    "state_hash_match": "The account now looks exactly as it should.",
    "state_hash_mismatch": "The account does not look the way it should yet.",
    "nothing_selected_to_buy": "Nothing was selected to buy.",
    "nothing_bought": "Nothing was bought.",
    "unknown_asin": "That product is not in the shop.",
    "over_price_limit": "It costs more than the price limit.",
    "wrong_product_type": "It is not the kind of product that was wanted.",
    "match": "It matches what was wanted.",
}

_TERMINATION: dict[str, str] = {
    "accepted": "the proposal was accepted",
    "final_shot_accepted": "the final answer was accepted",
    "final_shot_rejected": "the final answer was not what was wanted",
    "forced_final_accepted": "after patience ran out, the last answer was accepted",
    "forced_final_rejected": "patience ran out and the last answer was not what was wanted",
    "env_error": "the shop or booking system failed",
    "agent_error": "the agent failed",
    "voice_error": "the simulated customer failed",
    "internal_error": "the studio failed",
}

_OUTCOME: dict[str, str] = {
    "SUCCESS": "Success",
    "EXHAUSTED": "Out of patience",
    "TURNS_EXCEEDED": "Out of turns",
    "ERROR": "Stopped by an error",
}


def _words(code: str) -> str:
    return code.replace("_", " ").replace("-", " ").strip()


def _items(raw: str) -> str:
    return ", ".join(tool_title(p.strip()).lower() for p in raw.split(",") if p.strip())


def plain_reason(reason: str, *, accepted: bool | None = None) -> str:
    """A host's verdict reason as a sentence.

    >>> plain_reason("golden_actions_missing:modify_user_address,cancel_pending_order")
    'Not done yet: modify user address, cancel pending order.'
    >>> plain_reason("reward=0.650", accepted=False)
    'Not quite: it matches about 65% of what was wanted.'
    >>> plain_reason("unmet:color,size")
    'Not what was wanted on: color, size.'
    """
    code = (reason or "").strip()
    if code in _FIXED:
        return _FIXED[code]
    head, _, rest = code.partition(":")
    if head == "golden_actions_missing" and rest:
        return f"Not done yet: {_items(rest)}."
    if head == "unmet" and rest:
        return f"Not what was wanted on: {', '.join(_words(p) for p in rest.split(',') if p)}."
    if code.startswith("reward="):
        try:
            share = float(code.split("=", 1)[1])
        except ValueError:
            share = None
        if share is not None:
            lead = "Accepted" if accepted else "Not quite"
            return f"{lead}: it matches about {share:.0%} of what was wanted."
    if not code:
        return "Accepted." if accepted else "Not accepted."
    text = _words(head) + (f": {_words(rest)}" if rest else "")
    return text[:1].upper() + text[1:] + "."


def plain_termination(reason: str | None) -> str:
    """Why an episode ended, as words (``None`` → ``ended``)."""
    if not reason:
        return "ended"
    return _TERMINATION.get(reason, _words(reason))


def plain_outcome(outcome: str | None) -> str:
    """An outcome as words (``EXHAUSTED`` → ``Out of patience``)."""
    if not outcome:
        return "Ended"
    return _OUTCOME.get(outcome, _words(outcome).capitalize())


def plain_ending(outcome: str | None, reason: str | None = None) -> str:
    """An outcome and its termination reason as one phrase, for every page that shows them.

    >>> plain_ending("EXHAUSTED", "final_shot_rejected")
    'Out of patience — the final answer was not what was wanted'
    >>> plain_ending("SUCCESS"), plain_ending(None)
    ('Success', 'Ended')
    """
    head = plain_outcome(outcome)
    return f"{head} — {plain_termination(reason)}" if reason else head


def plain_status(outcome: str | None, status: str | None = None) -> str:
    """An episode's outcome in words, or its status while it has none (``running``)."""
    if outcome:
        return plain_outcome(outcome)
    return (status or "running").replace("_", " ")
