"""A supported range (`supports`, `--supports`): a consumer that runs on three releases
at once (a CUDA image on the newest, a ROCm image on the oldest), written from the
review of an upgrade where kernel imports existed only in the newest release, so every
forward on the older image failed. The releases are real ones of a loopback index
(tests/fake_index.py): 2.0.0, 2.1.0 and 2.2.0 in range, 2.3.0 and a pre-release not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftaudit.cli import main

from .conftest import write_tree
from .report_schemas import assert_valid

_BASE = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/layers/__init__.py": "",
    "sglang/srt/layers/common.py": "def act(x):\n    return x\n",
}
_FAST = "def act(x):\n    return x\n\n\ndef fast_act(x):\n    return x\n"
_FUSED = "def fused_moe(x):\n    return x\n"
_QUANT = "def fp8_gemm(x):\n    return x\n"
_LEGACY = "def old_attn(x):\n    return x\n"
_ROUTE = '\n\n@app.post("{path}")\nasync def {name}(obj):\n    return {{}}\n'
_GENERATE = "from fastapi import FastAPI\n\napp = FastAPI()\n" + _ROUTE.format(
    path="/generate", name="generate"
)
_SERVER = "sglang/srt/entrypoints/http_server.py"
_SERVER_SYNC = _GENERATE + _ROUTE.format(path="/begin_sync", name="begin_sync")
_PACKAGES = {"sglang/srt/entrypoints/__init__.py": ""}
RELEASES = {
    "2.0.0": {"sglang/srt/layers/legacy.py": _LEGACY, _SERVER: _GENERATE},
    "2.1.0": {
        "sglang/srt/layers/legacy.py": _LEGACY,
        "sglang/srt/layers/quant.py": _QUANT,
        _SERVER: _GENERATE,
    },
    "2.2.0": {
        _SERVER: _SERVER_SYNC,
        "sglang/srt/layers/common.py": _FAST,
        "sglang/srt/layers/quant.py": _QUANT,
        "sglang/srt/layers/fused.py": _FUSED,
        "sglang/srt/layers/fused_v2.py": _FUSED,
    },
    "2.3.0": {"sglang/srt/layers/fused.py": _FUSED},
}
MODEL = """\
import sglang
from packaging.version import Version

from sglang.srt.layers import common as layers_common
from sglang.srt.layers.common import act
from sglang.srt.layers.fused import fused_moe  # fails on 2.0.0, 2.1.0
from sglang.srt.layers.quant import fp8_gemm  # fails on 2.0.0
from sglang.srt.layers.legacy import old_attn  # fails on 2.2.0

try:  # near miss: the fallback is in every release
    from sglang.srt.layers.fused import fused_moe as fast_moe
except ImportError:
    from sglang.srt.layers.common import act as fast_moe

try:
    from sglang.srt.layers.fused import fused_moe as moe2  # fails on 2.0.0, 2.1.0
except ImportError:  # the fallback covers only the newest
    from sglang.srt.layers.fused_v2 import fused_moe as moe2  # fails on 2.0.0, 2.1.0

if Version(sglang.__version__) >= Version("2.2.0"):  # near miss: a branch for 2.2.0
    from sglang.srt.layers.fused import fused_moe as branch_moe
if Version(sglang.__version__) < Version("2.2.0"):  # near miss: one for the older ones
    from sglang.srt.layers.legacy import old_attn as branch_attn
if hasattr(layers_common, "fast_act"):  # near miss: a feature test
    layers_common.fast_act(1)
layers_common.fast_act(2)  # fails on 2.0.0, 2.1.0

act(1), fused_moe(1), fp8_gemm(1), old_attn(1), fast_moe(1), moe2(1)
"""
CLIENT = """\
import requests


def sync(url):
    requests.post(f"{url}/generate", json={})
    requests.post(f"{url}/begin_sync", json={})  # fails on 2.0.0, 2.1.0
"""
CONSUMER = {
    "app/__init__.py": "",
    "app/model.py": MODEL,
    "app/client.py": CLIENT,
    "Dockerfile": "FROM lmsysorg/sglang:v2.2.0\n",
    "docker/Dockerfile.rocm": "FROM lmsysorg/sglang:v2.0.0-rocm630\n",
}
PYPROJECT = '[project]\nname = "app"\n\n[tool.driftaudit]\nsupports = ">=2.0.0,<=2.2.0"\n'


@pytest.fixture
def releases(fake_index):
    for version, files in RELEASES.items():
        fake_index.add(version, files={**_BASE, **_PACKAGES, **files})
    # not a final release: never in a range
    fake_index.add("2.2.1rc1", files={**_BASE, **_PACKAGES, **RELEASES["2.2.0"]})
    return fake_index


def _run(tmp_path: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(tmp_path / "cache"), *args])
    out, err = capsys.readouterr()
    return code, out, err


def _marked(text: str) -> dict[int, list[tuple[str, ...]]]:
    """line -> [the releases its `# fails on A, B` marker names]."""
    marked = {}
    for number, line in enumerate(text.splitlines(), 1):
        if "# fails on " in line:
            marked[number] = [tuple(line.split("# fails on ")[1].split(", "))]
    return marked


def _line(text: str) -> int:
    return next(n for n, line in enumerate(MODEL.splitlines(), 1) if text in line)


def _by_line(findings: list[dict]) -> dict[int, list[dict]]:
    lines: dict[int, list[dict]] = {}
    for finding in findings:
        lines.setdefault(finding["line"], []).append(finding)
    return lines


def test_every_release_in_range_is_audited(releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", {**CONSUMER, "pyproject.toml": PYPROJECT})
    code, out, err = _run(tmp_path, capsys, "compare", str(consumer), "-q", "--format", "json")
    assert code == 1, err
    document = json.loads(out)
    assert_valid("findings", document)
    assert (document["old"]["version"], document["new"]["version"]) == ("2.0.0", "2.2.0")
    lines = _by_line([f for f in document["findings"] if f["path"] == "app/model.py"])
    fails = {line: sorted({tuple(f["fails_on"]) for f in found}) for line, found in lines.items()}
    assert fails == _marked(MODEL), lines
    assert all(f["severity"] == "error" for found in lines.values() for f in found)
    client = _by_line([f for f in document["findings"] if f["path"] == "app/client.py"])
    assert {n: sorted({tuple(f["fails_on"]) for f in found}) for n, found in client.items()} == (
        _marked(CLIENT)
    )
    # evidence in the range's order: old is 2.0.0's side, new 2.2.0's
    legacy, fused = _line("legacy import old_attn  #"), _line("fused import fused_moe  #")
    assert all(f["old_location"] and f["new_location"] is None for f in lines[legacy])
    assert all(f["old_location"] is None and f["new_location"] for f in lines[fused])
    assert all("seen from 2.2.0 back to 2.0.0" in f["message"] for f in lines[fused])
    assert "seen from" not in lines[legacy][0]["message"]
    # both images are in the range: DA004 has nothing to say about the ROCm pin
    assert not [f for f in document["findings"] if f["rule"] == "DA004"]
    # `check` reads the same setting
    code, out, _ = _run(tmp_path, capsys, "check", str(consumer), "-q", "--format", "json")
    assert code == 1 and json.loads(out)["findings"] == document["findings"]


def test_the_report_says_where_it_fails(releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", CONSUMER)
    argv = ["compare", str(consumer), "-q", "--supports", ">=2.0.0,<2.3"]
    code, out, _ = _run(tmp_path, capsys, *argv, "--no-timeline")
    assert code == 1
    assert "fails on 2.0.0, 2.1.0" in out and "fails on 2.2.0" in out
    _, out, _ = _run(tmp_path, capsys, *argv, "--format", "markdown")
    assert "Fails on 2.0.0, 2.1.0" in out
    _, out, _ = _run(tmp_path, capsys, *argv, "--format", "sarif")
    assert '"failsOn"' in out
    _, out, _ = _run(tmp_path, capsys, *argv, "--format", "html")
    assert "(fails on <code>2.0.0</code>, <code>2.1.0</code>)" in out


def test_without_a_range_the_second_image_is_offered_as_one(releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", CONSUMER)
    argv = ["compare", str(consumer), "-q", "--old", "2.2.0", "--new", "2.2.0"]
    _, out, _ = _run(tmp_path, capsys, *argv, "--format", "json", "--show-info")
    document = json.loads(out)
    (pins,) = [f for f in document["findings"] if f["rule"] == "DA004"]
    assert pins["path"] == "docker/Dockerfile.rocm"
    assert '`supports = ">=2.0.0,<=2.2.0"`' in pins["message"]
    assert all("fails_on" not in f for f in document["findings"])  # no range, no key


def test_one_release_in_range_is_a_plain_audit(releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", {"app/model.py": MODEL})
    argv = ["compare", str(consumer), "-q", "--supports", "==2.2.0", "--format", "json"]
    code, out, _ = _run(tmp_path, capsys, *argv)
    assert code == 0, out
    assert json.loads(out)["findings"] == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--supports", "0.5.22..0.5.23"], "is not a version range"),
        (["--supports", ">=9.0"], "no final sglang release"),
        (["--supports", ">=2.0.0", "--new", "2.2.0"], "drop --old/--new"),
    ],
)
def test_bad_ranges_are_refused_in_one_line(releases, tmp_path, capsys, args, said):
    consumer = write_tree(tmp_path / "consumer", {"app/model.py": MODEL})
    code, _, err = _run(tmp_path, capsys, "compare", str(consumer), "-q", *args)
    assert code == 2
    assert err.startswith("driftaudit: error: ") and err.count("\n") == 1, err
    assert said in err


def test_the_command_line_wins_over_the_configured_range(releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", {**CONSUMER, "pyproject.toml": PYPROJECT})
    argv = ["compare", str(consumer), "-q", "--old", "2.0.0", "--new", "2.1.0"]
    _, out, _ = _run(tmp_path, capsys, *argv, "--format", "json")
    document = json.loads(out)
    assert document["new"]["version"] == "2.1.0"
    assert all("fails_on" not in f for f in document["findings"])


# The releases inside a range: a name removed in 3.1.0 and restored in 3.2.0, a keyword
# that 3.1.0 and 3.2.0 lack, a name only 3.2.0 has, a name that leaves for good in 3.1.0.
_UTILS = "def helper(x):\n    return x\n"
_GONE = "\n\ndef gone(x):\n    return x\n"
_MIDDLE = "\n\ndef middle_only(x):\n    return x\n"
_LAUNCH = "\n\ndef launch(x, *, fast=False):\n    return x\n"
_LAUNCH_SLOW = "\n\ndef launch(x):\n    return x\n"
_UTILS_FILE = "sglang/srt/utils.py"
_COMPAT = {"sglang/srt/compat.py": _UTILS}
# a dataclass no longer from 3.1.0, whose constructor changes again in 3.2.0 and 3.3.0
_ARGS_FILE = "sglang/srt/args.py"
_DATACLASS = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Args:\n    x: int = 1\n"
_PLAIN = "class Args:\n    def __init__(self, x: int = 1{more}):\n        self.x = x\n"
# an attribute `__init__` sets and `process` reads in 3.2.0 alone (DA703 for an object
# the consumer builds without `__init__`)
_SERVING = "sglang/srt/serving.py"
_PLAIN_SERVING = (
    "class Serving:\n    def __init__(self):\n        self.cache = {}\n\n"
    "    def process(self, text):\n        return self.cache.get(text)\n"
)
_READING_SERVING = (
    "class Serving:\n    def __init__(self):\n        self.cache = {}\n        self.limit = 8\n\n"
    "    def process(self, text):\n        return self.cache.get(text), self.limit\n"
)
# deprecated in 3.0.0, gone in 3.2.0: `plan` stops on 3.1.0 to move off it
_OLD_API = "sglang/srt/old_api.py"
_KEEP_API = "def newer(x):\n    return x\n"
_LEGACY_API = (
    "import warnings\n\n\ndef legacy(x):\n"
    '    warnings.warn("legacy is deprecated", DeprecationWarning)\n    return x\n'
)
INSIDE = {
    "3.0.0": {
        _SERVING: _PLAIN_SERVING,
        _UTILS_FILE: _UTILS + _GONE + _LAUNCH,
        _ARGS_FILE: _DATACLASS,
        _OLD_API: _LEGACY_API,
        **_COMPAT,
    },
    "3.1.0": {
        _SERVING: _PLAIN_SERVING,
        _UTILS_FILE: _LAUNCH_SLOW,
        _ARGS_FILE: _PLAIN.format(more=""),
        _OLD_API: _LEGACY_API,
        **_COMPAT,
    },
    "3.2.0": {
        _SERVING: _READING_SERVING,
        _UTILS_FILE: _UTILS + _MIDDLE + _LAUNCH_SLOW,
        _ARGS_FILE: _PLAIN.format(more=", y: int = 2"),
        _OLD_API: _KEEP_API,
        **_COMPAT,
    },
    "3.3.0": {
        _SERVING: _PLAIN_SERVING,
        _UTILS_FILE: _UTILS + _LAUNCH,
        _ARGS_FILE: _PLAIN.format(more=", y: int = 2, z: int = 3"),
        _OLD_API: _KEEP_API,
        **_COMPAT,
    },
}
WORKER = """\
import dataclasses

import sglang
from packaging.version import Version

from sglang.srt.args import Args
from sglang.srt.serving import Serving
from sglang.srt.utils import helper  # fails on 3.1.0
from sglang.srt.utils import gone  # fails on 3.1.0, 3.2.0, 3.3.0
from sglang.srt.utils import middle_only  # fails on 3.0.0, 3.1.0, 3.3.0
from sglang.srt.utils import launch
from sglang.srt.old_api import legacy  # fails on 3.2.0, 3.3.0

try:  # near miss: the fallback is in every release
    from sglang.srt.utils import helper as h2
except ImportError:
    from sglang.srt.compat import helper as h2

if Version(sglang.__version__) != Version("3.1.0"):  # near miss: not for 3.1.0
    from sglang.srt.utils import helper as h3

launch(1, fast=True)  # fails on 3.1.0, 3.2.0
launch(2)
helper(1), gone(1), middle_only(1), h2(1), h3(1), legacy(1)
serving = object.__new__(Serving)  # fails on 3.2.0
serving.cache = {}
serving.process("x")
dataclasses.fields(Args)  # fails on 3.1.0, 3.2.0, 3.3.0
"""


@pytest.fixture
def inside_releases(fake_index):
    for version, files in INSIDE.items():
        fake_index.add(version, files={**_BASE, **files})
    return fake_index


def test_the_releases_inside_the_range_are_audited(inside_releases, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DRIFTAUDIT_NO_RESULT_CACHE")  # the findings cache is on
    consumer = write_tree(tmp_path / "consumer", {"app/__init__.py": "", "app/worker.py": WORKER})
    argv = ["compare", str(consumer), "-q", "--supports", ">=3.0,<=3.3", "--format", "json"]
    code, out, err = _run(tmp_path, capsys, *argv)
    assert code == 1, err
    document = json.loads(out)
    assert_valid("findings", document)
    lines = _by_line(document["findings"])
    # one finding per fact, each naming the releases where it fails
    assert {n: [tuple(f["fails_on"]) for f in found] for n, found in lines.items()} == {
        n: marked for n, marked in _marked(WORKER).items()
    }, lines
    helper = lines[_worker_line("import helper  #")][0]
    assert helper["rule"] == "DA102" and "inside the supported range" in helper["message"]
    # evidence in both trees: 3.0.0's, and where 3.1.0 has it
    assert (helper["old_location"], helper["new_location"]) == (
        "sglang/srt/utils.py:1",
        "sglang/srt/compat.py:1",
    )
    middle = lines[_worker_line("import middle_only")][0]
    assert middle["old_location"] is None and middle["new_location"]  # 3.0.0's, 3.2.0's
    keyword = lines[_worker_line("fast=True")][0]
    assert keyword["rule"] == "DA201" and keyword["symbol"] == "sglang.srt.utils.launch"
    # a warm run reads the same from the cache, matching nothing again
    monkeypatch.setattr("driftaudit.history.inside.audit_inside", None)
    assert _run(tmp_path, capsys, *argv)[1] == out


def test_the_plan_says_what_fails_on_a_stop_alone(inside_releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", {"app/__init__.py": "", "app/worker.py": WORKER})
    argv = ["plan", str(consumer), "-q", "--old", "3.0.0", "--new", "3.3.0", "--format", "json"]
    code, out, err = _run(tmp_path, capsys, *argv)
    assert code == 0, err
    document = json.loads(out)
    assert_valid("plan", document)
    assert [(s["from"], s["to"]) for s in document["steps"]] == [
        ("3.0.0", "3.1.0"),
        ("3.1.0", "3.3.0"),
    ]
    # on the stop, 3.1.0: `helper` is gone and `launch` lacks `fast` (3.3.0 has both)
    transient = [(f["line"], f["rule"], f["fails_on"]) for f in document["steps"][0]["transient"]]
    assert transient == [
        (_worker_line("import helper  #"), "DA102", ["3.1.0"]),
        (_worker_line("fast=True"), "DA201", ["3.1.0"]),
    ]
    assert document["steps"][1]["transient"] == []
    _, out, _ = _run(tmp_path, capsys, *argv[:-2])
    assert "and on 3.1.0 alone (a later release undoes it):" in out


def _worker_line(text: str) -> int:
    return next(n for n, line in enumerate(WORKER.splitlines(), 1) if text in line)


# `fix --supports`: a kernel moved in 4.1.0 (the consumer imports it from either home),
# and a keyword renamed in 4.1.0, for which no one spelling works on every release.
_KERNEL = "def fused(x, scale=1.0):\n    return x * scale\n"
_KEEP = "def other(x):\n    return x\n"
_SCALE = "\n\ndef scale(x, by=2):\n    return x * by\n"  # in both homes in 4.0.0
_NEW_HOME = {"sglang/srt/ops/__init__.py": "", "sglang/srt/ops/kernels.py": _KERNEL + _SCALE}
_RUN = "def run(x, *, {name}=False):\n    return x\n"
FIXABLE = {
    "4.0.0": {
        "sglang/srt/kernels.py": _KEEP + _KERNEL + _SCALE,
        **_NEW_HOME,
        "sglang/srt/ops/kernels.py": _KEEP + _SCALE,  # the kernel's new home, without it yet
        "sglang/srt/api.py": _RUN.format(name="fast"),
    },
    "4.1.0": {
        "sglang/srt/kernels.py": _KEEP,
        **_NEW_HOME,
        "sglang/srt/api.py": _RUN.format(name="quick"),
    },
    "4.2.0": {
        "sglang/srt/kernels.py": _KEEP,
        **_NEW_HOME,
        "sglang/srt/api.py": _RUN.format(name="quick"),
    },
}
KERNELS = """\
# the CUDA image's kernels
from sglang.srt.kernels import fused, other  # the old home
from sglang.srt.api import run
from sglang.srt.kernels import scale  # both homes have it in 4.0.0: a plain move


def forward(x):
    from sglang.srt.ops.kernels import fused as fused_v2  # only 4.1.0 on

    return run(fused(other(x)), fast=True) + fused_v2(scale(x))
"""
FIXED = """\
# the CUDA image's kernels
from sglang.srt.kernels import other  # the old home
try:
    from sglang.srt.ops.kernels import fused
except ImportError:
    from sglang.srt.kernels import fused
from sglang.srt.api import run
from sglang.srt.ops.kernels import scale  # both homes have it in 4.0.0: a plain move


def forward(x):
    try:
        from sglang.srt.ops.kernels import fused as fused_v2  # only 4.1.0 on
    except ImportError:
        from sglang.srt.kernels import fused as fused_v2

    return run(fused(other(x)), fast=True) + fused_v2(scale(x))
"""


@pytest.fixture
def fixable_releases(fake_index):
    for version, files in FIXABLE.items():
        fake_index.add(version, files={**_BASE, **files})
    return fake_index


def test_fix_writes_what_works_on_every_release_or_says_why_not(fixable_releases, tmp_path, capsys):
    consumer = write_tree(tmp_path / "consumer", {"app/__init__.py": "", "app/kernels.py": KERNELS})
    argv = ["fix", str(consumer), "-q", "--supports", ">=4.0,<=4.2", "--apply"]
    code, _, err = _run(tmp_path, capsys, *argv)
    assert code == 0, err
    assert (consumer / "app" / "kernels.py").read_text() == FIXED
    assert "fixed 3 findings in 1 files" in err
    # the keyword: no one spelling works on 4.0.0 and on 4.1.0, 4.2.0
    (human,) = [line for line in err.splitlines() if "DA202" in line]
    assert "works on 4.0.0 as written and fails on 4.1.0, 4.2.0" in human, err
    # the range's audit of the fixed file: the keyword alone is left
    argv = ["compare", str(consumer), "-q", "--supports", ">=4.0,<=4.2", "--format", "json"]
    _, out, _ = _run(tmp_path, capsys, *argv)
    assert [(f["rule"], f["fails_on"]) for f in json.loads(out)["findings"]] == [
        ("DA202", ["4.1.0", "4.2.0"])
    ]
    # a second run, from the config's range, has nothing left to write
    (consumer / "pyproject.toml").write_text('[tool.driftaudit]\nsupports = ">=4.0,<=4.2"\n')
    code, out, err = _run(tmp_path, capsys, "fix", str(consumer), "-q")
    assert (code, out) == (0, ""), err


def test_a_guarded_import_that_fails_on_a_middle_release_is_held_back(fake_index, tmp_path, capsys):
    # `fused` leaves `kernels` in 5.1.0 and reaches `ops.kernels` only in 5.2.0: on 5.1.0
    # neither spelling imports, so the re-audit of every release refuses the guard
    homes = {
        "5.0.0": {"sglang/srt/kernels.py": _KEEP + _KERNEL, "sglang/srt/ops/kernels.py": _KEEP},
        "5.1.0": {"sglang/srt/kernels.py": _KEEP, "sglang/srt/ops/kernels.py": _KEEP},
        "5.2.0": {"sglang/srt/kernels.py": _KEEP, "sglang/srt/ops/kernels.py": _KEEP + _KERNEL},
    }
    for version, files in homes.items():
        fake_index.add(version, files={**_BASE, "sglang/srt/ops/__init__.py": "", **files})
    source = "from sglang.srt.kernels import fused\n\nfused(1)\n"
    consumer = write_tree(tmp_path / "consumer", {"app/__init__.py": "", "app/k.py": source})
    argv = ["fix", str(consumer), "-q", "--supports", ">=5.0,<=5.2", "--apply"]
    code, _, err = _run(tmp_path, capsys, *argv)
    assert code == 0, err
    assert (consumer / "app" / "k.py").read_text() == source, "nothing written"
    assert "fixed 0 findings" in err and "not fixed: app/k.py:1:32 guard-import" in err, err
