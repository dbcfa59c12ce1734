"""Does a function's body need more of a parameter than a given builtin type offers?

`Req(origin_input_ids: List[int])` became `array[int]` in sglang 0.5.14, yet `__init__`
only stores the value and the rest of `Req` takes its `len`, iterates and slices it: a
list still works, and the maintainers kept passing one. What an annotation says is not
what the code needs. A use the old type lacks is one of:

- an attribute or method the type has not (`ids.tobytes()`, `mode.value` on a `str`);
- an `isinstance` test of it (the code branches on the new type);
- in the function's own body, which the call surely runs, an arithmetic operator with it
  (`list + array` raises TypeError).

Followed: the parameter in the function's body, and, when the body stores it on `self`
(`self.ids = ids`), that attribute in every method of the class (there operators do not
count: whether `self.ids + other` fails depends on the other operand and on the path).
Passing it on, `len`, iteration, indexing and slicing are what a builtin sequence offers
too. Only builtin value
types are judged (their members are known without importing anything); for another
type the answer is unknown.
"""

from __future__ import annotations

import ast
import builtins

UNKNOWN = "unknown"


def builtin_members(value: str) -> set[str] | None:
    """The attributes of a builtin type named by a consumer value type (`list`, `str`)."""
    kind = getattr(builtins, value, None)
    return set(dir(kind)) if isinstance(kind, type) else None


def new_type_use(source: str, lineno: int, name: str, param: str, value: str) -> str | None:
    """How the function `name` defined at `lineno` of `source` uses `param` beyond what the
    builtin type `value` offers (`.tobytes()`, `isinstance`, `+`), None when it does not,
    UNKNOWN when it cannot tell."""
    members = builtin_members(value)
    if members is None:
        return UNKNOWN
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return UNKNOWN
    found = _function(tree, lineno, name)
    if found is None:
        return UNKNOWN
    function, cls = found
    use = _use(function, lambda node: _is_name(node, param), members, operators=True)
    if use is not None:
        return use
    stored = _stored_on_self(function, param)
    if cls is None or not stored:
        return None
    for method in cls.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            use = _use(method, lambda node: _is_self_attr(node, stored), members, operators=False)
            if use is not None:
                return use
    return None


def _function(tree: ast.Module, lineno: int, name: str):
    """(the definition of `name` starting at `lineno` (its `def` or first decorator), the
    class it is a method of or None)."""
    stack: list[tuple[ast.AST, ast.ClassDef | None]] = [(tree, None)]
    while stack:
        node, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.name == name:
                first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                if lineno in (child.lineno, first):
                    return child, cls
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append((child, child if isinstance(child, ast.ClassDef) else None))
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_self_attr(node: ast.AST, attrs: set[str]) -> bool:
    return isinstance(node, ast.Attribute) and _is_name(node.value, "self") and node.attr in attrs


def _stored_on_self(function, param: str) -> set[str]:
    """Attributes the body sets to the parameter as it is (`self.ids = ids`)."""
    stored = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and _is_name(node.value, param):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and _is_name(target.value, "self"):
                    stored.add(target.attr)
    return stored


def _use(function, is_value, members: set[str], operators: bool) -> str | None:
    """The first use in `function` of the value (`is_value` tells its expression) that
    the builtin type with `members` does not support."""
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and is_value(node.value):
            if node.attr not in members:
                return f"`.{node.attr}`"
        elif isinstance(node, ast.Call) and _is_name(node.func, "isinstance") and node.args:
            if is_value(node.args[0]):
                return "an `isinstance` test"
        elif operators and isinstance(node, ast.BinOp):
            if not (is_value(node.left) or is_value(node.right)):
                continue
            return f"the `{_OPERATORS.get(type(node.op), 'binary')}` operator"
    return None


_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.BitOr: "|"}
