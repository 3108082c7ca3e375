"""Drift-Bench++ Studio engine.

The engine builds verified benchmark instances, runs episodes between an agent and a
persona-conditioned simulated user, and scores them with GRIP. It never imports Streamlit.

Importing ``core`` sets litellm's offline switches (unless the environment already sets them),
so that a later ``import litellm`` never reaches for the network at import time.
"""

import os

OFFLINE_SWITCHES = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
}
"""Environment flags that keep litellm (and the Hugging Face hub) from reaching the network.

The one definition: :mod:`core.llm.env` and ``driftbench doctor`` read it from here."""


def set_offline_switches() -> None:
    """Set each offline switch unless the environment already chose a value (``setdefault``)."""
    for key, value in OFFLINE_SWITCHES.items():
        os.environ.setdefault(key, value)


set_offline_switches()

__version__ = "0.1.0"

__all__ = ["OFFLINE_SWITCHES", "__version__", "set_offline_switches"]
