from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT

PAGE = str(PROJECT_ROOT / "pages" / "data.py")


def test_data_page_empty_store(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "Data"
    # personas tab lists the five bundled personas
    assert len(at.dataframe) >= 2
    assert {"rational", "dependent", "avoidant", "intuitive", "spontaneous"} <= set(
        at.dataframe[0].value["persona"]
    )
    assert at.metric[1].value == "ok"


def test_data_page_refuses_path_outside_roots(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    monkeypatch.setenv("DRIFTBENCH_IMPORT_ROOTS", str(tmp_path / "allowed"))
    at = AppTest.from_file(PAGE, default_timeout=30).run()
    at.text_input(key="data-path").input("/etc")
    at.button(key="data-import-path").click().run()
    assert not at.exception
    assert any("outside the allowed" in e.value for e in at.error)


def test_study_form_keeps_label_kinds_and_pairs_within_a_benchmark(demo_store) -> None:
    """21.7: switching to episode pairs keeps a label choice, pairs never cross benchmarks,
    and a bad form is one sentence, not a raw validation dump."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert at.multiselect(key="stu-kinds-episode").value == ["persona_id"]
    at.radio(key="stu-target").set_value(
        "Episode pairs (same sample first, never across benchmarks)"
    ).run()
    assert not at.exception
    assert at.multiselect(key="stu-kinds-episode_pair").value == ["same_persona"]
    rows = demo_store.episode_rows(status="ended")
    by_bench: dict[str, list[str]] = {}
    for r in rows:
        by_bench.setdefault(r["benchmark"], []).append(r["episode_id"])
    shop, air = by_bench["webshop"][:2], by_bench["tau2_airline"][:2]
    picks = [shop[0], air[0], shop[1], air[1]]  # alternating benchmarks
    at.text_input(key="stu-name").input("pairs-e2e")
    at.multiselect(key="stu-items").set_value(picks)
    at.multiselect(key="stu-kinds-episode_pair").set_value([])
    next(b for b in at.button if b.label == "Create study").click().run()
    assert any("Choose at least one label" in e.value for e in at.error)
    at.multiselect(key="stu-kinds-episode_pair").set_value(["same_persona"])
    next(b for b in at.button if b.label == "Create study").click().run()
    assert not at.exception
    from core.studies import get_study

    spec = get_study(demo_store, "pairs-e2e").spec
    bench = {r["episode_id"]: r["benchmark"] for r in rows}
    assert len(spec.episode_pairs) == 2
    assert all(bench[a] == bench[b] for a, b in spec.episode_pairs)


def test_play_study_form_uses_accounts_and_seeded_samples(demo_home, tmp_path, monkeypatch):
    """A play-as-user study from the Data page: samples by a seeded draw, annotators chosen from
    the accounts (no free-text ids), progress per annotator shown."""
    import yaml

    from tests.pages.study_fixtures import copy_store

    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    demo_store = copy_store(demo_home, tmp_path)

    from core.studies import get_study, study_progress
    from core.studio.auth import hash_password

    pw = hash_password("pw", iterations=1000)
    creds = tmp_path / "creds.yaml"
    creds.write_text(
        yaml.safe_dump(
            {"users": {n: {"role": "annotator", "password": pw} for n in ("ann", "bob")}}
        )
    )
    monkeypatch.setenv("DRIFTBENCH_CREDENTIALS", str(creds))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.radio(key="stu-kind").set_value("play_user").run()
    assert not at.exception
    assert at.multiselect(key="stu-play_user-annotators").options == ["ann", "bob"]
    at.text_input(key="stu-play_user-name").input("play-form")
    at.number_input(key="stu-play_user-count").set_value(3)
    at.number_input(key="stu-play_user-sseed").set_value(5)
    at.multiselect(key="stu-play_user-annotators").set_value(["ann", "bob"])
    at.number_input(key="stu-play_user-overlap").set_value(1)
    next(b for b in at.button if b.label == "Create study").click().run()
    assert not at.exception
    spec = get_study(demo_store, "play-form").spec
    assert spec.roles == ("play_user",) and len(spec.samples) == 3 and spec.agent == "symbolic"
    progress = {p["annotator"]: p["assigned"] for p in study_progress(demo_store, "play-form")}
    assert sorted(progress.values()) == [1, 2] and set(progress) == {"ann", "bob"}
