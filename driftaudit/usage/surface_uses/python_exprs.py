"""What a Python expression spells, for the Python scanner (`python_scan.py`): the text
of a string expression with `{}` for its fields (plain strings, f-strings, `+`), and
whether a name, attribute, key or string names a file-system path."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, TypeGuard, overload

if TYPE_CHECKING:

    class Str(ast.Constant):
        """A string constant, for the type checker."""

        value: str


def is_str(node: ast.AST | None) -> TypeGuard[Str]:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


@overload
def string_template(node: Str | ast.JoinedStr) -> tuple[str, list[ast.expr]]: ...
@overload
def string_template(node: ast.expr) -> tuple[str, list[ast.expr]] | None: ...
def string_template(node: ast.expr) -> tuple[str, list[ast.expr]] | None:
    """A string expression -> (its text with `{}` for each field, the field expressions).

    A plain string keeps `{name}` placeholders as `{}` (`"/v1/models/{model}"`)."""
    if is_str(node):
        return re.sub(r"\{[^{}]*\}", "{}", node.value), []
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        fields: list[ast.expr] = []
        for value in node.values:
            if is_str(value):
                parts.append(value.value)
            else:
                parts.append("{}")
                fields.append(value.value if isinstance(value, ast.FormattedValue) else value)
        return "".join(parts), fields
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = string_template(node.left) or ("{}", [node.left])
        right = string_template(node.right) or ("{}", [node.right])
        return left[0] + right[0], left[1] + right[1]
    return None


PATHISH = re.compile(
    r"(?:^|_)(?:dir|dirs|directory|root|file|filename|files|ckpt|checkpoint"
    r"|checkpoints|load|save|cache|home|folder|hf|megatron|src|dst|output|input|mount"
    r"|location|repo|model|models|tokenizer|workdir|cwd)(?:_|$)",
    re.I,
)
PATH_FUNCS = {
    "Path", "PurePath", "PosixPath", "open", "join", "exists", "isdir", "isfile", "makedirs",
    "mkdir", "listdir", "glob", "copy", "copytree", "rmtree", "chdir", "abspath", "realpath",
    "expanduser", "relpath", "dirname", "basename", "startswith", "endswith", "removeprefix",
}  # fmt: skip


def is_pathish(node: ast.AST) -> bool:
    """A name, attribute, subscript key or string that names a file-system path:
    `hf_checkpoint`, `args.save_dir`, `kwargs["checkpoint_path"]` (a bare `path` may be
    a URL path: `ProxyRequest(path="/v1/chat/completions")`)."""
    if isinstance(node, ast.Name):
        return bool(PATHISH.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(PATHISH.search(node.attr))
    if isinstance(node, ast.Subscript):
        return is_pathish(node.slice)
    if is_str(node):
        return bool(PATHISH.search(node.value)) and " " not in node.value
    return False
