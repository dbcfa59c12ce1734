"""`git:PATH@REF`: the sglang package at a ref of a local clone, exported into the cache."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from driftaudit.errors import DriftauditError

_COMPLETE = ".driftaudit-complete"


def parse_git_spec(spec: str) -> tuple[Path, str]:
    body = spec.removeprefix("git:")
    path, sep, ref = body.rpartition("@")
    if not sep or not path or not ref:
        raise DriftauditError(f"git spec must be git:PATH@REF, got {spec!r}")
    return Path(path).expanduser(), ref


def _git(repo: Path, *args: str, binary: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=not binary)


def export_ref(spec: str, cache_dir: Path) -> Path:
    repo, ref = parse_git_spec(spec)
    if not repo.is_dir():
        raise DriftauditError(f"git repository {str(repo)!r} does not exist")
    rev = _git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}")
    if rev.returncode != 0:
        raise DriftauditError(f"unknown ref {ref!r} in git repository {str(repo)!r}")
    sha = rev.stdout.strip()
    target = cache_dir / "sources" / f"git-{sha}"
    if (target / _COMPLETE).is_file():
        return target
    shutil.rmtree(target, ignore_errors=True)
    prefix = _package_prefix(repo, sha)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".git-") as tmp:
        archive = _git(repo, "archive", "--format=tar", sha, prefix + "sglang", binary=True)
        if archive.returncode != 0:
            raise DriftauditError(f"git archive failed for {spec!r}")
        tar_path = Path(tmp) / "src.tar"
        tar_path.write_bytes(archive.stdout)
        staging = Path(tmp) / "tree"
        with tarfile.open(tar_path) as tf:
            tf.extractall(staging, filter="data")
        root = staging / prefix if prefix else staging
        (root / _COMPLETE).write_text(sha + "\n")
        root.rename(target)
    return target


def _package_prefix(repo: Path, sha: str) -> str:
    for prefix in ("python/", ""):
        probe = _git(repo, "cat-file", "-e", f"{sha}:{prefix}sglang/__init__.py")
        if probe.returncode == 0:
            return prefix
    raise DriftauditError(f"no sglang package (sglang/ or python/sglang/) at {sha[:12]}")
