"""Agreement & QA: κ and α per label, confusion matrices, disagreements, annotator throughput."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.studio.study_display import (
    STAT_COLUMNS,
    agreement_summary_rows,
    disagreement_rows,
    fmt_percent,
    pair_options,
    pair_rows,
    throughput_rows,
)
from core.studio.study_service import (
    agreement_report,
    get_study,
    list_studies,
    play_study_realism,
    study_confusion,
    study_progress,
    study_realism_report,
)
from pages.common.nav import link
from pages.common.store import get_store
from pages.common.study_figures import confusion_figure
from pages.common.ui import guarded

store = get_store()
st.title("Agreement & QA")

studies = list_studies(store)
if not studies:
    st.info("No studies yet. Create one on the Data page (Studies tab).")
    st.stop()
names = {s["study_id"]: s for s in studies}
study_id = st.selectbox(
    "Study",
    list(names),
    format_func=lambda s: f"{names[s]['name']} ({names[s]['status']}, {names[s]['labels']} labels)",
    key="agr-study",
)
include_self = st.toggle(
    "Include labels on episodes the annotator played", False, key="agr-self-played"
)
report = guarded(agreement_report, store, study_id, include_self_played=include_self)
if report is None:
    st.stop()

progress = study_progress(store, study_id)
if progress:
    with st.expander("Progress per annotator", expanded=False):
        st.dataframe(
            pd.DataFrame(progress).assign(progress=lambda d: d["progress"].map(fmt_percent)),
            hide_index=True,
        )

st.subheader("Agreement per label")
st.caption(
    "Only the latest label per annotator and unit counts. Undefined statistics (fewer than two "
    "shared units, or a single category everywhere) are shown as —, never 0."
)
if report.self_played and not include_self:
    st.caption(f"{report.self_played} label(s) on self-played episodes are kept apart.")
summary = agreement_summary_rows(report.summary)
if not summary:
    st.info("This study asks for no label with agreement statistics (only comments or intents).")
for row in summary:
    label = row[STAT_COLUMNS["label_kind"]]
    st.markdown(f"**{label}**")
    cols = st.columns(4)
    for col, key in zip(
        cols,
        ("percent_agreement", "mean_cohen_kappa", "fleiss_kappa", "krippendorff_alpha"),
        strict=True,
    ):
        col.metric(f"{STAT_COLUMNS[key]} · {label}", row[STAT_COLUMNS[key]])
if summary:
    st.dataframe(pd.DataFrame(summary), hide_index=True)

pairs = pair_rows(report.pairs)
if pairs:
    st.subheader("Cohen's κ per annotator pair")
    st.dataframe(pd.DataFrame(pairs), hide_index=True)

kinds = [str(k) for k in report.summary.get("label_kind", pd.Series(dtype=str)).tolist()]
if kinds:
    st.subheader("Confusion matrix")
    c1, c2 = st.columns(2)
    kind = c1.selectbox("Label", kinds, key="agr-cm-kind")
    options = pair_options(report.pairs, kind)
    if not options:
        st.caption("No two annotators labelled the same unit of this kind yet.")
    else:
        pair = c2.selectbox(
            "Annotators", options, format_func=lambda p: f"{p[0]} vs {p[1]}", key="agr-cm-pair"
        )
        matrix = study_confusion(store, study_id, kind, pair[0], pair[1])
        st.plotly_chart(confusion_figure(matrix, pair[0], pair[1]), key="agr-cm-chart")

st.subheader("Disagreements")
rows = disagreement_rows(report.disagreements)
if not rows:
    st.caption("No disagreements.")
else:
    st.caption(f"{len(rows)} unit(s) where annotators disagree. Open an episode in the inspector.")
    table = pd.DataFrame(
        [
            {**r, "inspect": f"/inspect?episode={r['episodes'][0]}" if r["episodes"] else None}
            for r in rows
        ]
    ).drop(columns=["episodes"])
    st.dataframe(
        table,
        hide_index=True,
        column_config={"inspect": st.column_config.LinkColumn("inspect", display_text="open")},
    )
    for r in rows[:30]:
        for ep in r["episodes"]:
            link(
                "inspect",
                f"{r['label']} · {ep} · {r['labels']}",
                {"episode": ep},
                icon=":material/search:",
            )

spec = get_study(store, study_id).spec
if "play_user" in spec.roles:
    with st.expander("Role realism: people vs the simulator, same samples and personas"):
        st.caption(
            "Each finished play is replayed once by the simulated user (template voice) with "
            "the same sample, persona, seed and agent; the table compares how both behave."
        )
        if st.button("Compute the realism report", key="agr-play-realism"):
            frames = guarded(play_study_realism, store, study_id)
            if frames is not None:
                for name in ("behaviour", "side_by_side"):
                    frame = frames[name]
                    if not frame.empty:
                        st.markdown(f"**{name.replace('_', ' ').capitalize()}**")
                        st.dataframe(
                            frame.astype(object).where(frame.notna(), "—"), hide_index=True
                        )
if {"persona_id", "same_persona"} & set(spec.label_kinds):
    with st.expander("Role realism: do annotators recognise the persona?", expanded=False):
        episodes = list(
            dict.fromkeys([*spec.episodes, *(e for p in spec.episode_pairs for e in p)])
        )
        realism = guarded(study_realism_report, store, study_id, episodes)
        if realism is not None:
            st.caption(
                "Identification: annotators' persona labels against the persona actually "
                "played (human or simulated user). Consistency: SAME/DIFFERENT on pairs "
                "(balanced accuracy)."
            )
            for name in ("identification", "consistency", "side_by_side"):
                frame = realism[name]
                if not frame.empty:
                    st.markdown(f"**{name.replace('_', ' ').capitalize()}**")
                    st.dataframe(frame.astype(object).where(frame.notna(), "—"), hide_index=True)

st.subheader("Annotator throughput")
thr = throughput_rows(report.throughput)
if thr:
    st.dataframe(pd.DataFrame(thr), hide_index=True)
else:
    st.caption("No labels yet.")
