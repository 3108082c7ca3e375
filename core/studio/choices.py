"""The closed vocabularies the pages offer in pickers: personas, methods, GRIP metrics."""

from __future__ import annotations

from core.agents.methods import LADDER
from core.grip.metrics import GROUPABLE, METRIC_NAMES
from core.protocol.personas import load_personas

__all__ = ["GROUPABLE", "LADDER", "METRIC_NAMES", "load_personas"]
