"""The SQLite store: the single source of truth for every page and command.

The schema is created up front (never lazily in a race) and versioned in ``meta``; WAL mode and
foreign keys are on for every connection. Events are append-only: triggers reject UPDATE and
DELETE on ``events``. The file opens unchanged in Datasette or ``sqlite-utils``.

Tables: ``meta``, ``worlds``, ``graphs``, ``samples``, ``runs``, ``episodes``, ``events``,
``llm_cache``, ``annotations``, ``judgments`` (v1); ``studies``, ``annotators``,
``study_annotators``, ``assignments``, ``study_plays``, ``sessions``, ``session_judgments`` (v2);
``construction_builds`` (v3: what each build or import recorded, for ``driftbench build report``).
GRIP keeps derived caches (``grip_cache``, ``grip_report_cache``) that it may drop and rebuild.

One module per concept:

* :mod:`core.store.schema` — every table's DDL, the version and the migrations;
* :mod:`core.store.connection` — per-thread connections, transactions, opening and migrating;
* :mod:`core.store.worlds`, :mod:`core.store.catalog`, :mod:`core.store.runs`,
  :mod:`core.store.episodes`, :mod:`core.store.annotations`, :mod:`core.store.builds` — one
  repository per table group;

:class:`Store` combines them; ``from core.store import Store`` is all a caller needs.
"""

from __future__ import annotations

from core.store.annotations import AnnotationsRepo, insert_annotation
from core.store.builds import BuildsRepo
from core.store.catalog import CatalogRepo
from core.store.connection import StoreBase, StoreError, utcnow
from core.store.episodes import EpisodesRepo
from core.store.runs import RunsRepo
from core.store.schema import (
    _MIGRATIONS,
    _SCHEMA_V1,
    LLM_CACHE_DDL,
    STORE_SCHEMA_VERSION,
    STUDY_DDL,
    _statements,
)
from core.store.worlds import WorldRecord, WorldsRepo


class Store(WorldsRepo, CatalogRepo, RunsRepo, EpisodesRepo, AnnotationsRepo, BuildsRepo):
    """Repository over one SQLite file: every table group of :mod:`core.store` in one object.

    See :class:`~core.store.connection.StoreBase` for connections, threads and transactions.
    """


__all__ = [
    "LLM_CACHE_DDL",
    "STORE_SCHEMA_VERSION",
    "STUDY_DDL",
    "_MIGRATIONS",
    "_SCHEMA_V1",
    "Store",
    "StoreBase",
    "StoreError",
    "WorldRecord",
    "_statements",
    "insert_annotation",
    "utcnow",
]
