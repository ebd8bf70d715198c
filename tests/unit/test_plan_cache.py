"""The plan's cache keys on what was measured, not on when or where a file was written: a
reinstall (a new time, a new venv) keeps its curve, and the files keyed by time go."""

from __future__ import annotations

import json
import os
import shutil

from spectui.plan import cache, identity


def test_a_model_file_is_known_by_its_content_not_its_time_or_place(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 100)
    known = identity.file_identity(model)
    st = model.stat()
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # pip --force-reinstall, touch
    (tmp_path / "venv2").mkdir()
    elsewhere = shutil.copy(model, tmp_path / "venv2" / "m.gguf")  # a rebuilt venv
    assert identity.file_identity(model) == known == identity.file_identity(elsewhere)
    with model.open("r+b") as f:
        f.write(b"GGUX")
    assert identity.file_identity(model) != known


def test_storing_a_curve_removes_the_files_keyed_by_time(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECTUI_CACHE_DIR", str(tmp_path))
    folder = cache.check_writable()
    keyed_by_time = {"target": {"path": "/m.gguf", "size": 1, "mtime_ns": 2}}
    old = folder / "0123456789abcdef.json"
    old.write_text(json.dumps({"format": "spectui-plan/1", "key": keyed_by_time}))
    old_levels = folder / "fedcba9876543210.json"
    old_levels.write_text(json.dumps({"format": "spectui-plan-concurrency/1", "key": keyed_by_time}))
    levels = folder / "0000000000000000.json"
    levels.write_text(json.dumps({"format": "spectui-plan-concurrency/2", "key": {}}))
    corrupt = folder / "1111111111111111.json"
    corrupt.write_text("{")
    written = cache.store({"target": {"size": 1, "sampled_sha256": "00"}}, {"curve": {}})
    assert sorted(folder.iterdir()) == sorted([written, levels, corrupt])
