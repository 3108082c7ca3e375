"""Read models of the studio's research pages (GRIP dashboard, construction explorer).

Pages stay layout-only: each calls one or two functions from here.
The GRIP dashboard is served by ``grip_dashboard`` (runs, frames, filters), ``grip_tables``
(grid, deltas, figures, downloads), ``grip_heatmap`` (persona ranking and drill-down),
``grip_charts`` (the plotly figures, plain functions the CLI can reuse) and ``grip_format``
(how a value reads), all re-exported here; ``construction_explorer`` serves the
construction explorer. The Runs page
uses :mod:`core.studio.jobs`.
"""

from core.grip.cache import resolve_runs
from core.studio.dashboards.grip_charts import (
    FIGURES,
    PERSONA_COLOURS,
    cell_label,
    empty_figure,
    figure_height,
    grip_figure,
    heatmap_figure,
)
from core.studio.dashboards.grip_dashboard import (
    FILTER_KEYS,
    FRAME_MEMO,
    JUDGE_CHOICES,
    OFFLINE_NOTE,
    REALISM_MEMO,
    RunOption,
    default_judges,
    default_runs,
    facets,
    filter_frame,
    fingerprint,
    frame_memo,
    is_symbolic,
    load_frame,
    realism_memo,
    run_options,
    with_realism,
)
from core.studio.dashboards.grip_format import UNDEFINED, fmt, scale_of
from core.studio.dashboards.grip_heatmap import (
    EPISODE_COLUMNS,
    HEATMAP_METRICS,
    INSPECT_PATH,
    Cell,
    cell_episodes,
    cell_from_point,
    cell_size,
    heatmap_cells,
    inspect_link,
    selected_cell,
)
from core.studio.dashboards.grip_tables import (
    MIN_N_FOR_BEST,
    NEEDS_JUDGES,
    Table2,
    delta_table,
    figure_frame,
    grid_styler,
    report_downloads,
    table2,
)
from core.studio.markdown import md_escape

__all__ = [
    "FIGURES",
    "PERSONA_COLOURS",
    "cell_label",
    "empty_figure",
    "figure_height",
    "grip_figure",
    "heatmap_figure",
    "resolve_runs",
    "EPISODE_COLUMNS",
    "FILTER_KEYS",
    "JUDGE_CHOICES",
    "NEEDS_JUDGES",
    "default_judges",
    "grid_styler",
    "FRAME_MEMO",
    "REALISM_MEMO",
    "HEATMAP_METRICS",
    "INSPECT_PATH",
    "MIN_N_FOR_BEST",
    "default_runs",
    "OFFLINE_NOTE",
    "UNDEFINED",
    "Cell",
    "RunOption",
    "Table2",
    "cell_episodes",
    "cell_from_point",
    "cell_size",
    "delta_table",
    "facets",
    "figure_frame",
    "filter_frame",
    "fingerprint",
    "fmt",
    "frame_memo",
    "heatmap_cells",
    "inspect_link",
    "is_symbolic",
    "load_frame",
    "realism_memo",
    "md_escape",
    "report_downloads",
    "run_options",
    "scale_of",
    "selected_cell",
    "table2",
    "with_realism",
]
