"""The built-in rule packs and the reports' JSON Schemas ship inside the wheel and are
found by an installed copy (non-editable, in a fresh venv), not only in a checkout.
Building the wheel fetches setuptools from the package index (build isolation), hence
the integration mark."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from driftaudit.report.schemas import KINDS, VERSION

ROOT = Path(__file__).parents[1]
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`pip wheel . --no-deps` on a copy of what the build reads (no stale build/ dir)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("driftaudit", "rules"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--quiet", "-w", str(out)],
        check=True,
        cwd=source,
    )
    (built,) = out.glob("driftaudit-*.whl")
    return built


def test_wheel_holds_the_packs_as_package_data(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    packs = sorted(p.name for p in (ROOT / "rules").glob("*.toml"))
    assert packs
    for pack in packs:
        assert f"driftaudit/builtin_packs/{pack}" in names
    assert not [n for n in names if "share/driftaudit" in n or ".data/data" in n]


def test_wheel_holds_the_json_schemas(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(p.name for p in (ROOT / "driftaudit/report/schemas").glob("*.schema.json"))
    assert shipped == sorted(f"{kind}.schema.json" for kind in KINDS)
    for name in shipped:
        assert f"driftaudit/report/schemas/{name}" in names


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> tuple[Path, str]:
    """A fresh venv with the wheel installed (non-editable): its python and site dir.
    It borrows this one's dependencies (griffe, libcst, packaging), but driftaudit
    itself comes from the wheel installed in it."""
    env = tmp_path_factory.mktemp("venv")
    venv.create(env, with_pip=False)
    python = env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site


def test_installed_wheel_finds_the_builtin_packs(installed, tmp_path: Path):
    python, site = installed
    script = (
        "import driftaudit.packs as p\n"
        "dirs = p.pack_directories()\n"
        "print(p.__file__)\n"
        "print(dirs[0])\n"
        "print(len(p.load_packs(dirs, '0.5.9', '0.5.14')))\n"
    )
    result = subprocess.run(
        [str(python), "-c", script],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    module, packs, count = result.stdout.split("\n")[:3]
    assert module.startswith(site) and packs.startswith(site), result.stdout
    assert int(count) > 0


def test_installed_wheel_reads_its_json_schemas(installed, tmp_path: Path):
    python, site = installed
    script = (
        "import driftaudit.report.schemas as s\n"
        "print(s.__file__)\n"
        "print(*(s.schema(kind)['$id'] for kind in s.KINDS))\n"
    )
    result = subprocess.run(
        [str(python), "-c", script],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )
    module, ids = result.stdout.split("\n")[:2]
    assert module.startswith(site), result.stdout
    assert ids.split() == [f"urn:driftaudit:{kind}:{VERSION}" for kind in KINDS]


PACK_CASES = sorted(p.name for p in (ROOT / "tests" / "fixtures" / "packs").iterdir())


@pytest.mark.parametrize("case", PACK_CASES)
def test_checkout_and_installed_wheel_give_the_same_report(installed, case, tmp_path: Path):
    """The package imported from this checkout (as `python -m pytest` imports it) and
    the installed wheel read the same packs and report the same findings."""
    python, site = installed
    root = ROOT / "tests" / "fixtures" / "packs" / case
    reports = {}
    for name, interpreter, cwd in (("checkout", sys.executable, ROOT), ("wheel", python, tmp_path)):
        command = [
            str(interpreter),
            "-m",
            "driftaudit",
            "compare",
            "--format",
            "json",
            "--old",
            str(root / "old"),
            "--new",
            str(root / "new"),
            str(root / "consumer"),
            "--cache-dir",
            str(tmp_path / f"cache-{name}"),
            "--fail-on",
            "never",
        ]
        where = "import driftaudit, sys; print(driftaudit.__file__)"
        origin = subprocess.run(
            [str(interpreter), "-c", where], cwd=cwd, check=True, capture_output=True, text=True
        ).stdout
        assert origin.startswith(str(ROOT / "driftaudit") if name == "checkout" else site)
        out = subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True)
        reports[name] = json.loads(out.stdout)["findings"]
    assert reports["checkout"], "the fixture makes pack findings"
    assert reports["checkout"] == reports["wheel"]
