"""Where findings point: at the token that breaks (a keyword on its own line of a
multi-line call, the argument that rebinds, a member's name, an import's alias), with a
real end, in characters; the fixer still edits the node the finding belongs to. And one
fact, one finding: repeats are merged on a line and grouped across files in the console.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from rich.console import Console

from driftaudit.check.suppressions import apply_suppressions, scan_file
from driftaudit.codes import lookup
from driftaudit.findings import Finding, Fix
from driftaudit.match.merge import merge_repeats
from driftaudit.pipeline import run_compare, run_fix
from driftaudit.report.console import render_console

from .conftest import FIXTURES, write_tree

CASE = FIXTURES / "themes" / "calls"

CONSUMER = textwrap.dedent(
    """\
    from sglang.srt.distributed import parallel_state as ps
    from sglang.srt.distributed.parallel_state import init_group, renamed_kw


    def run():
        init_group(
            [0],
            0,
            "nccl",
            use_stream=False,
        )
        s = "é€"; renamed_kw(1, img_data=2)
        ps.reordered(1, 2)
        return ps.CacheParams.gone
    """
)


def _compare(consumer: Path, cache_dir: Path):
    return run_compare(consumer, str(CASE / "old"), str(CASE / "new"), cache_dir).findings


def _at(findings, code: str) -> list[tuple[int, int, int, int]]:
    return [(f.line, f.column, f.end_line, f.end_column) for f in findings if f.code.code == code]


def test_findings_point_at_the_breaking_token(tmp_path, cache_dir):
    consumer = write_tree(tmp_path / "c", {"app.py": CONSUMER})
    findings = _compare(consumer, cache_dir)
    # the keyword on its own line of the call, not the call's first line
    assert _at(findings, "DA201") == [(10, 9, 10, 19)]
    # after two 2-byte and 3-byte characters: columns count characters, not UTF-8 bytes
    line = CONSUMER.splitlines()[11]
    start = line.index("img_data") + 1
    assert _at(findings, "DA202") == [(12, start, 12, start + len("img_data"))]
    # each positional argument that now binds to another parameter
    assert _at(findings, "DA204") == [(13, 18, 13, 19), (13, 21, 13, 22)]
    for finding in findings:
        assert (finding.end_line, finding.end_column) > (finding.line, finding.column)


def test_fixes_still_edit_the_node_of_a_moved_finding(tmp_path, cache_dir):
    consumer = write_tree(tmp_path / "c", {"app.py": CONSUMER})
    result = run_fix(
        consumer, str(CASE / "old"), str(CASE / "new"), cache_dir, True, unsafe_fixes=True
    )
    assert result.fixed == 2
    text = (consumer / "app.py").read_text()
    assert "use_stream" not in text and "renamed_kw(1, mm_data=2)" in text
    left = {f.code.code for f in _compare(consumer, cache_dir)}
    assert not left & {"DA201", "DA202"}


def test_a_member_points_at_its_name_and_an_import_at_its_alias(tmp_path, cache_dir):
    members = "from sglang.srt.distributed.parallel_state import CacheParams, gone\n"
    members += "def f(p: CacheParams):\n    return (p\n        .disable)\n"
    consumer = write_tree(tmp_path / "c", {"app.py": members})
    old = write_tree(
        tmp_path / "old",
        {
            "sglang/__init__.py": "",
            "sglang/srt/distributed/parallel_state.py": (
                "class CacheParams:\n    disable: bool = False\n\ngone = 1\n"
            ),
        },
    )
    new = write_tree(
        tmp_path / "new",
        {
            "sglang/__init__.py": "",
            "sglang/srt/distributed/parallel_state.py": "class CacheParams:\n    page: int = 1\n",
        },
    )
    findings = run_compare(consumer, str(old), str(new), cache_dir).findings
    assert _at(findings, "DA103") == [(1, 64, 1, 68)]  # `gone`, the second name imported
    assert _at(findings, "DA301") == [(4, 10, 4, 17)]  # `.disable` on the chain's last line


def test_the_console_lists_a_facts_places_under_it(tmp_path, cache_dir):
    call = "from sglang.srt.distributed.parallel_state import init_group\n"
    call += "init_group([0], 0, 'nccl', use_stream=False)\n"
    consumer = write_tree(tmp_path / "c", {"a.py": call, "b.py": call})
    result = run_compare(consumer, str(CASE / "old"), str(CASE / "new"), cache_dir)
    assert len(_at(result.findings, "DA201")) == 2  # JSON keeps every place
    out = io.StringIO()
    render_console(Console(file=out, width=200), result.findings, result.old, result.new, "c")
    text = out.getvalue()
    assert text.count("passes keyword `use_stream`") == 1
    assert "also at b.py:2:28" in text


def test_one_setting_named_twice_on_a_line_is_one_finding():
    def finding(code, column, message, fix=None):
        return Finding(lookup(code), "args.py", 7, column, "sglang.S.f", message, fix=fix)

    field = finding("DA401", 13, "keyword `f` of a dict: ServerArgs field `f` was removed")
    flag = finding("DA404", 46, "`sglang_f` wraps `--f`: CLI flag `--f` was removed", Fix("x"))
    elsewhere = finding("DA404", 5, "`sglang_f` wraps `--f`: CLI flag `--f` was removed")
    elsewhere.line = 8
    kept, merged = merge_repeats([flag, field, elsewhere])
    assert merged == 1 and len(kept) == 2
    assert field in kept and flag not in kept  # the field set, not the flag read
    assert "also `sglang_f` wraps `--f`" in field.message and field.fix is flag.fix


def test_a_suppression_on_the_calls_first_line_still_covers_its_keywords(tmp_path, cache_dir):
    call = "from sglang.srt.distributed.parallel_state import init_group\n"
    call += "init_group(  # driftaudit: ignore[DA201]\n    [0], 0, 'nccl',\n"
    call += "    use_stream=False,\n)\n"
    consumer = write_tree(tmp_path / "c", {"a.py": call})
    findings = _compare(consumer, cache_dir)
    keyword = [f for f in findings if f.code.code == "DA201"]
    assert [(f.line, f.fix_at) for f in keyword] == [(4, (2, 1))]
    kept, silenced = apply_suppressions(findings, scan_file("a.py", call))
    assert silenced == keyword and not [f for f in kept if f.code.code in ("DA201", "DA002")]


def test_columns_of_a_long_non_ascii_line_are_exact():
    """Byte offsets -> character columns on a line with wide characters: read from the
    line's map of wide characters (re-encoding the line per node was quadratic)."""
    import random

    from driftaudit.pysource import Columns

    def reference(text: str, offset: int) -> int:
        if text.isascii():
            return offset + 1
        return len(text.encode("utf-8")[:offset].decode("utf-8", errors="ignore")) + 1

    chooser = random.Random(7)
    for _ in range(300):
        text = "".join(chooser.choice("aé😀中 b") for _ in range(chooser.randint(0, 40)))
        columns = Columns(f"{text}\nzé\n")
        for offset in range(len(text.encode("utf-8")) + 3):
            assert columns.column(1, offset) == reference(text, offset), (text, offset)
