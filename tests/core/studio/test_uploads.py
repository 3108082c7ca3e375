import io
import zipfile

import pytest

from core.errors import ConfigError
from core.studio.uploads import resolve_import_path, stage_upload


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_path_outside_allowed_roots_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_IMPORT_ROOTS", str(tmp_path / "allowed"))
    (tmp_path / "allowed" / "x").mkdir(parents=True)
    assert resolve_import_path(tmp_path / "allowed" / "x") == (tmp_path / "allowed" / "x").resolve()
    with pytest.raises(ConfigError, match="outside the allowed"):
        resolve_import_path("/etc")
    with pytest.raises(ConfigError, match="outside the allowed"):
        resolve_import_path(tmp_path / "allowed" / ".." / "secret")
    with pytest.raises(ConfigError, match="no such file"):
        resolve_import_path(tmp_path / "allowed" / "missing")


def test_zip_upload_unpacks_single_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    path = stage_upload("retail.zip", _zip({"retail/db.json": b"{}", "retail/tasks.json": b"[]"}))
    assert path.name == "retail" and (path / "db.json").read_bytes() == b"{}"
    assert tmp_path in path.parents


def test_zip_slip_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    with pytest.raises(ConfigError, match="escapes"):
        stage_upload("evil.zip", _zip({"../../evil.txt": b"x"}))
    assert not (tmp_path.parent / "evil.txt").exists()


def test_bad_zip_and_size_limit(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DRIFTBENCH_HOME", str(tmp_path))
    with pytest.raises(ConfigError, match="not a valid ZIP"):
        stage_upload("broken.zip", b"PK-not-really")
    monkeypatch.setattr("core.studio.uploads.MAX_UPLOAD_BYTES", 10)
    with pytest.raises(ConfigError, match="larger than"):
        stage_upload("big.json", b"x" * 11)
