"""`fix --apply` writes every changed file or none, and keeps what a file is: its mode,
owner and links. Faults are injected (a refused temporary file, a rename that fails or
is interrupted between two files, a kill that left temporary files behind)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import driftaudit.fix
from driftaudit.cli import main
from driftaudit.fix.write import sweep_stale

from .test_fix_files import ASSIGN, HEADER, TREES, consumer_with, fix

ORIGINAL = (HEADER + ASSIGN).encode()


def two_files(tmp_path: Path) -> Path:
    return consumer_with(tmp_path, {"a.py": ORIGINAL, "b.py": ORIGINAL})


def untouched(consumer: Path) -> None:
    for name in ("a.py", "b.py"):
        assert (consumer / name).read_bytes() == ORIGINAL, name
    assert not list(consumer.rglob(".driftaudit-*")), "no temporary file or backup is left"


def fixed(path: Path) -> bool:
    return b"full_untruncated_fill_ids" in path.read_bytes()


def test_write_protected_file_refuses_the_whole_apply(tmp_path, cache_dir, capsys):
    consumer = two_files(tmp_path)
    (consumer / "b.py").chmod(0o444)
    result = fix(consumer, cache_dir)
    assert not result.written and result.refused == [("b.py", "write-protected")]
    untouched(consumer)
    code = main(
        [
            "fix",
            str(consumer),
            "--old",
            str(TREES / "old"),
            "--new",
            str(TREES / "new"),
            "--apply",
            "--unsafe-fixes",
            "--cache-dir",
            str(cache_dir),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "nothing written" in err and "b.py: write-protected" in err
    assert "Traceback" not in err
    untouched(consumer)


def test_file_changed_while_the_fix_is_prepared_is_refused(tmp_path, cache_dir, monkeypatch):
    consumer = two_files(tmp_path)
    prepare = driftaudit.fix.apply_edits

    def edited_meanwhile(files, edits, scanned_at=None):
        changes = prepare(files, edits, scanned_at)
        with open(files.root / "a.py", "ab") as stream:
            stream.write(b"# edited by hand since the scan\n")
        return changes

    monkeypatch.setattr(driftaudit.fix, "apply_edits", edited_meanwhile)
    result = fix(consumer, cache_dir)
    assert result.refused == [("a.py", "changed since the scan; run again")]
    assert (consumer / "a.py").read_bytes().endswith(b"since the scan\n")
    assert (consumer / "b.py").read_bytes() == ORIGINAL


def test_symlink_inside_the_tree_is_written_through(tmp_path, cache_dir):
    consumer = consumer_with(tmp_path, {"b.py": ORIGINAL})
    real = consumer / "vendor" / "real.txt"  # not a module of its own: only the link is
    real.parent.mkdir()
    real.write_bytes(ORIGINAL)
    (consumer / "a.py").symlink_to(real)
    result = fix(consumer, cache_dir)
    assert result.written and result.fixed == 2
    assert (consumer / "a.py").is_symlink() and fixed(real) and fixed(consumer / "b.py")


def test_symlink_out_of_the_tree_is_never_followed(tmp_path, cache_dir):
    consumer = consumer_with(tmp_path, {"b.py": ORIGINAL})
    outside = tmp_path / "elsewhere" / "real.py"
    outside.parent.mkdir()
    outside.write_bytes(ORIGINAL)
    (consumer / "a.py").symlink_to(outside)
    result = fix(consumer, cache_dir)
    assert result.written and result.fixed == 1
    assert outside.read_bytes() == ORIGINAL and fixed(consumer / "b.py")


def test_hard_linked_file_is_refused(tmp_path, cache_dir):
    consumer = two_files(tmp_path)
    os.link(consumer / "a.py", tmp_path / "other-link.py")
    result = fix(consumer, cache_dir)
    assert result.refused == [("a.py", "has 2 hard links (a rewrite would split them)")]
    untouched(consumer)
    assert os.stat(tmp_path / "other-link.py").st_nlink == 2


def test_mode_and_owner_are_kept(tmp_path, cache_dir):
    consumer = two_files(tmp_path)
    (consumer / "a.py").chmod(0o640)
    (consumer / "b.py").chmod(0o755)
    owner = (os.getuid(), os.getgid())
    if os.geteuid() == 0:
        owner = (4321, 4322)
        os.chown(consumer / "a.py", *owner)
    result = fix(consumer, cache_dir)
    assert result.written and fixed(consumer / "a.py") and fixed(consumer / "b.py")
    a, b = os.stat(consumer / "a.py"), os.stat(consumer / "b.py")
    assert (stat.S_IMODE(a.st_mode), stat.S_IMODE(b.st_mode)) == (0o640, 0o755)
    assert (a.st_uid, a.st_gid) == owner


def test_a_temporary_file_refused_mid_run_writes_nothing(tmp_path, cache_dir, monkeypatch):
    """A read-only folder (simulated: root ignores folder permissions) for the second file."""
    consumer = two_files(tmp_path)
    create = tempfile.mkstemp

    def refuse_second(*args, **kwargs):
        if refuse_second.calls == 1:
            raise PermissionError(13, "Permission denied")
        refuse_second.calls += 1
        return create(*args, **kwargs)

    refuse_second.calls = 0
    monkeypatch.setattr(tempfile, "mkstemp", refuse_second)
    result = fix(consumer, cache_dir)
    assert result.refused == [("b.py", "Permission denied")]
    untouched(consumer)


def test_a_failed_rename_restores_the_files_already_replaced(tmp_path, cache_dir, monkeypatch):
    consumer = two_files(tmp_path)
    inode = os.stat(consumer / "a.py").st_ino
    replace = os.replace

    def fail_on_b(source, target):
        if str(target).endswith("b.py") and str(source).endswith(".tmp"):
            raise PermissionError(13, "Permission denied")
        return replace(source, target)

    monkeypatch.setattr(os, "replace", fail_on_b)
    result = fix(consumer, cache_dir)
    assert result.refused == [("b.py", "Permission denied")]
    untouched(consumer)
    assert os.stat(consumer / "a.py").st_ino == inode, "the original file itself is back"


def test_a_crash_between_two_files_restores_the_first(tmp_path, cache_dir, monkeypatch):
    consumer = two_files(tmp_path)
    replace = os.replace

    def interrupted(source, target):
        if str(target).endswith("b.py") and str(source).endswith(".tmp"):
            raise KeyboardInterrupt
        return replace(source, target)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fix(consumer, cache_dir)
    untouched(consumer)


def test_leftovers_of_a_killed_run_are_swept_at_the_next_run(tmp_path, cache_dir):
    consumer = two_files(tmp_path)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(dead.stdout)
    (consumer / "sub").mkdir()
    stale = [consumer / f".driftaudit-{pid}-x1.tmp", consumer / "sub" / f".driftaudit-{pid}-y.bak"]
    for path in stale:
        path.write_bytes(b"half a file")
    live = consumer / f".driftaudit-{os.getppid()}-z.tmp"  # another run, still going
    live.write_bytes(b"")
    result = fix(consumer, cache_dir)
    assert sorted(result.swept) == sorted(stale) and not any(p.exists() for p in stale)
    assert live.exists() and result.written
    live.unlink()
    assert sweep_stale(consumer) == []


def test_dry_run_writes_nothing_and_sweeps_nothing(tmp_path, cache_dir):
    consumer = two_files(tmp_path)
    result = fix(consumer, cache_dir, apply=False)
    assert result.fixed == 2 and not result.written
    untouched(consumer)


KILLED_MID_WRITE = """
import os, sys, time
from pathlib import Path
from driftaudit.fix.write import write_all
from driftaudit.fix.source import read_source

def stop(source, target):
    print("ready", flush=True)
    time.sleep(60)

os.replace = stop
root = Path(sys.argv[1])
write_all(root, [("a.py", b"x = 1\\n", read_source(root / "a.py").digest)])
"""


def test_a_kill_9_between_create_and_rename_is_swept_by_the_next_run(tmp_path, cache_dir):
    consumer = two_files(tmp_path)
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_MID_WRITE, str(consumer)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "ready"
    finally:
        child.kill()
        child.wait()
    left = sorted(p.suffix for p in consumer.glob(".driftaudit-*"))
    assert left == [".bak", ".tmp"], "the residual risk: a kill -9 leaves its temporary files"
    result = fix(consumer, cache_dir)
    assert len(result.swept) == 2 and result.written
    assert not list(consumer.rglob(".driftaudit-*")) and fixed(consumer / "a.py")


def test_a_file_edited_between_the_scan_and_the_fix_is_left_alone(tmp_path, cache_dir, monkeypatch):
    """The findings' positions are the scan's: a file written since is not rewritten."""
    import driftaudit.pipeline

    consumer = two_files(tmp_path)
    scan = driftaudit.pipeline.run_compare
    edited = b"# a line added by hand after the scan\n" + ORIGINAL

    def edit_after_scan(*args, **kwargs):
        result = scan(*args, **kwargs)
        (consumer / "a.py").write_bytes(edited)
        return result

    monkeypatch.setattr(driftaudit.pipeline, "run_compare", edit_after_scan)
    result = fix(consumer, cache_dir)
    assert (consumer / "a.py").read_bytes() == edited
    reasons = {e.path: r for c in result.changes for e, r in c.skipped}
    assert reasons == {"a.py": "changed since the scan; run again"}
    assert result.written and fixed(consumer / "b.py")


def test_a_file_dated_in_the_future_is_still_fixed(tmp_path, cache_dir):
    consumer = two_files(tmp_path)
    future = (time.time() + 3600) * 1e9
    os.utime(consumer / "a.py", ns=(int(future), int(future)))
    result = fix(consumer, cache_dir)
    assert result.written and fixed(consumer / "a.py")
