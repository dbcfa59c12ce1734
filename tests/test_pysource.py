"""pysource helpers shared by the snapshot and usage layers."""

import ast

import pytest

from driftaudit.pysource import statements

_SOURCE = """
import a
def f():
    import b
    try:
        from c import d
    except ImportError:
        import e
    else:
        x = [lambda: 1 for _ in y]
    finally:
        pass
class K:
    def g(self):
        match v:
            case 1:
                from h import i
    async def j(self):
        async with k:
            for n in m:
                while o:
                    import p
"""


def test_statements_are_every_statement_in_walk_order():
    tree = ast.parse(_SOURCE)
    blocks = (ast.stmt, ast.excepthandler, ast.match_case)
    expected = [n for n in ast.walk(tree) if isinstance(n, blocks)]
    assert list(statements(tree)) == expected
    imports = [n for n in statements(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert len(imports) == 6  # at module level, in functions, handlers, cases and loops


def test_statements_do_not_enter_expressions():
    tree = ast.parse("x = [y for y in z]\n")
    assert [type(n).__name__ for n in statements(tree)] == ["Assign"]


@pytest.mark.parametrize(
    ("text", "words", "lines"),
    [
        ("a\nsetattr(x)\n\nsetattr setattr\n", ["setattr"], [2, 4]),
        ("__new__\nSimpleNamespace\nx", ["SimpleNamespace", "__new__"], [1, 2]),
        ("one\ntwo", ["three"], []),
        ("one\ntwo", [""], [1, 2]),
    ],
)
def test_the_lines_that_spell_a_word(text, words, lines):
    from driftaudit.pysource import lines_spelling

    assert (
        lines_spelling(text, words)
        == lines
        == [n for n, line in enumerate(text.split("\n"), 1) if any(w in line for w in words)]
    )


def test_a_file_is_read_whole(tmp_path):
    from driftaudit.pysource import read_bytes

    for data in (b"", b"x = 1\n", bytes(range(256)) * 1000):
        (tmp_path / "f").write_bytes(data)
        assert read_bytes(tmp_path / "f") == data
    with pytest.raises(OSError):
        read_bytes(tmp_path / "missing")
