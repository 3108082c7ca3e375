"""Small rendering helpers shared by pages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from core.errors import DriftBenchError

T = TypeVar("T")


def guarded(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T | None:
    """Call a core function; show a DriftBenchError as ``st.error`` and return None."""
    try:
        return fn(*args, **kwargs)
    except DriftBenchError as exc:
        st.error(str(exc))
        return None


def plain(text: str) -> None:
    """Render user-provided text inert (no markdown, no HTML)."""
    st.text(text)


def scroll_script(key: str) -> str:
    """The script behind :func:`scroll_to` (no "<" inside: the HTML sanitiser drops such)."""
    safe = "".join(c for c in key if c.isalnum() or c in "-_")
    return (
        "<script>(function(){var n=0;var t=setInterval(function(){"
        f"var el=document.querySelector('.st-key-{safe}');"
        "if(el){document.querySelectorAll('[data-db-outlined]').forEach(function(o){"
        "o.style.outline='';o.removeAttribute('data-db-outlined');});"
        "el.scrollIntoView({block:'start'});el.style.outline='2px solid #2f6f8f';"
        "el.setAttribute('data-db-outlined','1');"
        "clearInterval(t);}if(++n>60){clearInterval(t);}},100);})();</script>"
    )


def scroll_to(key: str) -> None:
    """Scroll the page to the container created with ``key`` and outline it (once per load).

    The script retries for a few seconds while the page renders; identical scripts are not
    re-run on reruns, so the page does not jump back after the person scrolls away.
    """
    st.sidebar.html(scroll_script(key), unsafe_allow_javascript=True)  # never in the main area


_SHORTCUTS_JS = """<script>(function(){
var d=document;if(d.__driftbenchKeys){return;}d.__driftbenchKeys=true;
d.addEventListener('keydown',function(ev){
  if(!d.querySelector('.st-key-ann-keys')){return;}
  var t=ev.target,tag=((t&&t.tagName)||'').toLowerCase();
  var choice=tag==='input'&&(t.type==='radio'||t.type==='checkbox');
  if((tag==='input'&&!choice)||tag==='textarea'||tag==='select'||(t&&t.isContentEditable)){
    return;
  }
  if(ev.ctrlKey||ev.metaKey||ev.altKey){return;}
  var form=d.querySelector('[data-testid="stForm"]');if(!form){return;}
  if(ev.key==='Enter'){
    var b=form.querySelector('[data-testid^="stBaseButton-"][data-testid$="FormSubmit"]');
    if(b){ev.preventDefault();b.click();}return;
  }
  if(!/^[1-9]$/.test(ev.key)){return;}
  var groups=Array.prototype.slice.call(form.querySelectorAll('[role="radiogroup"]'));
  var g=groups.filter(function(x){return x.contains(d.activeElement);})[0]
    ||groups.filter(function(x){return !x.querySelector('input:checked');})[0]||groups[0];
  if(!g){return;}
  var opts=g.querySelectorAll('label');var i=parseInt(ev.key,10)-1;
  if(opts.length>i){ev.preventDefault();opts[i].click();}
},true);})();</script>"""


def keyboard_shortcuts() -> None:
    """Number keys pick an option of the label form's first unanswered choice; Enter saves.

    Active only while the page shows the marker container (``ann-keys``, in the sidebar, so
    the main area never holds a script element); keys typed into
    text fields are left alone. (The script holds no "<": Streamlit's HTML sanitiser would
    silently drop it.)
    """
    st.sidebar.container(key="ann-keys").html(_SHORTCUTS_JS, unsafe_allow_javascript=True)
