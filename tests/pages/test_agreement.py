"""Agreement & QA page: κ / α per label (undefined as —), confusion heatmap, disagreements."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT
from core.store import Store
from core.studies import annotator_queue, label_item
from tests.pages.study_fixtures import PERSONA_A, PERSONA_B, copy_store, make_study

PAGE = str(PROJECT_ROOT / "pages" / "agreement.py")


@pytest.fixture
def study_store(demo_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    return copy_store(demo_home, tmp_path)


def _label(store: Store, episodes: list[str], values: dict[str, tuple[str, ...]]) -> None:
    for ann, vals in values.items():
        by_episode = {
            i.target_id: i.assignment_id
            for i in annotator_queue(store, "persona-study", ann, reveal_ids=True).items
        }
        for ep, value in zip(episodes, vals, strict=True):
            label_item(store, by_episode[ep], "persona_id", value, seconds=4.0)


def _frame(at: AppTest, column: str):  # type: ignore[no-untyped-def]
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_agreement_empty_store(empty_home: Path) -> None:
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert any("No studies yet" in i.value for i in at.info)


def test_agreement_hand_computed_kappa(study_store: Store) -> None:
    episodes = make_study(study_store, n=4)
    _label(study_store, episodes, {"ann1": PERSONA_A, "ann2": PERSONA_B})
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    m = _metrics(at)
    # p_o = 3/4, p_e = 1/2 → κ = 0.5 (see study_fixtures)
    assert m["Cohen's κ (mean of pairs) · persona_id"] == "0.500"
    assert m["% agreement · persona_id"] == "75.0%"
    assert m["Fleiss' κ · persona_id"] == "0.467"  # two raters: (0.75 - 0.53125) / 0.46875
    assert m["Krippendorff's α · persona_id"] == "0.533"
    pairs = _frame(at, "Cohen's κ")
    assert pairs.iloc[0]["Cohen's κ"] == "0.500" and pairs.iloc[0]["shared units"] == "4"
    # confusion matrix heatmap for the only pair; one disagreement on the second episode
    assert at.selectbox(key="agr-cm-pair").value == ("ann1", "ann2")
    assert len(at.get("plotly_chart")) == 1
    disagreements = _frame(at, "inspect")
    assert len(disagreements) == 1
    assert disagreements.iloc[0]["inspect"] == f"/inspect?episode={episodes[1]}"
    assert "ann1: rational · ann2: dependent" in disagreements.iloc[0]["labels"]
    # role realism: the labels scored against the persona each episode really played
    truth = {r["episode_id"]: r["persona_id"] for r in study_store.episode_rows(status="ended")}
    correct = sum(
        truth[e] == v
        for vals in (PERSONA_A, PERSONA_B)
        for e, v in zip(episodes, vals, strict=True)
    )
    ident = _frame(at, "accuracy")
    assert int(ident["judgments"].sum()) == 8 and int(ident["correct"].sum()) == correct
    throughput = _frame(at, "median s / item")
    assert list(throughput["median s / item"]) == ["4.0", "4.0"]
    assert list(throughput["items done"]) == ["4", "4"]


def test_agreement_undefined_kappa_shows_dash(study_store: Store) -> None:
    episodes = make_study(study_store, n=2)
    same = ("rational", "rational")
    _label(study_store, episodes, {"ann1": same, "ann2": same})
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    m = _metrics(at)
    assert m["Cohen's κ (mean of pairs) · persona_id"] == "—"
    assert m["Krippendorff's α · persona_id"] == "—"
    assert m["% agreement · persona_id"] == "100.0%"
    assert any("No disagreements" in c.value for c in at.caption)


def test_agreement_no_labels_yet(study_store: Store) -> None:
    make_study(study_store, n=2)
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert _metrics(at)["Cohen's κ (mean of pairs) · persona_id"] == "—"
    assert any("No two annotators" in c.value for c in at.caption)
