"""Sessions: import production logs, judge them twice, compare misaligned with clean (Figure 7)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from core.paths import home_dir
from core.studio.data_import import import_sessions_upload
from core.studio.providers import configured_providers
from core.studio.study_display import (
    UNDEFINED,
    comparison_rows,
    distribution_frame,
    fmt_stat,
    matched_sessions_frame,
    verdict_by_session,
)
from core.studio.study_service import (
    import_sessions,
    list_studies,
    run_sessions_report,
    session_card,
    session_rows,
    write_sessions_jsonl,
)
from core.studio.uploads import MAX_UPLOAD_BYTES, allowed_roots, resolve_import_path
from pages.common.store import get_store
from pages.common.study_figures import distribution_figure, sessions_box_figure
from pages.common.study_items import transcript_lines
from pages.common.ui import guarded

store = get_store()
st.title("Sessions")
st.caption(
    "Check the benchmark's findings against your own agent logs (JSONL, see docs/SESSIONS.md): "
    "two judges read every session; a session is misaligned only when both agree."
)


def _show_import(result: object) -> None:
    from core.studio.study_service import ImportResult

    assert isinstance(result, ImportResult)
    if result.errors:
        if result.imported:
            st.warning(
                f"Imported {result.imported} session(s); {len(result.errors)} line(s) skipped."
            )
        else:
            st.error(
                f"{len(result.errors)} malformed line(s): nothing imported (all or nothing). "
                "Fix them or tick 'import the valid lines'."
            )
        st.dataframe(pd.DataFrame([e.model_dump() for e in result.errors]), hide_index=True)
    else:
        st.success(f"Imported {result.imported} session(s) from {Path(result.file).name}.")


tab_import, tab_report, tab_list = st.tabs(["Import", "Two-judge report", "Sessions"])

with tab_import:
    partial = st.checkbox(
        "Import the valid lines even if others are malformed", False, key="ses-partial"
    )
    source = st.radio("Source", ["Server path", "Upload"], horizontal=True, key="ses-source")
    src: Path | None = None
    result = None
    if source == "Server path":
        st.caption("Allowed folders: " + ", ".join(f"`{r}`" for r in allowed_roots()))
        raw = st.text_input("Sessions JSONL file on the server", key="ses-path")
        if st.button("Import", type="primary", key="ses-import-path") and raw:
            src = guarded(resolve_import_path, raw)
    else:
        upload = st.file_uploader(
            f"A sessions JSONL file (≤ {MAX_UPLOAD_BYTES // 2**20} MB)",
            type=["jsonl", "json"],
            key="ses-upload",
        )
        if upload is not None and st.button("Import upload", type="primary", key="ses-import-up"):
            with st.spinner(f"Importing {upload.name}…"):  # the staged copy is removed after
                result = guarded(
                    import_sessions_upload, store, upload.name, upload.getvalue(), partial=partial
                )
    if src is not None:
        with st.spinner(f"Importing {src.name}…"):
            result = guarded(import_sessions, store, src, partial=partial)
    if result is not None:
        _show_import(result)

    st.divider()
    st.markdown("**Synthetic demo file** (sessions made up by this project, not a real log)")
    c1, c2, c3 = st.columns([1, 1, 2])
    n_demo = c1.number_input("Sessions", min_value=4, max_value=2000, value=60, key="ses-demo-n")
    seed_demo = c2.number_input("Seed", value=0, step=1, key="ses-demo-seed")
    if c3.button("Generate and import a synthetic demo file", key="ses-demo-go"):
        path = home_dir() / "uploads" / f"synthetic_sessions_n{int(n_demo)}_s{int(seed_demo)}.jsonl"
        write_sessions_jsonl(path, int(n_demo), int(seed_demo))
        result = guarded(import_sessions, store, path)
        if result is not None:
            _show_import(result)
            st.caption(f"Written to `{path}`")

rows = session_rows(store)
report = None

with tab_report:
    if not rows:
        st.info("No sessions imported yet: import a file or generate the synthetic demo.")
    else:
        providers = configured_providers()
        session_studies = [s["name"] for s in list_studies(store)]
        kinds = ["Heuristic judges (offline)", "Two LLM judges", "Human study"]
        mode = st.radio("Judges", kinds, horizontal=True, key="ses-judges")
        spec: dict[str, str | None] = {"judges": "heuristic", "study": None}
        if mode == kinds[1]:
            st.caption(
                "Configured providers: "
                + (
                    ", ".join(providers)
                    or "none (a local server works: MODEL@http://127.0.0.1:PORT)"
                )
            )
            spec["judges"] = st.text_input(
                "Two model specs, MODEL_A,MODEL_B", key="ses-llm-specs"
            ).strip()
        elif mode == kinds[2]:
            spec["study"] = st.selectbox(
                "Study judging these sessions (overlap 2)", session_studies, key="ses-study"
            )
        c1, c2 = st.columns(2)
        match_on = c1.text_input("Match clean sessions on metadata key (optional)", key="ses-match")
        refresh = c2.checkbox("Judge again (ignore stored judgments)", False, key="ses-refresh")
        if st.button("Run the two-judge report", type="primary", key="ses-run"):
            if spec["judges"] or spec["study"]:
                st.session_state["ses-report"] = {
                    **spec,
                    "match_on": match_on.strip() or None,
                    "refresh": refresh,
                }
            elif mode == kinds[2]:
                st.warning("Choose a study first (create one over the sessions on the Data page).")
            else:
                st.warning("Give two model specs first.")
        params = st.session_state.get("ses-report")
        if params is not None:
            with st.spinner("Judging sessions…"):
                report = guarded(
                    run_sessions_report,
                    store,
                    params["judges"] or "heuristic",
                    study=params["study"],
                    match_on=params["match_on"],
                    refresh=params["refresh"],
                )
            # a refresh is a one-off; later reruns reuse the stored judgments
            st.session_state["ses-report"] = {**params, "refresh": False}
        if report is not None:
            if report.heuristic:
                st.warning(
                    "Heuristic judges: an offline approximation (cue phrases and conversation "
                    "structure), not LLM or human judgments."
                )
            st.caption("Judges: " + ", ".join(report.judges))
            cols = st.columns(5)
            for col, key in zip(
                cols, ("misaligned", "clean", "contested", "unjudged"), strict=False
            ):
                col.metric(key.capitalize(), report.counts.get(key, 0))
            cols[4].metric("Judges' κ (misaligned flag)", fmt_stat(report.judge_kappa))
            st.subheader("Misaligned vs matched clean sessions")
            frame = matched_sessions_frame(report, rows)
            if frame.empty:
                st.caption(
                    f"No matched pairs ({report.counts.get('misaligned', 0)} misaligned, "
                    f"{report.counts.get('clean', 0)} clean): nothing to compare ({UNDEFINED})."
                )
            else:
                st.plotly_chart(sessions_box_figure(frame), key="ses-fig7")
            st.dataframe(pd.DataFrame(comparison_rows(report)), hide_index=True)
            st.subheader("Fault types and shift types (misaligned sessions)")
            dist = distribution_frame(report)
            c1, c2 = st.columns(2)
            c1.plotly_chart(distribution_figure(dist, "fault type"), key="ses-faults")
            c2.plotly_chart(distribution_figure(dist, "shift type"), key="ses-shifts")
            with st.expander("Fault families"):
                st.plotly_chart(distribution_figure(dist, "fault family"), key="ses-families")

with tab_list:
    if not rows:
        st.caption("No sessions imported yet.")
    else:
        verdicts = verdict_by_session(report) if report is not None else {}
        ids = [str(r["session_id"]) for r in rows]
        event = st.dataframe(
            pd.DataFrame(
                [
                    {
                        "session": r["session_id"],
                        "source": r["source"],
                        "messages": r["n_messages"],
                        "user turns": r["n_user_turns"],
                        "tool calls": r["n_tool_calls"],
                        "score": fmt_stat(r["platform_score"]),
                        "verdict": verdicts.get(r["session_id"], UNDEFINED),
                    }
                    for r in rows
                ]
            ),
            hide_index=True,
            key="ses-table",
            on_select="rerun",
            selection_mode="single-row",
        )
        picked_rows = list(event.selection.rows) if event is not None else []
        if picked_rows and picked_rows[0] < len(ids):
            st.session_state["ses-open"] = ids[picked_rows[0]]
        if st.session_state.get("ses-open") not in ids:
            st.session_state["ses-open"] = ids[0]
        sid = st.selectbox("Open a session (or click a row)", ids, key="ses-open")
        card = guarded(session_card, store, sid, blind=False)
        if card is not None:
            with st.container(border=True, key="ses-drill"):
                m1, m2, m3 = st.columns(3)
                m1.metric("Tool calls", card.n_tool_calls)
                m2.metric("Platform score", fmt_stat(card.platform_score))
                m3.metric("Two-judge verdict", verdicts.get(sid, UNDEFINED))
                if card.metadata:
                    st.caption(
                        "Metadata: " + " · ".join(f"{k}: {v}" for k, v in card.metadata.items())
                    )
                transcript_lines(card.transcript)
