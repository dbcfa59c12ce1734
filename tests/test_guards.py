"""Branch guards of the call graph (DA702) and the value readers of DA205/DA403."""

from __future__ import annotations

import ast

import pytest

from driftaudit.drift.deprecations import _in_function
from driftaudit.drift.literals import UNKNOWN, under_defaults, value_of
from driftaudit.snapshot.branch_conditions import branch_facts, satisfied


def _guards(code: str, params=("mode",)) -> list[list]:
    node = ast.parse(code).body[0]
    return branch_facts(node, "self", set(params))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('if self.spec == "x":\n    a()\n', [[2, 2, "self.spec", "in", ["x"]]]),
        ('if self.spec != "x":\n    a()\n', [[2, 2, "self.spec", "not in", ["x"]]]),
        ("if mode in (1, 2):\n    a()\n", [[2, 2, "mode", "in", [1, 2]]]),
        (
            "if self.on:\n    a()\nelse:\n    b()\n",
            [[2, 2, "self.on", "truthy", []], [4, 4, "self.on", "falsy", []]],
        ),
        ("if not mode:\n    a()\n", [[2, 2, "mode", "falsy", []]]),
        (
            'if self.x is None and mode == "f":\n    a()\n',
            [[2, 2, "self.x", "in", [None]], [2, 2, "mode", "in", ["f"]]],
        ),
        # an `or` constrains nothing in its body; its else branch negates every part
        (
            "if self.x or mode:\n    a()\nelse:\n    b()\n",
            [[4, 4, "self.x", "falsy", []], [4, 4, "mode", "falsy", []]],
        ),
        # neither a subject the caller controls nor a literal: no guard
        ("if other == 1:\n    a()\n", []),
        ("if self.x == CONST:\n    a()\n", []),
    ],
)
def test_branch_guards(code: str, expected: list) -> None:
    assert _guards(code) == expected


def test_satisfied() -> None:
    assert satisfied("in", ["inkling"], "inkling")
    assert not satisfied("in", ["inkling"], "dsv4")
    assert not satisfied("in", [1], True)  # True is not 1
    assert satisfied("not in", [None], "x")
    assert satisfied("truthy", [], "x") and satisfied("falsy", [], None)


def test_values_of_defaults() -> None:
    constants = {"EMPTY": "()", "CHOICES": "['zmq', 'mooncake']"}
    assert value_of("(lambda: list(EMPTY))()", constants) == []
    assert value_of("list()", constants) == []
    assert value_of("CHOICES[0]", constants) == "zmq"
    assert value_of("make_default()", constants) is UNKNOWN
    assert value_of("OTHER", constants) is UNKNOWN
    defaults = {"mode": "cache", "role": "null", "on": False}.get
    field = lambda name: defaults(name, UNKNOWN)  # noqa: E731
    assert under_defaults("1.2 if c.mode == 'buffer' else 2.0", field, constants) == 2.0
    assert under_defaults("(c.role != 'decode') and (not c.on)", field, constants) is True
    assert under_defaults("c.role in ('decode', 'null')", field, constants) is True
    assert under_defaults("c.model == 'x'", field, constants) is UNKNOWN
    assert under_defaults("(c.model == 'x') and (c.role == 'decode')", field, constants) is False
    assert under_defaults("(c.model == 'x') or (c.role == 'null')", field, constants) is True


def test_deprecated_parameters() -> None:
    code = '''def f(self, a=None,  # deprecated
      b=None, c=None, d=None, e=False):
    """Run.

    `b` is deprecated.
    """
    batch.apply_deprecated_c(c)
    if d is not None:
        warnings.warn("d is deprecated")
    if e:
        log("e is fine")
'''
    fn = ast.parse(code).body[0]
    assert _in_function(fn, code.splitlines()) == {"a", "b", "c", "d"}


def _exit_guards(code: str, params=("mode",)) -> list[list]:
    from driftaudit.snapshot.branch_conditions import exit_facts

    return exit_facts(ast.parse(code).body, "self", set(params))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # the rest of the block runs only where the leaving branch's test failed
        ("if not self.on:\n    return\na()\nb()\n", [[3, 4, "self.on", "truthy", []]]),
        ("if self.x is None:\n    raise E\na()\n", [[3, 3, "self.x", "not in", [None]]]),
        ('if mode != "f":\n    return 1\nelse:\n    pass\na()\n', [[5, 5, "mode", "in", ["f"]]]),
        # an `elif` chain: every test that leads to an exit failed
        (
            'if not self.on:\n    return\nelif mode == "f":\n    raise E\na()\n',
            [[5, 5, "self.on", "truthy", []], [5, 5, "mode", "not in", ["f"]]],
        ),
        # the else branch leaves: the rest runs only where the test held
        ("if self.on:\n    a()\nelse:\n    return\nb()\n", [[5, 5, "self.on", "truthy", []]]),
        # `assert <cond>` holds <cond> for the rest
        ("assert self.on\na()\n", [[2, 2, "self.on", "truthy", []]]),
        # near misses: no branch leaves, both leave, `A and B` false says nothing
        ("if not self.on:\n    a()\nb()\n", []),
        ("if self.on:\n    return 1\nelse:\n    return 2\n", []),
        ("if self.on and mode:\n    return\na()\n", []),
    ],
)
def test_exit_guards(code: str, expected: list) -> None:
    assert _exit_guards(code) == expected


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('if not hasattr(m, "x"):\n    return\n', [("has", "x", 1, None)]),
        ('if not hasattr(m, "x"):\n    pytest.skip("old")\n', [("has", "x", 1, None)]),
        ('if getattr(m, "x", None) is None:\n    raise E\n', [("has", "x", 1, None)]),
        ('if sglang.__version__ >= "0.5.10":\n    return\n', [("version", "<", "0.5.10", 1)]),
        (
            'if version("sglang") < "0.5":\n    return\nelif not hasattr(m, "y"):\n    continue\n',
            [("version", ">=", "0.5", 1), ("has", "y", 3, None)],
        ),
        ('assert sglang.__version__ >= "0.5.5"\n', [("version", ">=", "0.5.5", 1)]),
        ('if not hasattr(m, "x"):\n    log()\n', []),
        ('if hasattr(m, "x"):\n    return\n', []),
    ],
)
def test_consumer_after_guards(code: str, expected: list) -> None:
    from driftaudit.usage.consumer_guards import after_guards

    assert list(after_guards(ast.parse(code).body[0])) == expected


@pytest.mark.parametrize(
    ("test", "body"),
    [
        ('sglang.__version__ >= "0.5"', ("version", ">=", "0.5", 1)),
        ('parse(sglang.__version__) < parse("0.5")', ("version", "<", "0.5", 1)),
        ('importlib.metadata.version("sglang") >= "0.5"', ("version", ">=", "0.5", 1)),
        ('importlib_metadata.version("sglang") >= "0.5"', ("version", ">=", "0.5", 1)),
        ('pkg_resources.get_distribution("sglang").version < "0.5"', ("version", "<", "0.5", 1)),
        ('"0.5" <= Version(version("sglang"))', ("version", ">=", "0.5", 1)),
        # another distribution's version, or a consumer's own `version` attribute: none
        ('get_distribution("vllm").version < "0.5"', None),
        ('args.version >= "0.5"', None),
        ('parse(sglang_router.__version__) <= parse("0.2.1")', None),
        ('__version__ >= "2.0"', None),  # the consumer's own, unless imported from sglang
    ],
)
def test_version_spellings(test: str, body) -> None:
    from driftaudit.usage.consumer_guards import branch_guards

    holds, _ = branch_guards(ast.parse(test, mode="eval").body)
    assert holds == ((body,) if body else ())


def test_names_stand_for_the_value_they_were_assigned() -> None:
    from driftaudit.usage.consumer_guards import branch_guards

    module = ast.parse(
        'V = parse(sglang.__version__)\nNEW = V >= parse("0.5")\nHAS = hasattr(m, "x")\n'
    )
    values = {s.targets[0].id: s.value for s in module.body}  # type: ignore[attr-defined]
    name = lambda n: ast.Name(id=n, lineno=9)  # noqa: E731
    assert branch_guards(name("NEW"), values.get) == (
        (("version", ">=", "0.5", 2),),
        (("version", "<", "0.5", 2),),
    )
    assert branch_guards(ast.UnaryOp(op=ast.Not(), operand=name("HAS")), values.get) == (
        (),
        (("has", "x", 3, None),),
    )


def test_a_module_level_test_read_with_its_own_imports() -> None:
    from driftaudit.usage.consumer_guards import branch_guards
    from driftaudit.usage.exports import module_conditions

    module = ast.parse(
        "import sglang as sgl\n"
        "from packaging.version import parse\n"
        "from sglang.srt import utils\n"
        "V = parse(sgl.__version__)\n"
        'NEW = V >= parse("0.5")\n'
        'HAS = hasattr(utils, "x")\n'
        'OWN = parse(__version__) >= parse("2.0")\n'  # the consumer's own version
        "try:\n"
        '    TWICE = V >= parse("0.5")\n'
        "except ValueError:\n"
        "    TWICE = False\n"
    )
    found = module_conditions(module)
    assert found == {
        "V": ("version",),
        "NEW": ("guard", ("version", ">=", "0.5", 5)),
        "HAS": ("guard", ("has", "x", 6, "sglang.srt.utils.x")),
    }
    # read in another module: placed at the test that reads it
    test = ast.parse("not NEW", mode="eval").body
    ast.fix_missing_locations(ast.increment_lineno(test, 41))
    assert branch_guards(test, {"NEW": found["NEW"]}.get) == (
        (("version", "<", "0.5", 42),),
        (("version", ">=", "0.5", 42),),
    )
