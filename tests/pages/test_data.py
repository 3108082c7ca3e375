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
