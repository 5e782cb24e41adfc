"""Issue 16: an installed dist's own files are data too: a RECORD naming paths outside the
dist (or into .git) or carrying damaged hashes, and a pip-cache wheel that is corrupt or a
zip bomb, give no traceback and no read outside the site directory."""

from __future__ import annotations

import zipfile
from pathlib import Path

from capgap.patches.detect import PatchTarget, _record
from capgap.patches.pristine import Pristine
from capgap.patches.store import Store


def test_a_hostile_record_names_only_the_dists_own_files(tmp_path: Path) -> None:
    info = tmp_path / "toy-1.0.dist-info"
    info.mkdir()
    (info / "RECORD").write_text(
        "toy/a.py,sha256=abcde,10\n"
        "toy/../../../etc/passwd,,\n"
        ".git/config,,\n"
        "toy/.git/hooks/post-checkout,,\n"
        "/etc/shadow,,\n"
        "toy/b.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
    )
    record = _record(tmp_path, ["toy-1.0.dist-info/RECORD"])
    assert record == {
        "toy/a.py": None,
        "toy/b.py": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    }
    (info / "RECORD").write_bytes(b"toy/a.py,\0\n")  # csv refuses NUL bytes
    try:
        _record(tmp_path, ["toy-1.0.dist-info/RECORD"])
    except Exception as exc:  # noqa: BLE001 - the type is the point
        assert type(exc).__name__ == "TargetError", exc


def test_a_damaged_pip_cache_wheel_is_a_reason_not_a_traceback(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from capgap.patches import pristine as pristine_mod

    target = PatchTarget("dist", "toy", tmp_path, version="1.0", record={"toy/a.py": "0" * 64})
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"PK\x03\x04 not a zip")
    monkeypatch.setattr(pristine_mod, "_pip_cache_wheel", lambda name, version: junk)
    p = Pristine(target, Store(tmp_path / "store"))
    assert p.wheel() is None and "not a readable wheel" in str(p._wheel_error)
    wheel = tmp_path / "toy-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("toy/a.py", "".join(f"A{i} = {i * 7919 % 10007}\n" for i in range(500)).encode())
    data = bytearray(wheel.read_bytes())
    start = 30 + len("toy/a.py")  # the member's deflate stream
    data[start : start + 20] = b"\xff" * 20
    wheel.write_bytes(bytes(data))
    p = Pristine(target, Store(tmp_path / "store"))
    with zipfile.ZipFile(wheel) as zf:
        assert p._member(zf, "toy/a.py") is None
    assert "cannot be read" in str(p._wheel_error)
