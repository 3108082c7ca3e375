"""The project runs from a source checkout; anywhere else the CLI says so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import main
from core.errors import ConfigError
from core.paths import CHECKOUT_PARTS, PROJECT_ROOT, require_checkout


def test_this_checkout_has_everything_the_app_reads() -> None:
    require_checkout()
    assert all((PROJECT_ROOT / part).exists() for part in CHECKOUT_PARTS)


def test_an_installed_package_without_the_checkout_is_refused(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()  # what a wheel leaves in site-packages
    (tmp_path / "data").mkdir()
    with pytest.raises(ConfigError) as info:
        require_checkout(tmp_path)
    msg = str(info.value)
    assert str(tmp_path) in msg and "personas, pages, app.py missing" in msg
    assert "pip install -e ." in msg and "\n" not in msg


def test_the_cli_refuses_outside_a_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import core.paths

    real = core.paths.require_checkout
    monkeypatch.setattr("core.cli.require_checkout", lambda: real(tmp_path))
    assert main(["doctor"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a Drift-Bench++ source checkout" in err[0]
