"""`git:PATH@REF`: the sglang package at a ref of a local clone, exported into the cache.

The repository is read, never checked out: `git ls-tree` lists the blobs under the
package and `git cat-file --batch` reads them, so no filter, hook or attribute of the
repository's config runs (git is started with system and global config, hooks,
fsmonitor and attribute files off, as `children.py` starts programs: found on PATH's
absolute entries, in a directory and an environment of its own, so a `GIT_DIR` a git
hook exported is not followed either). Symlinks and submodules in the tree are skipped,
never followed, and a repository inside the consumer's tree is refused.

The version of a ref: what the tree states (`tree.read_version`: sglang 0.5.8 and older
keep a literal in version.py), else what sglang's build derives from its `v*` tags
(setuptools-scm, through python/tools/get_version_tag.py, since 0.5.9): the tag at the
commit, else the highest release the commit already holds (a tag it is no ancestor
of: on main, the release branches' tags count, as in sglang's script) bumped as
setuptools-scm's guess-next-dev does, `0.5.14` + 12 commits -> `0.5.15.dev12+g<sha>`.
It is kept in the export's record.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from pathlib import Path, PurePosixPath

from packaging.version import InvalidVersion, Version

from driftaudit import children
from driftaudit.errors import DriftauditError
from driftaudit.sources import in_use
from driftaudit.sources.index import COMPLETE, publish

_SAFE_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.attributesFile=/dev/null",
    "-c", "protocol.allow=never",
)  # fmt: skip
_SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
}
_BLOB_MODES = ("100644", "100755")  # 120000 (symlink) and 160000 (submodule) are skipped


def parse_git_spec(spec: str) -> tuple[Path, str]:
    body = spec.removeprefix("git:")
    path, sep, ref = body.rpartition("@")
    if not sep or not path or not ref:
        raise DriftauditError(f"git spec must be git:PATH@REF, got {spec!r}")
    if ref.startswith("-"):
        raise DriftauditError(f"git ref must not start with '-', got {ref!r}")
    return Path(path).expanduser(), ref


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    try:
        return children.run("git", [*_SAFE_CONFIG, "-C", str(repo), *args], stdin=stdin,
                            env=_SAFE_ENV)  # fmt: skip
    except OSError as exc:
        raise DriftauditError(f"cannot run git: {exc.strerror or exc}") from None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def export_ref(
    spec: str, cache_dir: Path, consumer: Path | None = None
) -> tuple[Path, str | None, in_use.Hold | str | None]:
    """(the export's root, the version sglang's build gives the ref, if its tags tell,
    this run's hold on the export: `in_use.hold`)."""
    repo, ref = parse_git_spec(spec)
    repo = repo.absolute()  # git runs elsewhere (children.py)
    if not repo.is_dir():
        raise DriftauditError(f"git repository {str(repo)!r} does not exist")
    if consumer is not None and _inside(repo.resolve(), consumer.resolve()):
        raise DriftauditError(
            f"git repository {str(repo)!r} lies inside the audited consumer; refused"
        )
    rev = _git(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}")
    if rev.returncode != 0:
        raise DriftauditError(f"unknown ref {ref!r} in git repository {str(repo)!r}")
    sha = rev.stdout.decode().strip()
    target = cache_dir / "sources" / f"git-{sha}"
    if (target / COMPLETE).is_file():
        held = in_use.hold(target)
        if held != in_use.GONE:  # else removed meanwhile by `driftaudit cache`: exported again
            recorded = _recorded_version(target / COMPLETE)
            return target, recorded if recorded is not None else tag_version(repo, sha), held
    prefix = _package_prefix(repo, sha)
    version = tag_version(repo, sha)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".git-") as tmp:
        staging = Path(tmp) / "tree"
        staging.mkdir()
        _write_blobs(repo, sha, prefix, staging)
        (staging / COMPLETE).write_text(json.dumps({"sha": sha, "version": version}) + "\n")
        staged = in_use.hold(staging)  # held across the move: no remover takes it meanwhile
        publish(staging, target)
        held = in_use.hold(target)
        if isinstance(staged, in_use.Hold):
            staged.release()
    if held == in_use.GONE:
        raise DriftauditError(f"the export of {sha[:12]} was removed while it was written")
    return target, version, held


def _recorded_version(record: Path) -> str | None:
    """The tag version an export's record holds; None for a record of an older
    driftaudit (the sha alone) or one that is not what an export writes."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) and _parses(version) else None


def _parses(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _tag_versions(repo: Path, *selection: str) -> dict[str, Version]:
    """`v*` tag -> its release, of the tags `git tag --list` selects (no PEP 440: left out)."""
    listed = _git(repo, "tag", "--list", *selection, "v[0-9]*")
    found = {}
    for tag in listed.stdout.decode("utf-8", "replace").split() if listed.returncode == 0 else ():
        try:
            found[tag] = Version(tag[1:])
        except InvalidVersion:
            continue
    return found


def _next(version: Version) -> str:
    """setuptools-scm's guess of the release after `version`: its last number plus one
    (0.5.14 -> 0.5.15, 0.5.10rc0 -> 0.5.10rc1, 0.5.4.post1 -> 0.5.4.post2)."""
    text = version.public
    return re.sub(r"(\d+)(?!.*\d)", lambda m: str(int(m.group(1)) + 1), text, count=1)


def tag_version(repo: Path, sha: str) -> str | None:
    """The version sglang's build gives commit `sha` from its `v*` tags (see the module
    docstring), or None when no tag tells (no tags: a shallow clone)."""
    exact = _tag_versions(repo, "--points-at", sha)
    if exact:
        return str(max(exact.values()))
    later = _tag_versions(repo, "--contains", sha)  # releases cut after this commit
    held = {tag: v for tag, v in _tag_versions(repo).items() if tag not in later}
    if not held:
        return None
    tag = max(held, key=held.__getitem__)
    base = _git(repo, "merge-base", "--end-of-options", tag, sha)
    if base.returncode != 0:
        return None
    since = base.stdout.decode().strip()
    count = _git(repo, "rev-list", "--count", "--end-of-options", f"{since}..{sha}")
    if count.returncode != 0:
        return None
    distance = count.stdout.decode().strip()
    return f"{_next(held[tag])}.dev{distance}+g{sha[:9]}"


def _blobs(repo: Path, sha: str, prefix: str) -> list[tuple[str, str]]:
    """(blob sha, path under the package root) of every regular file of the package."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", sha, "--", prefix + "sglang")
    if listing.returncode != 0:
        raise DriftauditError(f"git ls-tree failed at {sha[:12]}")
    blobs = []
    for entry in listing.stdout.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, blob = meta.decode().split()
        path = PurePosixPath(raw_path.decode("utf-8", "surrogateescape")[len(prefix) :])
        if kind != "blob" or mode not in _BLOB_MODES:
            continue
        if path.is_absolute() or any(part in ("", ".", "..") for part in path.parts):
            continue
        blobs.append((blob, path.as_posix()))
    return blobs


def _write_blobs(repo: Path, sha: str, prefix: str, staging: Path) -> None:
    blobs = _blobs(repo, sha, prefix)
    batch = _git(repo, "cat-file", "--batch", stdin="".join(f"{b}\n" for b, _ in blobs).encode())
    if batch.returncode != 0:
        raise DriftauditError(f"git cat-file failed at {sha[:12]}")
    data, offset = batch.stdout, 0
    for _blob, rel in blobs:
        header_end = data.index(b"\n", offset)
        header = data[offset:header_end].decode().split()
        start = header_end + 1
        if len(header) != 3:  # "<sha> missing": nothing follows
            offset = start
            continue
        _, kind, size = header
        content = data[start : start + int(size)]
        offset = start + int(size) + 1
        if kind != "blob":
            continue
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def _package_prefix(repo: Path, sha: str) -> str:
    for prefix in ("python/", ""):
        probe = _git(repo, "cat-file", "-e", f"{sha}:{prefix}sglang/__init__.py")
        if probe.returncode == 0:
            return prefix
    raise DriftauditError(f"no sglang package (sglang/ or python/sglang/) at {sha[:12]}")
