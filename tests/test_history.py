"""`driftaudit history` and each finding's `introduced`/`deprecated`, over four tiny
sglang releases on a loopback index (tests/fake_index.py): a parameter is removed in
the second, a class moves in the third, a function starts warning in the fourth."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftaudit.cli import main
from driftaudit.history.states import spelling_kind

from .conftest import write_tree

_INIT = {"sglang/__init__.py": "", "sglang/srt/__init__.py": ""}
_API_1 = "def run(a, b=1):\n    return a\n\n\ndef keep(x):\n    return x\n"
_API_2 = "def run(a):\n    return a\n\n\ndef keep(x):\n    return x\n"
_API_4 = (
    "import warnings\n\n\ndef run(a):\n"
    '    warnings.warn("run is deprecated, use go", DeprecationWarning)\n'
    "    return a\n\n\ndef keep(x):\n    return x\n"
)
_ENGINE = "class Engine:\n    def __init__(self, path: str):\n        self.path = path\n"
_ARGS = (
    "import argparse\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass ServerArgs:\n"
    "    tp_size: int = {tp}\n\n    @staticmethod\n    def add_cli_args(parser):\n"
    '        parser.add_argument("--tp-size", type=int, default=ServerArgs.tp_size)\n'
)
_ENV = 'import os\n\n{pad}FOO = os.environ.get("SGLANG_FOO", "{default}")\n'
RELEASES = {
    "1.0.0": {
        "sglang/srt/utils.py": _ENV.format(pad="", default="1"),
        "sglang/srt/api.py": _API_1,
        "sglang/srt/engine.py": _ENGINE,
        "sglang/srt/server_args.py": _ARGS.format(tp=1),
    },
    "1.1.0": {
        "sglang/srt/utils.py": _ENV.format(pad="# moved down a line\n", default="1"),
        "sglang/srt/api.py": _API_2,
        "sglang/srt/engine.py": _ENGINE,
        "sglang/srt/server_args.py": _ARGS.format(tp=1),
    },
    "1.2.0": {
        "sglang/srt/utils.py": _ENV.format(pad="", default="2"),
        "sglang/srt/api.py": _API_2,
        "sglang/srt/runtime/__init__.py": "",
        "sglang/srt/runtime/engine.py": _ENGINE,
        "sglang/srt/server_args.py": _ARGS.format(tp=2),
    },
    "1.3.0": {
        "sglang/srt/utils.py": _ENV.format(pad="", default="2"),
        "sglang/srt/api.py": _API_4,
        "sglang/srt/runtime/__init__.py": "",
        "sglang/srt/runtime/engine.py": _ENGINE,
        "sglang/srt/server_args.py": _ARGS.format(tp=2),
    },
}
CONSUMER = {
    "app/__init__.py": "",
    "app/main.py": (
        "from sglang.srt.api import run, keep\n"
        "from sglang.srt.engine import Engine\n\n"
        "run(1, b=2)\nkeep(3)\nEngine('x')\n"
    ),
}


@pytest.fixture
def releases(fake_index):
    for version, files in RELEASES.items():
        fake_index.add(version, files={**_INIT, **files})
    fake_index.add("1.4.0rc1", files={**_INIT, **RELEASES["1.3.0"]})  # not a final release
    return fake_index


def _history(cache: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--cache-dir", str(cache), "history", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_history_of_a_parameter_removed_in_the_second_release(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    name = "sglang.srt.api.run"
    code, out, _ = _history(cache, capsys, name, "--old", "1.0.0", "--new", "1.3.0", "-q")
    assert code == 0
    lines = [line for line in out.splitlines() if "def run" in line]
    assert [line.split()[1] if line.startswith("~") else line.split()[0] for line in lines] == [
        "1.0.0",
        "1.1.0",
        "1.2.0",
        "1.3.0",
    ]
    assert lines[0].startswith("  1.0.0") and "b=1" in lines[0]
    assert lines[1].startswith("~ 1.1.0") and "b=1" not in lines[1]
    assert lines[2].startswith("  1.2.0")
    assert lines[3].startswith("~ 1.3.0")  # it warns from 1.3.0 on
    assert "sglang/srt/api.py:1" in out and "sglang/srt/api.py:4" in out
    assert "changed in 1.1.0, 1.3.0" in out
    assert "changed: -b\n" in out

    code, out, _ = _history(
        cache, capsys, name, "--old", "1.0.0", "--new", "1.3.0", "--format", "json", "-q"
    )
    document = json.loads(out)
    assert document["schema_version"] == 1
    assert document["changed_in"] == ["1.1.0", "1.3.0"]
    rows = {row["version"]: row for row in document["releases"]}
    assert list(rows) == ["1.0.0", "1.1.0", "1.2.0", "1.3.0"]  # 1.4.0rc1 is no release
    assert rows["1.1.0"]["changed_aspects"] == ["param:b", "position:b"]
    assert rows["1.3.0"]["deprecated"] and rows["1.2.0"]["deprecated"] is None
    assert rows["1.0.0"]["location"] == "sglang/srt/api.py:1"


def test_a_warm_history_opens_no_release(releases, tmp_path, capsys, monkeypatch):
    from driftaudit.snapshot import snapshot

    cache = tmp_path / "cache"
    span = ("--old", "1.0.0", "--new", "1.3.0", "--format", "json", "-q")
    _, first, _ = _history(cache, capsys, "sglang.srt.api.run", *span)
    downloads = len(releases.downloads())

    def refuse(*args, **kwargs):
        raise AssertionError("a warm history read a release's tree")

    monkeypatch.setattr(snapshot.Snapshot, "__init__", refuse)
    code, again, _ = _history(cache, capsys, "sglang.srt.api.run", *span)
    assert code == 0 and json.loads(again)["releases"] == json.loads(first)["releases"]
    assert len(releases.downloads()) == downloads == 4


def test_a_kept_state_of_the_wrong_shape_is_read_again(releases, tmp_path, capsys):
    import sqlite3

    cache = tmp_path / "cache"
    span = ("--old", "1.0.0", "--new", "1.3.0", "--format", "json", "-q")
    _, first, _ = _history(cache, capsys, "sglang.srt.api.run", *span)
    with sqlite3.connect(cache / "snapshots.sqlite") as db:
        planted = db.execute(
            "UPDATE blobs SET data = ? WHERE key LIKE 'symstate:%'", (b'{"kind": 3}',)
        ).rowcount
    assert planted == 4
    code, again, _ = _history(cache, capsys, "sglang.srt.api.run", *span)
    assert code == 0 and json.loads(again)["releases"] == json.loads(first)["releases"]


def test_history_of_a_class_that_moves_and_of_one_parameter(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    span = ("--old", "1.0.0", "--new", "1.3.0", "--format", "json", "-q")
    _, out, _ = _history(cache, capsys, "sglang.srt.engine.Engine", *span)
    rows = json.loads(out)["releases"]
    assert [r["present"] for r in rows] == [True, True, False, False]
    assert json.loads(out)["changed_in"] == ["1.2.0"]
    _, out, _ = _history(cache, capsys, "sglang.srt.runtime.engine.Engine", *span)
    assert [r["present"] for r in json.loads(out)["releases"]] == [False, False, True, True]
    _, out, _ = _history(cache, capsys, "sglang.srt.api.run(b)", *span)
    rows = json.loads(out)["releases"]
    assert [r["present"] for r in rows] == [True, False, False, False]
    assert rows[0]["kind"] == "parameter" and "b=1" in rows[0]["text"]


def test_history_of_a_server_args_field_and_its_flag(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    span = ("--old", "1.0.0", "--new", "1.3.0", "--format", "json", "-q")
    # a flag after `--`, as argparse reads a positional argument that starts with a dash
    for name in ("sglang.srt.server_args.ServerArgs.tp_size", "--tp-size"):
        _, out, _ = _history(cache, capsys, *span, "--", name)
        document = json.loads(out)
        assert document["changed_in"] == ["1.2.0"], name
        assert "default" in document["releases"][2]["changed_aspects"]
        assert "int = 2" in document["releases"][2]["text"]


def test_history_of_an_env_var_reads_only_the_files_that_changed(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    span = ("--old", "1.0.0", "--new", "1.3.0", "--format", "json", "-q")
    _, out, _ = _history(cache, capsys, "SGLANG_FOO", *span)
    document = json.loads(out)
    assert document["changed_in"] == ["1.2.0"]
    rows = document["releases"]
    assert [r["location"] for r in rows] == [
        "sglang/srt/utils.py:3",
        "sglang/srt/utils.py:4",  # the file 1.1.0 changed: read from its own tree
        "sglang/srt/utils.py:3",
        "sglang/srt/utils.py:3",
    ]
    assert rows[1]["changed_aspects"] == [] and rows[2]["changed_aspects"] == ["default"]


def test_history_refuses_bad_input_in_one_line(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    for args in (
        ("sglang.srt.api.nothing_here", "--old", "1.0.0", "--new", "1.3.0"),
        ("sglang.srt.api.run", "--old", "1.0.0", "--new", "9.9.9"),
        ("sglang.srt.api.run", "--old", "1.3.0", "--new", "1.0.0"),
        ("not a name!", "--old", "1.0.0", "--new", "1.3.0"),
    ):
        code, out, err = _history(cache, capsys, *args, "-q")
        assert code == 2, args
        assert err.startswith("driftaudit: error: ") and err.count("\n") == 1, err
        assert "Traceback" not in err


def test_each_finding_says_when_its_change_came(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    consumer = write_tree(tmp_path / "consumer", CONSUMER)
    argv = ["--cache-dir", str(cache), "compare", str(consumer), "-q"]
    code = main([*argv, "--old", "1.0.0", "--new", "1.3.0", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    found = {(f["symbol"], f["rule"]): f for f in document["findings"]}
    removed = [f for (symbol, _), f in found.items() if symbol == "sglang.srt.api.run"]
    moved = [f for (symbol, _), f in found.items() if symbol.endswith("Engine")]
    assert removed and moved, found.keys()
    assert {f["introduced"] for f in removed} == {"1.1.0"}
    assert {f["deprecated"] for f in removed} == {"1.3.0"}
    assert {f["introduced"] for f in moved} == {"1.2.0"}
    assert {f["deprecated"] for f in moved} == {None}

    # the same range seen from 1.1.0: the parameter was already gone, nothing to date
    main([*argv, "--old", "1.1.0", "--new", "1.3.0", "--format", "json"])
    later = json.loads(capsys.readouterr().out)["findings"]
    assert {f["introduced"] for f in later} == {"1.2.0"}

    main([*argv, "--old", "1.0.0", "--new", "1.3.0", "--no-timeline", "--format", "json"])
    plain = json.loads(capsys.readouterr().out)["findings"]
    assert all("introduced" not in f and "deprecated" not in f for f in plain)


def test_the_timeline_shows_in_every_format(releases, tmp_path, capsys):
    cache = tmp_path / "cache"
    consumer = write_tree(tmp_path / "consumer", CONSUMER)
    argv = ["--cache-dir", str(cache), "compare", str(consumer), "-q", "--old", "1.0.0"]
    main([*argv, "--new", "1.3.0"])
    assert "introduced in 1.1.0, deprecated since 1.3.0" in capsys.readouterr().out
    main([*argv, "--new", "1.3.0", "--format", "markdown"])
    assert "Introduced in 1.2.0." in capsys.readouterr().out
    main([*argv, "--new", "1.3.0", "--format", "sarif"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    dated = {r["properties"].get("introduced") for r in results}
    assert {"1.1.0", "1.2.0"} <= dated


def test_spellings():
    assert spelling_kind("--tp-size") == "flag"
    assert spelling_kind("SGLANG_USE_X") == "env"
    assert spelling_kind("sglang.srt.api.run(b)") == "parameter"
    assert spelling_kind("sglang.srt.api.run") == "api"
    assert spelling_kind("transformers") == "requirement"
    assert spelling_kind("/update_weights_from_tensor") == "route"
    assert spelling_kind("a b") is None


def test_an_unreadable_listing_leaves_the_findings_undated(releases, tmp_path, capsys, monkeypatch):
    from driftaudit.errors import DriftauditError
    from driftaudit.sources import releases as listing

    def unreachable(*args, **kwargs):
        raise DriftauditError("cannot read the package index (refused)")

    monkeypatch.setattr(listing, "listed_releases", unreachable)
    consumer = write_tree(tmp_path / "consumer", CONSUMER)
    argv = ["--cache-dir", str(tmp_path / "cache"), "compare", str(consumer)]
    code = main([*argv, "--old", "1.0.0", "--new", "1.3.0", "--format", "json"])
    out, err = capsys.readouterr()
    findings = json.loads(out)["findings"]
    assert code == 1 and findings and all("introduced" not in f for f in findings)
    assert "warning: no introduced/deprecated releases: cannot read the package index" in err


def test_a_definition_is_deprecated_by_its_decorator_or_its_own_warning(tmp_path):
    from driftaudit.drift.deprecations import deprecation_note

    source = (
        "import warnings\nfrom typing_extensions import deprecated\n\n\n"
        '@deprecated("use g")\ndef a(): ...\n\n\n'
        "def b():\n    warnings.warn('b is going', FutureWarning)\n\n\n"
        "class C:\n    def __init__(self):\n"
        "        logger.warning('C is deprecated, use D')\n\n\n"
        "def d(x=None):\n    if x is not None:\n"
        "        warnings.warn('x is deprecated', DeprecationWarning)\n\n\n"
        "def e():\n    warnings.warn('slow path', RuntimeWarning)\n"
    )
    write_tree(tmp_path, {"m.py": source})
    lines = {name: i + 1 for i, line in enumerate(source.splitlines()) for name in "abCde"
             if line.startswith((f"def {name}(", f"class {name}:"))}  # fmt: skip
    notes = {name: deprecation_note(tmp_path, f"m.py:{line}") for name, line in lines.items()}
    assert notes["a"] == "@deprecated"
    assert notes["b"] and notes["C"]
    assert notes["d"] is None  # a deprecated parameter, not the function
    assert notes["e"] is None  # a warning, not a deprecation


def test_a_finding_is_dated_by_the_aspect_its_code_is_about(fake_index, tmp_path, capsys):
    # the class's constructor changes in 1.1.0, it stops being a dataclass in 1.2.0:
    # DA307 is about the second change only (`Code.aspect`)
    data = "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    a: int = 1\n"
    grown = data + "    b: int = 2\n"
    plain = "class Config:\n    def __init__(self, a=1, b=2, c=3):\n        self.a = a\n"
    for version, text in [("1.0.0", data), ("1.1.0", grown), ("1.2.0", plain), ("1.3.0", plain)]:
        fake_index.add(version, files={**_INIT, "sglang/srt/config.py": text})
    consumer = write_tree(
        tmp_path / "consumer",
        {
            "app/__init__.py": "",
            "app/main.py": (
                "import dataclasses\n\nfrom sglang.srt.config import Config\n\n"
                "names = [f.name for f in dataclasses.fields(Config)]\n"
            ),
        },
    )
    argv = ["--cache-dir", str(tmp_path / "cache"), "compare", str(consumer), "-q"]
    main([*argv, "--old", "1.0.0", "--new", "1.3.0", "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    lost = [f for f in findings if f["rule"] == "DA307"]
    assert lost, findings
    assert {f["introduced"] for f in lost} == {"1.2.0"}
