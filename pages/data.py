"""Data: imports (server path or upload), personas, store health."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from core.studio.choices import load_personas
from core.studio.data_import import import_upload, import_world
from core.studio.health import store_health
from core.studio.uploads import MAX_UPLOAD_BYTES, allowed_roots, resolve_import_path
from pages.common.store import get_store
from pages.common.study_panel import study_setup_panel
from pages.common.ui import guarded

store = get_store()
st.title("Data")

IMPORTERS = {
    "τ²-bench Retail domain folder": ("tau2", "retail"),
    "τ²-bench Airline domain folder": ("tau2", "airline"),
    "WebShop items_* files": ("webshop", None),
}


def run_import(kind: str, domain: str | None, src: Path) -> dict[str, object]:
    """Dispatch to the engine importer for ``kind``."""
    return import_world(kind, domain, src, store)


tab_import, tab_personas, tab_health, tab_studies = st.tabs(
    ["Import", "Personas", "Store health", "Studies"]
)

with tab_import:
    what = st.selectbox("What to import", list(IMPORTERS), key="data-import-kind")
    kind, domain = IMPORTERS[what]
    source = st.radio("Source", ["Server path", "Upload"], horizontal=True, key="data-source")
    src: Path | None = None
    result = None
    if source == "Server path":
        st.caption("Allowed folders: " + ", ".join(f"`{r}`" for r in allowed_roots()))
        raw = st.text_input("Folder on the server", key="data-path")
        if st.button("Import", type="primary", key="data-import-path") and raw:
            src = guarded(resolve_import_path, raw)
    else:
        upload = st.file_uploader(
            f"A ZIP of the folder (≤ {MAX_UPLOAD_BYTES // 2**20} MB)",
            type=["zip"],
            key="data-upload",
        )
        if upload is not None and st.button("Import upload", type="primary", key="data-import-up"):
            with st.spinner(f"Importing {upload.name}…"):  # the staged copy is removed after
                result = guarded(import_upload, kind, domain, upload.name, upload.getvalue(), store)
    if src is not None:
        with st.spinner(f"Importing {src.name}…"):
            result = guarded(run_import, kind, domain, src)
    if result is not None:
        st.success("Imported.")
        st.json(result)

with tab_personas:
    personas = guarded(load_personas)
    if personas:
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "persona": p.id,
                        "slots/answer": p.slots_per_answer,
                        "volunteer": p.volunteer,
                        "decline": p.decline,
                        "patience ×": p.patience_multiplier,
                        "hint on rejection": p.hint_on_rejection,
                        "shift placements": ", ".join(f"{x:g}" for x in p.shift_placements),
                        "suggestibility": p.suggestibility,
                    }
                    for p in personas.values()
                ]
            ),
            hide_index=True,
        )
        for p in personas.values():
            with st.expander(f"{p.name} ({p.id})"):
                st.text(p.bio)

with tab_health:
    health = store_health(store)
    cols = st.columns(4)
    cols[0].metric("Schema", f"v{health['schema_version']}")
    cols[1].metric("Integrity", health["integrity"])
    cols[2].metric("Size", f"{health['size_mb']} MB")
    cols[3].metric("WAL", f"{health['wal_mb']} MB")
    if health["problems"]:
        st.error("Integrity check failed:\n\n" + "\n".join(f"- {p}" for p in health["problems"]))
    st.dataframe(pd.DataFrame([health["counts"]]), hide_index=True)
    if health["worlds"]:
        st.subheader("Worlds")
        st.dataframe(pd.DataFrame(health["worlds"]).drop(columns=["summary"]), hide_index=True)
    st.caption(f"Store: `{health['path']}` · journal mode {health['journal_mode']}")

with tab_studies:  # human studies: set-up panel owned by pages/common/study_panel.py
    study_setup_panel(store)
