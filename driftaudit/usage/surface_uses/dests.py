"""Where Python code names an attribute of a parsed-args namespace (an argparse dest) by
string or keyword rather than as `args.<dest>`."""

from __future__ import annotations

import ast
from collections.abc import Iterator

_ATTR_BUILTINS = ("getattr", "setattr", "hasattr", "delattr")


def named_dests(call: ast.Call) -> Iterator[tuple[ast.AST, str]]:
    """(node, dest) for `getattr(args, "sglang_tp_size")` (and set/has/delattr) and
    every keyword of `parser.set_defaults(sglang_tp_size=4)`."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in _ATTR_BUILTINS and len(call.args) >= 2:
        name = call.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            yield name, name.value
    elif isinstance(func, ast.Attribute) and func.attr == "set_defaults":
        yield from ((k, k.arg) for k in call.keywords if k.arg)


def owned_dests(calls: list[ast.Call]) -> set[str]:
    """Dests the consumer's own `add_argument` calls (literal options) create: a
    `temp_parser.add_argument("--sglang-pp-size")` read back as `temp_args.sglang_pp_size`
    is the consumer's own attribute, whatever sglang did to its dest."""
    owned = set()
    for call in calls:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"):
            continue
        options = [a.value for a in call.args if isinstance(a, ast.Constant)]
        options = [o for o in options if isinstance(o, str) and o.startswith("--")]
        dest = next((k.value for k in call.keywords if k.arg == "dest"), None)
        if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
            owned.add(dest.value)
        elif options:
            owned.add(options[0][2:].replace("-", "_"))
    return owned
