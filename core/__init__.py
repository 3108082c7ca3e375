"""Drift-Bench++ Studio engine.

The engine builds verified benchmark instances, runs episodes between an agent and a
persona-conditioned simulated user, and scores them with GRIP. It never imports Streamlit.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
