from streamlit.testing.v1 import AppTest

from core.paths import PROJECT_ROOT


def test_home_on_empty_store(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "Drift-Bench++ Studio"
    labels = [m.label for m in at.metric]
    assert labels == ["Worlds", "Samples", "Runs", "Episodes"]
    assert all(m.value == "0" for m in at.metric)
    assert any("store is empty" in i.value for i in at.info)
    assert at.button(key="home-init") is not None
