"""Releases from the package index: `pip download` a wheel and unpack its Python source.

sglang wheels carry the whole source. Since 0.5.11 they are manylinux x86_64 only,
one per CPython, so a wheel is asked for explicitly by platform tag; the source
inside is the same on every platform, so any tag will do.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from driftaudit.errors import DriftauditError
from driftaudit.progress import step

_WHEEL_TAGS = [
    ("manylinux_2_34_x86_64", "3.11"),
    ("manylinux_2_34_x86_64", "3.12"),
    ("manylinux_2_28_x86_64", "3.11"),
    ("manylinux_2_17_x86_64", "3.10"),
]
_COMPLETE = ".driftaudit-complete"
VERSION_SPEC_RE = re.compile(r"^v?\d+(\.\d+)*([.\-+]?(post|dev|rc|a|b)?\d*)*$")


def release_dir(cache_dir: Path, version: str) -> Path:
    return cache_dir / "sources" / f"sglang-{version}"


def fetch_release(version: str, cache_dir: Path) -> Path:
    """Unpacked root of sglang==version (holds `sglang/`); offline once cached."""
    version = version.removeprefix("v")
    target = release_dir(cache_dir, version)
    if (target / _COMPLETE).is_file() and (target / "sglang").is_dir():
        return target
    if target.exists():  # a partial or corrupt unpack: start again
        shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    step(f"downloading sglang=={version} from the package index")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        wheel = _download_wheel(version, Path(tmp))
        staging = Path(tmp) / "unpacked"
        _unpack(wheel, staging)
        (staging / _COMPLETE).write_text(wheel.name + "\n")
        staging.rename(target)
    return target


def _pip(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"]
    return subprocess.run(cmd, capture_output=True, text=True)


def _download_wheel(version: str, dest: Path) -> Path:
    requirement = f"sglang=={version}"
    attempts = [
        [
            "--only-binary=:all:",
            "--platform",
            plat,
            "--python-version",
            py,
            "--implementation",
            "cp",
        ]
        for plat, py in _WHEEL_TAGS
    ]
    last = None
    for extra in attempts:
        last = _pip("download", "--no-deps", "-d", str(dest), *extra, requirement)
        wheels = list(dest.glob("sglang-*.whl"))
        if last.returncode == 0 and wheels:
            return wheels[0]
        if "No matching distribution" not in last.stderr and "from versions" not in last.stderr:
            break  # not a tag problem (network, index): trying other tags will not help
    available = available_versions()
    if available and version not in available:
        shown = ", ".join(available[:15]) + (" ..." if len(available) > 15 else "")
        raise DriftauditError(f"unknown sglang version {version!r}; available: {shown}")
    detail = (last.stderr.strip().splitlines() or ["pip download failed"])[-1] if last else ""
    raise DriftauditError(f"could not download sglang=={version}: {detail}")


def available_versions() -> list[str]:
    """Versions of sglang on the package index, newest first (empty if unknown)."""
    result = _pip("index", "versions", "sglang")
    match = re.search(r"Available versions:\s*(.+)", result.stdout)
    return [v.strip() for v in match.group(1).split(",")] if match else []


def _unpack(wheel: Path, dest: Path) -> None:
    """Extract the `sglang` package and the dist-info metadata, nothing else."""
    dest.mkdir(parents=True)
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if name.startswith("sglang/") or name.endswith(".dist-info/METADATA"):
                    zf.extract(name, dest)
    except zipfile.BadZipFile as exc:
        raise DriftauditError(f"downloaded wheel {wheel.name} is not a valid zip: {exc}") from None
