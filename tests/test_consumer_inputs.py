"""Consumer inputs that must never crash a run: each is scanned, or reported (a DA001
parse failure for a Python file, a skip note for any file), and the other files are
still read. A catalogue, plus a property test over random valid programs."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

from driftaudit.fix.source import source_of
from driftaudit.usage import collect_usages
from driftaudit.usage import files as files_module
from driftaudit.usage.collect import failures
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.surface_uses import scan_surfaces

from .conftest import write_tree

GOOD = "from sglang.srt.server_args import ServerArgs\nServerArgs(tp_size=2)\n"


def audit(root: Path, **kwargs) -> tuple[ConsumerFiles, dict[str, str], set[str]]:
    """(the index, path -> failure message, paths with usages) after a whole scan."""
    index = ConsumerFiles(root, **kwargs)
    usages = collect_usages(index)
    surfaces = scan_surfaces(index)
    failed = {f.path: f.message for f in failures(index)}
    used = {u.path for u in usages.usages} | {u.path for u in surfaces.envs}
    return index, failed, used


def skipped(index: ConsumerFiles) -> dict[str, str]:
    return {s.rel: s.reason for s in index.skipped}


# ---- Python text the parser or the visitor cannot take --------------------------------

DEEP = {
    # 500 terms: ast.parse takes it, a recursive visitor does not
    "long_sum.py": "import sglang\nx = " + " + ".join(["sglang.a"] * 500) + "\n",
    "parens.py": "import sglang\nx = " + "(" * 300 + "1" + ")" * 300 + "\n",
    "unary.py": "import sglang\nx = " + "-" * 5000 + "1\n",
    "indent.py": "import sglang\n"
    + "".join("    " * i + "if x:\n" for i in range(120))
    + "    " * 120
    + "pass\n",
    "nul.py": "import sglang\nx = 1\x00\n",
    "env_sum.py": "import os\nx = os.environ['SGLANG_X'] + " + " + ".join(["'a'"] * 600) + "\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_code_too_deep_for_the_parser_or_visitor_is_scanned_or_a_parse_failure(tmp_path, name):
    root = write_tree(tmp_path / "c", {name: DEEP[name], "good.py": GOOD})
    _, failed, used = audit(root)
    assert "good.py" in used  # the run went on
    assert name in failed or name in used
    if name in failed:
        assert failed[name]


def test_a_500_term_sum_is_reported_not_raised(tmp_path):
    root = write_tree(tmp_path / "c", {"long_sum.py": DEEP["long_sum.py"], "good.py": GOOD})
    _, failed, _ = audit(root)
    assert failed.get("long_sum.py") == "too deeply nested to analyse"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xef\xbb\xbf" + GOOD.encode(), "scanned"),  # UTF-8 BOM
        (b"# -*- coding: latin-1 -*-\n" + GOOD.encode() + b"s = '\xe9'\n", "scanned"),
        (GOOD.encode() + b"s = '\xe9'\n", "cannot decode"),  # not UTF-8, no cookie
        (b"# coding: no-such-codec\n" + GOOD.encode(), "cannot decode"),
        (GOOD.replace("\n", "\r\n").encode(), "scanned"),
        (GOOD.replace("\n", "\r").encode(), "scanned"),  # old Mac newlines
    ],
)
def test_encodings_and_newlines(tmp_path, data, expected):
    root = tmp_path / "c"
    root.mkdir()
    (root / "x.py").write_bytes(data)
    _, failed, used = audit(root)
    if expected == "scanned":
        assert "x.py" in used and "x.py" not in failed
    else:
        assert expected in failed["x.py"]


def test_bom_and_cookie_keep_true_positions(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    (root / "x.py").write_bytes(b"\xef\xbb\xbfimport os; os.environ['SGLANG_X'] = '1'\n")
    (root / "y.py").write_bytes(
        b"# coding: latin-1\ns = '\xe9\xe9'; import os; os.environ['SGLANG_Y'] = '1'\n"
    )
    found = scan_surfaces(root)
    assert [(e.path, e.line, e.column) for e in found.envs] == [("x.py", 1, 24), ("y.py", 2, 34)]


# ---- files the walk must not trust ---------------------------------------------------


def test_dangling_symlink_and_loop_are_skipped_and_reported(tmp_path):
    root = write_tree(tmp_path / "c", {"good.py": GOOD})
    (root / "dangling.py").symlink_to(root / "missing.py")
    (root / "loop_a.py").symlink_to(root / "loop_b.py")
    (root / "loop_b.py").symlink_to(root / "loop_a.py")
    index, failed, used = audit(root)
    assert "good.py" in used
    reasons = skipped(index)
    assert "dangling" in reasons["dangling.py"]
    assert "loop" in reasons["loop_a.py"] and "loop" in reasons["loop_b.py"]
    assert {"dangling.py", "loop_a.py", "loop_b.py"} <= set(failed)


def test_symlinks_out_of_the_tree_are_not_followed(tmp_path):
    outside = write_tree(tmp_path / "outside", {"secret.py": GOOD, "pkg/mod.py": GOOD})
    root = write_tree(tmp_path / "c", {"good.py": GOOD, "inner.py": GOOD})
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "pkg").symlink_to(outside / "pkg", target_is_directory=True)
    (root / "alias.py").symlink_to(root / "inner.py")  # inside the tree: read
    index, _, used = audit(root)
    assert "escape.py" not in used and "pkg/mod.py" not in used
    assert "out of the tree" in skipped(index)["escape.py"]
    assert "alias.py" in used


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_module_never_blocks(tmp_path):
    root = write_tree(tmp_path / "c", {"good.py": GOOD})
    os.mkfifo(root / "x.py")
    os.mkfifo(root / "run.sh")
    index, failed, used = audit(root)
    assert "good.py" in used
    assert skipped(index)["x.py"] == "not a regular file"
    assert "x.py" in failed and "run.sh" not in failed


def test_unreadable_file_is_reported(tmp_path):
    root = write_tree(tmp_path / "c", {"good.py": GOOD, "locked.py": GOOD})
    (root / "locked.py").chmod(0)
    try:
        index, failed, used = audit(root)
    finally:
        (root / "locked.py").chmod(0o644)
    assert "good.py" in used
    if os.geteuid() == 0:  # root reads anything
        assert "locked.py" in used
    else:
        assert skipped(index)["locked.py"] == "permission denied"
        assert "locked.py" in failed


def test_file_deleted_during_the_run_is_reported(tmp_path):
    root = write_tree(tmp_path / "c", {"good.py": GOOD, "gone.py": GOOD, "gone.sh": "x=1\n"})
    index = ConsumerFiles(root)
    (root / "gone.py").unlink()
    (root / "gone.sh").unlink()
    usages = collect_usages(index)
    scan_surfaces(index)
    assert {u.path for u in usages.usages} == {"good.py"}
    assert "deleted" in skipped(index)["gone.py"]
    assert [f.path for f in failures(index)] == ["gone.py"]


def test_files_over_the_size_cap_are_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(files_module, "MAX_FILE_BYTES", 100)
    root = write_tree(tmp_path / "c", {"good.py": GOOD, "big.py": GOOD + "#" * 200 + "\n"})
    index, failed, used = audit(root)
    assert "good.py" in used and "big.py" not in used
    assert "larger than" in skipped(index)["big.py"]
    assert "big.py" in failed


# ---- which files belong to the consumer ----------------------------------------------


def test_excludes_have_gitignore_semantics(tmp_path):
    root = write_tree(
        tmp_path / "c",
        {"tests/a/b/deep.py": GOOD, "tests/top.py": GOOD, "src/tests.py": GOOD, "keep.py": GOOD},
    )
    index = ConsumerFiles(root, exclude=["tests/**"])
    assert [f.rel for f in index] == ["keep.py", "src/tests.py"]


@pytest.mark.parametrize(
    "lines",
    [
        ["tests/**"],
        ["tests/", "*.log", "/build", "docs/*.md", "a/**/b", "lib/"],
        ["*.py", "!keep.py"],  # a negation: pathspec itself decides
        [],
    ],
)
def test_ignore_patterns_agree_with_pathspec(lines):
    import pathspec

    paths = ["tests/a/b.py", "tests/x.py", "src/tests/x.py", "keep.py", "x.py", "a/x/y/b",
             "build", "build/x", "src/build", "lib/", "src/lib/x.py", "x.log", "docs/a.md",
             "docs/sub/a.md"]  # fmt: skip
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    ignore = files_module.Ignore(lines)
    assert [ignore.match(p) for p in paths] == [spec.match_file(p) for p in paths]
    # pathspec's spec (a compiled regex per pattern) is made only for a negation
    assert (ignore._spec is not None) == any(line.startswith("!") for line in lines)


def test_the_consumers_gitignore_files_are_honoured(tmp_path):
    root = write_tree(
        tmp_path / "c",
        {
            ".gitignore": "generated/\n*.log\n",
            "generated/x.py": GOOD,
            "pkg/.gitignore": "local_*.py\n",
            "pkg/local_settings.py": GOOD,
            "pkg/mod.py": GOOD,
            "run.log": "x",
        },
    )
    assert [f.rel for f in ConsumerFiles(root)] == [".gitignore", "pkg/.gitignore", "pkg/mod.py"]


def test_each_file_is_read_once_per_run(tmp_path):
    root = write_tree(
        tmp_path / "c",
        {
            "a.py": GOOD + "import os\nos.environ['SGLANG_X'] = '1'\n",
            "b.py": "from a import ServerArgs\n",
            "run.sh": "python -m sglang.launch_server --tp-size 2\n",
        },
    )
    before = files_module.ConsumerFile.reads
    index = ConsumerFiles(root)
    collect_usages(index)
    scan_surfaces(index)
    scan_surfaces(index)
    assert files_module.ConsumerFile.reads - before == 3


def test_the_fixer_gets_the_files_encoding_and_newlines_from_the_index(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    data = b"\xef\xbb\xbfx = 1\r\ny = 2\r\n"
    (root / "x.py").write_bytes(data)
    files = ConsumerFiles(root)
    entry = files.get("x.py")
    assert entry.text == "x = 1\ny = 2\n"
    reads = files_module.ConsumerFile.reads
    source = source_of(entry, root / "x.py")
    assert files_module.ConsumerFile.reads == reads  # nothing read twice
    assert source.encode(source.text.replace("2", "3")) == data.replace(b"2", b"3")


# ---- random valid programs ------------------------------------------------------------


def test_random_valid_programs_are_scanned_or_reported(tmp_path_factory):
    hypothesis = pytest.importorskip("hypothesis")
    hypothesmith = pytest.importorskip("hypothesmith")

    @hypothesis.settings(
        max_examples=12,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(hypothesmith.from_grammar())
    def scans(source: str) -> None:
        try:
            compile(source, "x.py", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            hypothesis.assume(False)
        root = tmp_path_factory.mktemp("random")
        # `import sglang` first: every program is one the collector visits
        (root / "x.py").write_text("import sglang\n" + source, encoding="utf-8")
        index = ConsumerFiles(root)
        usages = collect_usages(index)
        scan_surfaces(index)
        failed = {f.path for f in failures(index)}
        assert "x.py" in failed or usages.files_scanned == 1

    scans()


def test_the_deep_program_is_really_too_deep_for_a_recursive_visitor():
    """Keeps the catalogue honest: the 500-term sum parses but cannot be visited."""
    tree = ast.parse(DEEP["long_sum.py"])
    limit = sys.getrecursionlimit()
    with pytest.raises(RecursionError):
        sys.setrecursionlimit(min(limit, 1000))
        try:
            ast.NodeVisitor().visit(tree)
        finally:
            sys.setrecursionlimit(limit)
