"""pysource helpers shared by the snapshot and usage layers."""

import ast

from driftaudit.pysource import statements

_SOURCE = '''
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
'''


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
