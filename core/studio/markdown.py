"""Markdown escaping for text the studio did not write (host data, user replies, stored names).

Streamlit renders ``st.markdown``, captions, labels and table cells as Markdown (with ``$…$``
as LaTeX and ``:name:`` as emoji or colour directives), so text from a host world, a person or
the store goes through :func:`md_escape` before it reaches one: every punctuation character
that Markdown, LaTeX or Streamlit's directives could read is backslash-escaped and shows as
itself. This is the only escaper; pages import it from :mod:`core.studio.markdown`.
"""

from __future__ import annotations

import re
from typing import Any

MD_SPECIAL = "\\`*_{}[]()#+-.!|<>~:$="
"""Characters escaped by :func:`md_escape`."""

_PATTERN = re.compile("([" + re.escape(MD_SPECIAL) + "])")


def md_escape(text: Any) -> str:
    r"""Escape Markdown, LaTeX ``$`` and Streamlit ``:directive:`` punctuation in ``text``.

    >>> md_escape("a*b_[x](y) costs $5: ok")
    'a\\*b\\_\\[x\\]\\(y\\) costs \\$5\\: ok'
    """
    return _PATTERN.sub(r"\\\1", str(text))
