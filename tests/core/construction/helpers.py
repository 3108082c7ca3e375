"""Helpers for construction tests: an "imported" τ² world made from the bundled files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from core.paths import DATA_DIR


def edited_tau2_dir(tmp: Path, domain: str = "retail", tag: str = "imported") -> Path:
    """A copy of the bundled τ² domain whose data differs (one e-mail), so it is another world.

    Every task still replays (no golden write touches e-mails), so graphs and samples build on
    it exactly as on the bundled world, under another fingerprint.
    """
    dst = tmp / f"tau2_{domain}_{tag}"
    shutil.copytree(DATA_DIR / f"tau2_{domain}", dst)
    db = json.loads((dst / "db.json").read_text(encoding="utf-8"))
    uid = sorted(db["users"])[0]
    db["users"][uid]["email"] = f"{tag}.{db['users'][uid]['email']}"
    (dst / "db.json").write_text(json.dumps(db), encoding="utf-8")
    return dst
