"""Where ServerArgs maps one setting onto another: deprecated settings that now only
redirect, read statically with `ast`.

Two shapes, both as sglang writes them:

- a deprecated flag registered by hand with a `Deprecated*Action` and a `dest=` naming
  another field (`--disable-piecewise-cuda-graph` -> `cuda_graph_backend_prefill =
  Backend.DISABLED` through `const_value=`; `new_flag=` says what to type instead);
- code that reads a field and sets another one inside a branch that warns about a
  deprecation (`if self.enable_x: logger.warning("--enable-x is deprecated ...");
  self.x_backend = "auto"`), in `ServerArgs`' methods (`__post_init__`,
  `_handle_deprecated_args`...) and the `arg_groups` hooks it calls.

`mentions` lists the lines of that code naming a given setting: evidence that the
new release still knows an old name.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from driftaudit.astwalk import walk, walk_statements
from driftaudit.snapshot.surfaces._files import parse_text, tail_name

SERVER_ARGS_FILE = "sglang/srt/server_args.py"
ARG_GROUPS = "sglang/srt/arg_groups"
_DEPRECATION = re.compile(r"deprecat", re.IGNORECASE)


@dataclass
class Redirect:
    source: str  # a flag ("--disable-x") or a field name ("enable_x")
    target: str  # the field it now sets
    value: str | None  # source text of the value set; None: the flag's own argument
    new_flag: str | None  # what the deprecation says to use instead, when it says so
    file: str  # relative to the tree root
    line: int

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Redirect:
        return cls(**data)

    @property
    def setting(self) -> str:
        return f"{self.target} = {self.value}" if self.value else self.target


def redirect_files(root: Path) -> list[Path]:
    root = Path(root)
    files = [root / SERVER_ARGS_FILE]
    groups = root / ARG_GROUPS
    if groups.is_dir():
        files += sorted(groups.rglob("*.py"))
    return [f for f in files if f.is_file()]


def extract_redirects(scan: Path) -> list[Redirect]:
    root = Path(scan)
    found: list[Redirect] = []
    for path in redirect_files(root):
        try:
            tree = parse_text(scan, path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError, RecursionError):
            continue
        relpath = path.relative_to(root).as_posix()
        for node in walk(tree):
            if isinstance(node, ast.Call) and tail_name(node.func) == "add_argument":
                redirect = _flag_redirect(node, relpath)
                if redirect is not None:
                    found.append(redirect)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += _branch_redirects(node, relpath)
    unique = {(r.source, r.target, r.value): r for r in found}
    return list(unique.values())


def _flag_redirect(call: ast.Call, relpath: str) -> Redirect | None:
    """`add_argument("--disable-x", action=DeprecatedStoreConstAction, dest="y",
    const_value=Backend.DISABLED, new_flag="--y=disabled")`."""
    kwargs = {k.arg: k.value for k in call.keywords if k.arg}
    action = ast.unparse(kwargs["action"]) if "action" in kwargs else ""
    dest = kwargs.get("dest")
    flags = [a.value for a in call.args if _is_str(a) and a.value.startswith("--")]
    if "deprecated" not in action.lower() or not flags or dest is None or not _is_str(dest):
        return None
    const = kwargs.get("const_value", kwargs.get("const"))
    new_flag = kwargs.get("new_flag")
    return Redirect(
        flags[0],
        dest.value,
        ast.unparse(const) if const is not None else None,
        new_flag.value if new_flag is not None and _is_str(new_flag) else None,
        relpath,
        call.lineno,
    )


def _branch_redirects(function: ast.FunctionDef, relpath: str) -> list[Redirect]:
    """`if <subject>.a ...: warn("... deprecated ..."); <subject>.b = v` in a method
    (subject `self`) or a hook taking the ServerArgs first (`server_args`)."""
    params = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    if not params:
        return []
    subject = params[0]
    found = []
    for node in walk_statements(function):  # an `if` is a statement
        if not isinstance(node, ast.If):
            continue
        read = _fields_read(node.test, subject)
        if not read or not _warns_deprecation(node.body):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target = statement.targets[0]
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == subject
            ):
                continue
            value = ast.unparse(statement.value)
            for source in read:
                if source != target.attr:
                    found.append(Redirect(source, target.attr, value, None, relpath, node.lineno))
    return found


def _fields_read(test: ast.expr, subject: str) -> list[str]:
    """`self.a and self.b is None` -> ["a"]: the fields a test requires to be set (those
    compared with `is None` are the new ones, still unset)."""
    unset = {
        n.left.attr
        for n in walk(test)
        if isinstance(n, ast.Compare)
        and isinstance(n.left, ast.Attribute)
        and any(isinstance(op, (ast.Is, ast.Eq)) for op in n.ops)
        and any(isinstance(c, ast.Constant) and c.value is None for c in n.comparators)
    }
    names = [
        n.attr
        for n in walk(test)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == subject
    ]
    return list(dict.fromkeys(n for n in names if n not in unset))


def _warns_deprecation(body: list[ast.stmt]) -> bool:
    for statement in body:
        for node in walk(statement):
            if isinstance(node, ast.Call):
                for arg in node.args:
                    for part in walk(arg):
                        if _is_str(part) and _DEPRECATION.search(part.value):
                            return True
    return False


def mentions(root: Path, words: list[str], limit: int = 3) -> dict[str, list[str]]:
    """`file:line` of lines (outside comments) of the ServerArgs code naming each word."""
    found: dict[str, list[str]] = {w: [] for w in words}
    patterns = {w: re.compile(rf"(?<![\w-]){re.escape(w)}(?![\w-])") for w in words}
    for path in redirect_files(root):
        relpath = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        if not any(w in text for w in words):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            code = line.split("#", 1)[0]
            for word, pattern in patterns.items():
                if len(found[word]) < limit and pattern.search(code):
                    found[word].append(f"{relpath}:{number}")
    return found


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
