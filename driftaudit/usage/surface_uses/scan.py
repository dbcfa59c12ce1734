"""`scan_surfaces`: every file of the consumer index to the scanner of its kind.

Config files (YAML, JSON, TOML) are read only when their text names sglang (`sgl`,
`server_args`, `launch_server`, `curl`) or a wrapping prefix; Python files only where a
cheap text search finds a candidate (see `python_files`). Once every file is read, the
calls of the consumer's request helpers found (`_make_request("flush_cache", ...)`) are
read in their units, wherever they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from driftaudit.usage.files import ConsumerFile, ConsumerFiles
from driftaudit.usage.surface_uses.dockerfile import scan_dockerfile
from driftaudit.usage.surface_uses.json import scan_json
from driftaudit.usage.surface_uses.prefixes import Prefixes, detect_prefixes, norm_prefix
from driftaudit.usage.surface_uses.python_files import PyFile, find_all, py_candidates
from driftaudit.usage.surface_uses.python_scan import Helper, PendingCall, resolve_helpers
from driftaudit.usage.surface_uses.records import SurfaceUsages
from driftaudit.usage.surface_uses.shell import ShellScan
from driftaudit.usage.surface_uses.sink import ENV_NAME, Sink, Text
from driftaudit.usage.surface_uses.toml import scan_toml

_SHEBANG = re.compile(r"#![^\n]*\b(?:ba|da|k|z)?sh\b")
# what a config file must name (any case) to be read: substring tests on its casefolded
# text (an alternation with re.I tries every offset: 9x slower on SpecForge's JSON files)
_CONFIG_WORDS = ("sgl", "server_args", "server-args", "launch_server", "curl")


def _scan_yaml(sink: Sink) -> None:
    from driftaudit.usage.surface_uses.yaml import scan_yaml  # PyYAML: only when a file needs it

    scan_yaml(sink)


_SCANNERS: dict[str, Callable[[Sink], None]] = {
    "shell": lambda sink: ShellScan(sink, "shell").scan(),
    "dockerfile": scan_dockerfile,
    "yaml": _scan_yaml,
    "json": scan_json,
    "toml": scan_toml,
}


def env_names_spelled(files: ConsumerFiles) -> set[str]:
    """Every `SGLANG_*`/`SGL_*` name the consumer's files spell: the env-var usages the
    scanners find name some of them (a cold run reads the trees' entries for them ahead,
    `store/ahead.py`)."""
    names: set[str] = set()
    for file in files:
        text = file.text
        if text and "SGL" in text:
            names.update(ENV_NAME.findall(text))
    return names


def scanner_of(name: str) -> str | None:
    """Which scanner reads a file, by its name ("maybe-shell": an extensionless script
    whose shebang decides)."""
    lower = name.lower()
    if lower.endswith((".py", ".ipynb")):  # a notebook's text is its code cells
        return "python"
    if lower.endswith((".sh", ".bash")):
        return "shell"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".toml"):
        return "toml"
    if lower.startswith(("dockerfile", "containerfile")) or lower.endswith(
        (".dockerfile", ".containerfile")
    ):
        return "dockerfile"
    if "." not in name:
        return "maybe-shell"
    return None


def _candidates(files: ConsumerFiles) -> list[tuple[ConsumerFile, str, str]]:
    found = []
    for entry in files:
        kind = scanner_of(entry.rel.rpartition("/")[2])
        if kind is None:
            continue
        text = entry.text
        if text is None:
            continue
        if kind == "maybe-shell":
            if not _SHEBANG.match(text[:128]):
                continue
            kind = "shell"
        found.append((entry, kind, text))
    return found


def scan_surfaces(
    root: Path | ConsumerFiles, prefixes: list[str] | None = None, exclude: list[str] | None = None
) -> SurfaceUsages:
    """Every place in the consumer (a folder, or its index) that touches sglang's CLI flags,
    env vars or HTTP routes."""
    files = root if isinstance(root, ConsumerFiles) else ConsumerFiles(Path(root), exclude)
    candidates = _candidates(files)
    configured = {norm_prefix(p) for p in prefixes or []} - {""}
    detected = detect_prefixes(files.root, {e.rel: text for e, _, text in candidates})
    result = SurfaceUsages(prefixes=sorted(configured | set(detected)))
    wrap = Prefixes(result.prefixes)
    helpers: dict[str, Helper] = {}
    pending: list[PendingCall] = []
    python: dict[str, PyFile] = {}
    for entry, kind, text in candidates:
        if kind == "python":
            plain, scoped, launch = py_candidates(text, wrap)
            if plain or scoped:
                _first_pass(files, entry, result, wrap, (plain, scoped, launch), helpers, pending)
            continue
        if kind in ("yaml", "json", "toml") and not (
            _names_sglang(text) or any(p in text for p in wrap.dash)
        ):
            continue
        _text_pass(entry, kind, text, result, wrap)
    calls = [name + "(" for name in sorted(helpers)]
    for entry, kind, text in candidates if calls else ():
        offsets = [
            at
            for call in calls
            for at in find_all(text, call)
            if not (text[at - 1 : at].isalnum() or text[at - 1 : at] == "_")
        ]
        if kind == "python" and offsets:
            file = python.get(entry.rel) or python.setdefault(
                entry.rel, PyFile(entry, result, wrap)
            )
            _guarded(files, entry, file.scan, [], offsets, False, {}, pending, rescan=True)
    resolve_helpers(pending, helpers, result)
    result.flags = _dedupe(result.flags, lambda u: (u.line, u.column, u.flag, u.context))
    result.envs = _dedupe(result.envs, lambda u: (u.line, u.column, u.name))
    result.urls = _dedupe(
        result.urls, lambda u: (u.line, u.column, u.route, u.method, tuple(u.payload_keys))
    )
    return result


def _names_sglang(text: str) -> bool:
    folded = text.casefold()
    return any(word in folded for word in _CONFIG_WORDS)


def _first_pass(files, entry, result, wrap, candidates, helpers, pending) -> None:
    """A Python file's own pass: what it yields depends on its text and the wrapping
    prefixes only (helpers of other files are read in the second pass), so it is kept
    per file content (`ConsumerFile.derived`) and an unchanged file is not read again."""

    def compute() -> tuple:
        part = SurfaceUsages(prefixes=result.prefixes)
        own_helpers: dict[str, Helper] = {}
        own_pending: list[PendingCall] = []
        PyFile(entry, part, wrap).scan(*candidates, own_helpers, own_pending)
        return part.flags, part.envs, part.urls, own_helpers, own_pending

    try:
        found = entry.derived("surfaces:" + "|".join(result.prefixes), compute, tuple)
    except (RecursionError, MemoryError) as exc:  # deeper than the visitor's stack
        files.fail(entry, exc)
        return
    flags, envs, urls, own_helpers, own_pending = found
    _add(result, flags, envs, urls)
    helpers.update(own_helpers)
    pending += own_pending


def _text_pass(entry: ConsumerFile, kind: str, text: str, result, wrap: Prefixes) -> None:
    """A shell script, Dockerfile or config file: what it yields depends on its text and
    the wrapping prefixes only, so it is kept per file content (`ConsumerFile.derived`)."""

    def compute() -> tuple:
        part = SurfaceUsages(prefixes=result.prefixes)
        _SCANNERS[kind](Sink(entry.rel, Text(text), part, wrap))
        return part.flags, part.envs, part.urls

    key = f"surfaces-{kind}:" + "|".join(result.prefixes)
    _add(result, *entry.derived(key, compute, tuple))


def _add(result: SurfaceUsages, flags: list, envs: list, urls: list) -> None:
    """A file's own part (kept per file) into the consumer's surfaces."""
    result.flags += flags
    result.envs += envs
    result.urls += urls


def _guarded(files: ConsumerFiles, entry: ConsumerFile, scan: Callable, *args, **kwargs) -> None:
    """Run a Python scan; code nested deeper than the visitor's stack is a parse failure."""
    try:
        scan(*args, **kwargs)
    except (RecursionError, MemoryError) as exc:
        files.fail(entry, exc)


def _dedupe(items: list, key: Callable) -> list:
    seen: set = set()
    out = []
    for item in sorted(items, key=lambda u: (u.path, u.line, u.column)):
        k = (item.path, *key(item))
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out
