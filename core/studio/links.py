"""Deep-link query parameters, validated: a bad value is "not found", never a traceback.

Every page reads its URL parameters (``?episode=…``, ``?turn=…``, ``?assignment=…``,
``?seed=…``, ``?sample=…``, ``?persona=…``) through these functions. A value that is not what
the parameter holds — ``?assignment=99999999999999999999999`` (beyond SQLite's integers),
``?turn=³`` (a digit to ``str.isdigit`` but not to ``int``), ``?turn=-1``, an id with control
characters or 10 000 characters — comes back as ``None``, which every page shows as "not found".
"""

from __future__ import annotations

MAX_LINK_INT = 2**63 - 1
"""The largest whole number a link may carry (SQLite's INTEGER)."""

MAX_ID_CHARS = 200
"""The longest id a link may carry (episode, sample and run ids are far shorter)."""


def link_int(value: object, *, lo: int = 0, hi: int = MAX_LINK_INT) -> int | None:
    """A whole number in ``[lo, hi]`` written in ASCII digits, else None.

    >>> link_int("12"), link_int("³"), link_int("99999999999999999999999"), link_int("-1")
    (12, None, None, None)
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 19 or not (text.isascii() and text.isdecimal()):
        return None
    n = int(text)
    return n if lo <= n <= hi else None


def link_id(value: object) -> str | None:
    r"""An id: 1 … :data:`MAX_ID_CHARS` printable characters without spaces, else None.

    >>> link_id("ep-1a2b"), link_id("a\x00b"), link_id(""), link_id("x" * 500)
    ('ep-1a2b', None, None, None)
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > MAX_ID_CHARS:
        return None
    if not text.isprintable() or any(c.isspace() for c in text):
        return None
    return text
