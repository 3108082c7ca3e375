"""GRIP evaluation (version ``grip-3``): per-episode extraction, eleven metrics, reports.

Extraction reads typed rows (:mod:`core.grip.rows`, fields checked against the event models),
tracks the moving target (:mod:`core.grip.target`) and folds them with one reducer per
dimension (:mod:`core.grip.dimensions`); ``docs/GRIP_AND_SHIFTS.md`` says where each metric is
defined.

Public API (what the CLI and the studio's GRIP dashboard call):

* :func:`grip_frame` — per-episode records of runs (computed once, cached in the store).
* :func:`aggregate` — cells (mean ± sd across seeds, denominators) in long format.
* :func:`build_report` / :class:`GripReport` — the ``driftbench grip`` report.
* :func:`paired_deltas` — paired method deltas with seeded bootstrap 95 % intervals.
* :func:`figure_frames`, :func:`persona_heatmap`, :func:`episodes_for_cell` — tidy frames.
* :func:`score_episode` — one episode from typed header + events (reference path).
"""

from core.grip.cache import grip_frame, read_frame, records_frame
from core.grip.deltas import bootstrap_ci, paired_deltas
from core.grip.extract import EpisodeMeta, extract, score_episode
from core.grip.figures import episodes_for_cell, figure_frames, persona_heatmap
from core.grip.metrics import CELL_KEYS, METRIC_NAMES, METRICS, aggregate, parse_by
from core.grip.record import GRIP_VERSION, Bucket, EpisodeRecord
from core.grip.report import GripReport, build_report, report_csv, report_table

__all__ = [
    "CELL_KEYS",
    "GRIP_VERSION",
    "METRICS",
    "METRIC_NAMES",
    "Bucket",
    "EpisodeMeta",
    "EpisodeRecord",
    "GripReport",
    "aggregate",
    "bootstrap_ci",
    "build_report",
    "episodes_for_cell",
    "figure_frames",
    "paired_deltas",
    "persona_heatmap",
    "report_csv",
    "report_table",
    "extract",
    "grip_frame",
    "parse_by",
    "read_frame",
    "records_frame",
    "score_episode",
]
