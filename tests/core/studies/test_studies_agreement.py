"""Agreement statistics against values computed by hand on small tables."""

from __future__ import annotations

import pandas as pd
import pytest

from core.studies import (
    StudySpec,
    agreement_report,
    annotator_queue,
    assign_study,
    cohen_pairs,
    confusion,
    create_study,
    fleiss,
    kripp_alpha,
    label_item,
    record_play,
    study_confusion,
    write_label,
)

# 4 units × 3 raters, two categories. Per unit (x, y) counts: (3,0) (2,1) (0,3) (1,2).
THREE_RATERS = pd.DataFrame(
    {"r1": ["x", "x", "y", "x"], "r2": ["x", "x", "y", "y"], "r3": ["x", "y", "y", "y"]},
    index=["u1", "u2", "u3", "u4"],
)


def test_cohen_kappa_matches_hand_computation() -> None:
    # po = 4/6, pe = 0.5·0.5 + 0.5·0.5 = 0.5  →  κ = (2/3 − 1/2) / (1/2) = 1/3
    table = pd.DataFrame({"a": ["p", "p", "q", "q", "p", "q"], "b": ["p", "q", "q", "q", "p", "p"]})
    pairs = cohen_pairs(table)
    row = pairs.iloc[0]
    assert (row["annotator_a"], row["annotator_b"], row["n_units"]) == ("a", "b", 6)
    assert row["agreement"] == pytest.approx(4 / 6)
    assert row["kappa"] == pytest.approx(1 / 3)


def test_fleiss_kappa_matches_hand_computation() -> None:
    # P_i = 1, 1/3, 1, 1/3 → P̄ = 2/3; p_x = p_y = 1/2 → P̄e = 1/2; κ = (2/3 − 1/2)/(1/2) = 1/3
    kappa, units = fleiss(THREE_RATERS)
    assert units == 4
    assert kappa == pytest.approx(1 / 3)


def test_krippendorff_alpha_matches_hand_computation() -> None:
    # Coincidences: o_xx = 4, o_yy = 4, o_xy = o_yx = 2; n = 12, n_x = n_y = 6.
    # D_o = 4/12, D_e = 2·6·6 / (12·11) = 72/132  →  α = 1 − (1/3)/(72/132) = 7/18
    assert kripp_alpha(THREE_RATERS) == pytest.approx(7 / 18)


def test_undefined_statistics_are_none_not_zero() -> None:
    same = pd.DataFrame({"a": ["x", "x"], "b": ["x", "x"]})
    assert cohen_pairs(same).iloc[0]["kappa"] is None
    assert fleiss(same) == (None, 2)
    assert kripp_alpha(same) is None
    assert fleiss(pd.DataFrame()) == (None, 0)


def test_fleiss_uses_units_with_the_common_rater_count() -> None:
    table = THREE_RATERS.copy()
    table.loc["u5"] = ["x", None, None]  # a single rating: not comparable
    table.loc["u6"] = ["x", "y", None]  # two raters: not the modal count
    kappa, units = fleiss(table)
    assert units == 4 and kappa == pytest.approx(1 / 3)


def test_ordinal_alpha_credits_near_misses() -> None:
    near = pd.DataFrame({"a": [1, 2, 3, 4, 5], "b": [2, 2, 4, 4, 5]})
    assert kripp_alpha(near, ordinal=True) > kripp_alpha(near, ordinal=False)


def test_confusion_matrix_of_two_annotators() -> None:
    m = confusion(THREE_RATERS, "r1", "r3")
    assert m.loc["x", "x"] == 1 and m.loc["x", "y"] == 2 and m.loc["y", "y"] == 1
    assert int(m.to_numpy().sum()) == 4


def test_study_agreement_report_end_to_end(store, make_episode) -> None:
    eps = [make_episode(f"e{i}") for i in range(4)]
    make_episode("played", user_voice="human")
    create_study(
        store,
        StudySpec(
            name="agree",
            episodes=(*eps, "played"),
            label_kinds=("fault_type", "who_broke"),
            overlap=3,
        ),
    )
    assign_study(store, "agree", ["r1", "r2", "r3"])
    values = THREE_RATERS.rename(index=dict(zip(THREE_RATERS.index, eps, strict=True)))
    cat = {"x": "vagueness_subjectivity", "y": "none"}
    for r in ("r1", "r2", "r3"):
        for item in annotator_queue(store, "agree", r, reveal_ids=True).items:
            if item.target_id == "played":
                continue
            v = cat[values.loc[item.target_id, r]]
            label_item(store, item.assignment_id, "fault_type", v, seconds=3.0)
    # A self-played label that would break agreement is kept apart.
    record_play(store, annotator="r9", episode_id=eps[0], sample_id="sample-1")
    write_label(
        store,
        annotator="r9",
        target_kind="episode",
        target_id=eps[0],
        label_kind="fault_type",
        value="none",
        study_id=store.conn.execute("SELECT study_id FROM studies").fetchone()[0],
    )
    rep = agreement_report(store, "agree")
    row = rep.summary.set_index("label_kind").loc["fault_type"]
    assert row["fleiss_kappa"] == pytest.approx(1 / 3)
    assert row["krippendorff_alpha"] == pytest.approx(7 / 18)
    assert row["annotators"] == 3 and row["units_multi"] == 4
    assert rep.self_played == 1
    assert len(rep.pairs) == 3
    assert set(rep.disagreements["target_id"]) == {eps[1], eps[3]}
    assert rep.disagreements.iloc[0]["episode_ids"] == [rep.disagreements.iloc[0]["target_id"]]
    tp = rep.throughput.set_index("annotator")
    assert tp.loc["r1", "labels"] == 4 and tp.loc["r1", "items_done"] == 4
    assert tp.loc["r1", "median_seconds_per_item"] == 3.0
    with_self = agreement_report(store, "agree", include_self_played=True)
    assert with_self.summary.set_index("label_kind").loc["fault_type", "annotators"] == 4
    m = study_confusion(store, "agree", "fault_type", "r1", "r3")
    assert int(m.to_numpy().sum()) == 4
