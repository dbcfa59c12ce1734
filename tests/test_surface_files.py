"""The shared file walking of the surface extractors: which files, which regions parse."""

from __future__ import annotations

import ast
import re

from driftaudit.snapshot.surfaces import _files
from driftaudit.snapshot.surfaces._files import (
    TreeScan,
    iter_sources,
    iter_statements,
    match_lines,
    parse_around,
    prefilter,
)

from .conftest import write_tree

MODULE = '''\
import os

VALUE = compute(
    "NEEDLE_AT_MODULE",
)


class Big:
    attribute = "NEEDLE_IN_CLASS_BODY"

    def first(self):
        return 1

    @property
    @other.decorator(
        "arg",
    )
    def decorated(self):
        return "NEEDLE_IN_METHOD"

    def second(self):
        def inner():
            return "NEEDLE_IN_INNER"

        return inner

    def odd(self):
        """Doc
continued at column 0."""
        return "NEEDLE_IN_ODD_METHOD"


def loose():
    """A docstring
with a column-0 line: the method region alone does not parse."""
    return "NEEDLE_IN_ODD_FUNCTION"
'''


def _line(text):
    return next(i for i, line in enumerate(MODULE.splitlines(), 1) if text in line)


def _strings(trees):
    return {
        node.value: node.lineno
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_match_lines():
    data = MODULE.encode()
    assert match_lines(data, [re.compile(rb"NEEDLE_IN_\w+")]) == [
        _line("NEEDLE_IN_CLASS_BODY"),
        _line("NEEDLE_IN_METHOD"),
        _line("NEEDLE_IN_INNER"),
        _line("NEEDLE_IN_ODD_METHOD"),
        _line("NEEDLE_IN_ODD_FUNCTION"),
    ]
    assert match_lines(b"nothing", [re.compile(rb"x")]) == []


def test_regions_keep_true_lines():
    for needle in (
        "NEEDLE_AT_MODULE",
        "NEEDLE_IN_CLASS_BODY",
        "NEEDLE_IN_METHOD",
        "NEEDLE_IN_INNER",
        "NEEDLE_IN_ODD_FUNCTION",
        "NEEDLE_IN_ODD_METHOD",
    ):
        trees = parse_around(MODULE, "m.py", [_line(needle)])
        assert _strings(trees)[needle] == _line(needle), needle


def test_a_method_is_parsed_without_its_class():
    trees = parse_around(MODULE, "m.py", [_line("NEEDLE_IN_METHOD")])
    strings = _strings(trees)
    assert "NEEDLE_IN_CLASS_BODY" not in strings and "NEEDLE_IN_INNER" not in strings
    (function,) = [n for t in trees for n in ast.walk(t) if isinstance(n, ast.FunctionDef)]
    assert function.name == "decorated" and len(function.decorator_list) == 2


def test_a_decorator_line_selects_the_decorated_function():
    trees = parse_around(MODULE, "m.py", [_line("@other.decorator")])
    names = [n.name for t in trees for n in ast.walk(t) if isinstance(n, ast.FunctionDef)]
    assert names == ["decorated"]


def test_the_innermost_block_wins_and_nested_regions_merge():
    inner_only = parse_around(MODULE, "m.py", [_line("NEEDLE_IN_INNER")])
    assert [n.name for t in inner_only for n in ast.walk(t) if isinstance(n, ast.FunctionDef)] == [
        "inner"
    ]
    text = "class C:\n    a = 'X'\n\n    def m(self):\n        return 'X'\n"
    both = parse_around(text, "c.py", [2, 5])
    assert len(both) == 1  # the method lies in the class region: parsed once
    assert isinstance(both[0].body[0], ast.ClassDef)
    method_only = parse_around(text, "c.py", [5])
    assert isinstance(method_only[0].body[0], ast.FunctionDef)
    assert method_only[0].body[0].lineno == 4


def test_a_column_0_string_line_falls_back_to_the_module():
    trees = parse_around(MODULE, "m.py", [_line("NEEDLE_IN_ODD_METHOD")])
    assert len(trees) == 1 and isinstance(trees[0].body[0], ast.Import)  # the whole module


def test_unparseable_and_empty():
    assert parse_around("def broken(:\n    'NEEDLE'\n", "b.py", [2]) == []
    assert parse_around(MODULE, "m.py", []) == []


def test_iter_statements_reaches_nested_blocks():
    tree = ast.parse(MODULE)
    functions = [s.name for s in iter_statements(tree.body) if isinstance(s, ast.FunctionDef)]
    assert functions == ["first", "decorated", "second", "inner", "odd", "loose"]


def test_iter_sources_skips_tests_and_hidden_folders(tmp_path):
    root = write_tree(
        tmp_path,
        {
            "sglang/__init__.py": "",
            "sglang/srt/a.py": "needle = 1\n",
            "sglang/srt/b.py": "nothing = 1\n",
            "sglang/srt/test_a.py": "needle = 1\n",
            "sglang/srt/a_test.py": "needle = 1\n",
            "sglang/srt/conftest.py": "needle = 1\n",
            "sglang/test/runners.py": "needle = 1\n",
            "sglang/srt/tests/x.py": "needle = 1\n",
            "sglang/.agents/x.py": "needle = 1\n",
            "sglang/srt/notes.txt": "needle\n",
        },
    )
    found = [rel for rel, _ in iter_sources(root, re.compile(rb"needle"))]
    assert found == ["sglang/srt/a.py"]
    everything = [rel for rel, _ in iter_sources(root)]
    assert everything == ["sglang/__init__.py", "sglang/srt/a.py", "sglang/srt/b.py"]
    assert [rel for rel, _ in iter_sources(root, None, under="sglang/srt/a.py")] == [
        "sglang/srt/a.py"
    ]


def test_a_tree_scan_answers_iter_sources_with_one_read(tmp_path, monkeypatch):
    root = write_tree(
        tmp_path,
        {
            "sglang/__init__.py": "",
            "sglang/a.py": "alpha = 1\n",
            "sglang/srt/b.py": "alpha = beta\n",
            "sglang/srt/c.py": "beta = 1\n",
            "sglang/srt/test_d.py": "alpha = 1\n",
            "sglang/srt/sub/e.py": "gamma = alpha\n",
        },
    )
    monkeypatch.setattr(_files, "_PREFILTERS", [])
    alpha = prefilter(re.compile(rb"alpha"))
    beta = prefilter(re.compile(rb"beta"), re.compile(rb"gamma"))
    undeclared = (re.compile(rb"alpha"),)
    cases = [(alpha, "sglang"), (alpha, "sglang/srt"), (beta, "sglang"), (undeclared, "sglang")]
    alone = [list(iter_sources(root, needle, under)) for needle, under in cases]
    assert [rel for rel, _ in alone[0]] == ["sglang/a.py", "sglang/srt/b.py", "sglang/srt/sub/e.py"]
    scan = TreeScan(root)
    reads = []
    read_bytes = _files.read_bytes
    monkeypatch.setattr(_files, "read_bytes", lambda p: reads.append(p) or read_bytes(p))
    shared = [list(iter_sources(scan, needle, under)) for needle, under in cases]
    first_pass = len(reads)
    assert shared == alone  # the same files, texts and order
    assert scan.hits(undeclared) is None  # not declared: read by iter_sources itself
    # one read of the 5 candidates for both declared prefilters, then only the hits
    assert first_pass == 5 + 3 + 2 + 3 + 5
