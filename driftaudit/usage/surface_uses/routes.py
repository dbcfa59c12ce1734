"""Which strings are sglang HTTP routes: the path of a URL or path template
(scheme, host, port and query stripped, a leading field taken as the base URL, an inner
one written `{}`). Not routes: file names, file-system paths (`/tmp/..`), other schemes
(`s3://`), a bare version prefix (`/v1`), paths whose first part is a field (`/{}/runs`).

A loop over literal routes that stops at the first one that answers (`for endpoint in
("/model_info", "/get_weight_version"): ... if r.status_code == 200: return ...`, or a
`try` whose body breaks or returns) tries them as alternatives: see `is_fallback`.
"""

from __future__ import annotations

import ast
import re

_FS_ROOTS = {
    "tmp", "home", "root", "usr", "dev", "proc", "sys", "etc", "var", "opt", "mnt", "bin",
    "lib", "lib64", "sbin", "srv", "run", "boot", "media", "data", "workspace", "workspaces",
    "nfs", "scratch", "shared", "cache", "checkpoints", "models", "datasets", "code",
    "content", "private", "Users", "Volumes", "cpfs", "gpfs", "lustre", "fsx", "efs",
}  # fmt: skip
_SEGMENT = re.compile(r"[A-Za-z0-9_.~-]*(?:\{\}[A-Za-z0-9_.~-]*)*")
_FILE_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}$")
SCHEME_HOST = re.compile(r"^(?:https?|wss?)://[^/?#]*")
_OTHER_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_PORT = re.compile(r"^:(?:\d+|\{\})(?=/)")
_HOST_PORT = re.compile(r"^(?:[A-Za-z0-9_.-]+|\[[0-9a-fA-F:]+\]):(?:\d+|\{\})(?=/)")


def route_of(template: str) -> str | None:
    """A URL or path template (fields written `{}`) -> its route, or None."""
    t = template.strip()
    m = SCHEME_HOST.match(t)
    if m:
        t = t[m.end() :]
    elif _OTHER_SCHEME.match(t):
        return None  # file://, s3://, mem://: not the HTTP server
    else:
        while t.startswith("{}"):  # the base URL
            t = t[2:]
        m = _PORT.match(t) or _HOST_PORT.match(t)
        if m:
            t = t[m.end() :]
    t = t.split("?", 1)[0].split("#", 1)[0]
    if not t.startswith("/") or t.startswith("//"):
        return None
    parts = t[1:].split("/")
    if parts[-1] == "":
        parts.pop()
    if not parts or parts[0] in _FS_ROOTS:
        return None
    for part in parts:
        if not part or part.startswith(".") or not _SEGMENT.fullmatch(part):
            return None
        if _FILE_EXT.search(part):
            return None
    if "{}" in parts[0] or (len(parts) == 1 and re.fullmatch(r"v\d+", parts[0])):
        return None  # sglang's routes start with a name; `/v1` alone is a base URL
    return "/" + "/".join(parts)


def is_fallback(loop: ast.For | ast.AsyncFor | ast.comprehension) -> bool:
    """Does the loop stop at its first success: a `return`/`break` under an `if` or in
    the body of a `try` (not in a handler), directly in the loop's body?"""
    for stmt in getattr(loop, "body", ()):  # a comprehension has none
        if isinstance(stmt, ast.If) and _exits(stmt.body + stmt.orelse):
            return True
        if isinstance(stmt, ast.Try) and _exits(stmt.body + stmt.orelse):
            return True
    return False


def _exits(body: list[ast.stmt]) -> bool:
    for stmt in body:
        if isinstance(stmt, (ast.Return, ast.Break)):
            return True
        if isinstance(stmt, (ast.If, ast.With, ast.AsyncWith)):
            if _exits(stmt.body + getattr(stmt, "orelse", [])):
                return True
    return False
