"""`fix --apply` keeps a file what it was besides the fix: its encoding, BOM and newline
style; positions land on the node the finding is about (ast byte columns converted);
imports it adds shadow nothing; statements it adds to a one-line suite are all there.

Each case builds the consumer file from bytes (a CRLF or latin-1 fixture would not
survive every checkout) and runs `run_fix` against the 0.5.14 pack fixture's trees.
"""

from __future__ import annotations

import codecs
import textwrap
from pathlib import Path

import pytest

from driftaudit.fix.source import decode
from driftaudit.pipeline import run_compare, run_fix
from driftaudit.pysource import Columns

from .conftest import FIXTURES

TREES = FIXTURES / "packs" / "sglang-0.5.14"
HEADER = "from sglang.srt.managers.schedule_batch import Req\n"


def fix(consumer: Path, cache_dir: Path, apply: bool = True):
    return run_fix(
        consumer, str(TREES / "old"), str(TREES / "new"), cache_dir, apply, unsafe_fixes=True
    )


def consumer_with(tmp_path: Path, files: dict[str, bytes]) -> Path:
    root = tmp_path / "consumer"
    root.mkdir()
    for name, data in files.items():
        (root / name).write_bytes(data)
    return root


def source(text: str) -> str:
    return textwrap.dedent(text)


def assert_fixed_once(consumer: Path, cache_dir: Path) -> None:
    """Every file parses, a second run changes nothing, compare finds none of the fixes."""
    for path in consumer.rglob("*.py"):
        compile(path.read_bytes(), str(path), "exec")
    again = fix(consumer, cache_dir)
    assert again.fixed == 0 and not any(c.changed for c in again.changes)
    after = run_compare(consumer, str(TREES / "old"), str(TREES / "new"), cache_dir)
    assert not [f for f in after.findings if f.fix and f.fix.autofixable]


ASSIGN = source(
    """\
    def make(req: Req, ids):
        req.fill_ids = ids  # café
    """
)


def test_pep263_latin1_file_is_fixed_in_its_encoding(tmp_path, cache_dir):
    latin1 = ("# -*- coding: latin-1 -*-\n" + HEADER + ASSIGN).encode("latin-1")
    utf8 = (HEADER + ASSIGN).encode("utf-8")
    consumer = consumer_with(tmp_path, {"a_latin1.py": latin1, "b_utf8.py": utf8})
    result = fix(consumer, cache_dir)
    assert result.written and result.fixed == 2, "both files are fixed, neither stops the run"
    data = (consumer / "a_latin1.py").read_bytes()
    assert b"# caf\xe9" in data and "café".encode() not in data
    assert b"req.full_untruncated_fill_ids = array" in data
    assert b"req.full_untruncated_fill_ids = array" in (consumer / "b_utf8.py").read_bytes()
    assert_fixed_once(consumer, cache_dir)


def test_crlf_and_bom_are_kept_and_the_diff_is_the_fix(tmp_path, cache_dir):
    body = HEADER + "\n\n# " + "padding\n# " * 200 + "end\n" + ASSIGN
    data = codecs.BOM_UTF8 + body.replace("\n", "\r\n").encode()
    consumer = consumer_with(tmp_path, {"crlf.py": data})
    result = fix(consumer, cache_dir)
    (change,) = result.changes
    diff = change.diff().splitlines()
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert len(changed) == 4, changed  # - assignment, + assignment, + fill_len, + import
    written = (consumer / "crlf.py").read_bytes()
    assert written.startswith(codecs.BOM_UTF8)
    assert written.count(b"\n") == written.count(b"\r\n"), "every line still ends in CRLF"
    assert written.count(b"\r\n") == data.count(b"\r\n") + 2
    assert_fixed_once(consumer, cache_dir)


def test_columns_after_non_ascii_text_land_on_the_finding(tmp_path, cache_dir):
    # 20 two-byte characters: the ast (byte) column of req.fill_ids is the character
    # column of other.fill_ids, 20 characters on
    line = '    s = "' + "é" * 20 + '"; n = len(req.fill_ids) + len(other.fill_ids)\n'
    text = HEADER + "def f(req: Req, other):\n" + line + "    return s, n\n"
    consumer = consumer_with(tmp_path, {"cols.py": text.encode()})
    result = fix(consumer, cache_dir)
    assert result.fixed == 1
    written = (consumer / "cols.py").read_text(encoding="utf-8")
    assert "n = req.fill_len + len(other.fill_ids)" in written


def test_columns_convert_utf8_byte_offsets_to_characters():
    text = "x = 'é€'; y = z\nplain = 1\n"
    columns = Columns(text)
    assert columns.column(1, len("x = 'é€'; y = ".encode())) == len("x = 'é€'; y = ") + 1
    assert columns.column(2, 8) == 9
    assert Columns("a\nb = 'é'; c\n").column(2, len("b = 'é'; ".encode())) == 10


@pytest.mark.parametrize(
    ("prelude", "expected_call", "expected_import"),
    [
        ("import array\n", 'array.array("q", ids)', None),
        ("from array import array\n", 'array("q", ids)', None),
        ("from numpy import array\n", '_array("q", ids)', "from array import array as _array"),
        ("", '_array("q", ids)', "from array import array as _array"),  # a parameter `array`
    ],
    ids=["import-array", "already-imported", "numpy-array", "parameter-array"],
)
def test_added_imports_never_shadow_a_name(
    prelude, expected_call, expected_import, tmp_path, cache_dir
):
    text = (
        HEADER
        + prelude
        + source(
            """\


        def make(req: Req, ids):
            req.fill_ids = ids


        def use(array):
            return array
        """
        )
    )
    consumer = consumer_with(tmp_path, {"m.py": text.encode()})
    assert fix(consumer, cache_dir).fixed == 1
    written = (consumer / "m.py").read_text()
    assert f"req.full_untruncated_fill_ids = {expected_call}" in written
    new_imports = [line for line in written.splitlines() if line.startswith(("from", "import"))]
    assert new_imports == [HEADER.strip(), *prelude.splitlines(), *filter(None, [expected_import])]
    assert "def use(array):\n    return array" in written
    assert_fixed_once(consumer, cache_dir)


def test_one_line_suite_gets_every_added_statement(tmp_path, cache_dir):
    text = HEADER + "def make(req: Req, ids, c):\n    if c: req.fill_ids = ids\n"
    consumer = consumer_with(tmp_path, {"suite.py": text.encode()})
    result = fix(consumer, cache_dir)
    assert result.fixed == 1
    written = (consumer / "suite.py").read_text()
    assert (
        'if c: req.full_untruncated_fill_ids = array("q", ids); '
        "req.fill_len = len(req.full_untruncated_fill_ids)\n"
    ) in written
    assert_fixed_once(consumer, cache_dir)


def test_undecodable_file_is_skipped_with_a_reason_and_the_others_fixed(tmp_path, cache_dir):
    bad = ("# -*- coding: utf-8 -*-\n" + HEADER + ASSIGN).encode("latin-1")  # é is not utf-8
    good = (HEADER + ASSIGN).encode()
    consumer = consumer_with(tmp_path, {"bad.py": bad, "good.py": good})
    result = fix(consumer, cache_dir)
    assert (consumer / "bad.py").read_bytes() == bad
    assert b"full_untruncated_fill_ids" in (consumer / "good.py").read_bytes()
    # the index cannot decode it: a DA001 finding, and no edit is ever made in it
    assert any(f.code.code == "DA001" and f.path == "bad.py" for f in result.compare.findings)
    assert all(c.path != "bad.py" for c in result.changes)


def test_decode_keeps_what_encode_needs():
    data = codecs.BOM_UTF8 + b"x = 1\r\ny = 2\r\n"
    read = decode(data)
    assert (read.text, read.encoding, read.bom) == ("x = 1\r\ny = 2\r\n", "utf-8", True)
    assert read.encode(read.text) == data


def test_a_parameter_at_the_fix_shadows_the_existing_import(tmp_path, cache_dir):
    text = HEADER + "import array\n\n\ndef make(req: Req, array):\n    req.fill_ids = array\n"
    consumer = consumer_with(tmp_path, {"m.py": text.encode()})
    assert fix(consumer, cache_dir).fixed == 1
    written = (consumer / "m.py").read_text()
    assert "from array import array as _array\n" in written
    assert 'req.full_untruncated_fill_ids = _array("q", array)' in written
    assert_fixed_once(consumer, cache_dir)
