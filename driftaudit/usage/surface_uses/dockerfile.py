"""Dockerfiles -> env vars (`ENV`, `ARG`, `$X` reads) and flags and URLs in
`RUN`/`CMD`/`ENTRYPOINT` (shell form read as shell, exec form as an argv).
"""

from __future__ import annotations

import json
import re

from driftaudit.usage.surface_uses.shell import ShellScan
from driftaudit.usage.surface_uses.sink import (
    ENV_NAME,
    ENV_READ,
    Sink,
)
from driftaudit.usage.surface_uses.structured import (
    Structured,
)

_DOCKER_INSTRUCTION = re.compile(r"[ \t]*([A-Za-z]+)(?:[ \t]+|$)")
_DOCKER_ENV_PAIR = re.compile(
    r"""(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)(?:=(?:"(?:[^"\\]|\\.)*"|'[^']*'|\S*))?(?=\s|$)"""
)


def scan_dockerfile(sink: Sink) -> None:
    text = sink.text.text
    lines = text.split("\n")
    starts = sink.text.starts
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        first = i  # the logical instruction: continuation lines end with a backslash
        while i < len(lines) - 1 and (
            lines[i].rstrip().endswith("\\") or lines[i].lstrip().startswith("#") and i > first
        ):
            i += 1
        end = starts[i] + len(lines[i])
        m = _DOCKER_INSTRUCTION.match(text, starts[first], end)
        if m:
            _docker_instruction(sink, m.group(1).upper(), m.end(), end)
        i += 1


def _docker_instruction(sink: Sink, keyword: str, start: int, end: int) -> None:
    text = sink.text.text
    body = text[start:end]
    if keyword in ("ENV", "ARG"):
        if keyword == "ENV" and not re.match(r"\s*[A-Za-z_][A-Za-z0-9_]*=", body):
            m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", body)  # legacy ENV NAME value
            names = [(m.group(1), start + m.start(1))] if m else []
        else:
            names = [(m.group(1), start + m.start(1)) for m in _DOCKER_ENV_PAIR.finditer(body)]
        for name, at in names:
            if ENV_NAME.fullmatch(name):
                sink.env(at, name, "set", "dockerfile")
        for r in ENV_READ.finditer(body):
            sink.env(start + r.start(1), r.group(1), "read", "dockerfile")
        return
    if keyword in ("RUN", "CMD", "ENTRYPOINT"):
        stripped = body.strip()
        argv = None
        if stripped.startswith("["):
            try:
                argv = json.loads(stripped.replace("\\\n", " "))
            except ValueError:
                argv = None
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            items = []
            cursor = start
            for a in argv:
                at = text.find(json.dumps(a), cursor, end)
                at = cursor if at < 0 else at + 1
                cursor = at
                items.append((a, at))
            Structured(sink, "dockerfile").argv(items, launched=False)
        else:
            ShellScan(sink, "dockerfile").scan(start, end)
        return
    for r in ENV_READ.finditer(body):
        sink.env(start + r.start(1), r.group(1), "read", "dockerfile")
