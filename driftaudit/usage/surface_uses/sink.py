"""What every surface scanner shares: the patterns naming sglang (env vars, flags,
launchers, config sections), offset -> (line, column) lookup, and the `Sink` that turns
a hit at an offset of one file into a record.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from driftaudit.usage.surface_uses.prefixes import Prefixes
from driftaudit.usage.surface_uses.records import EnvUsage, FlagUsage, SurfaceUsages, UrlUsage

ENV_NAME = re.compile(r"(?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*")
ENV_ASSIGN = re.compile(r"((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)\+?=")
ENV_ASSIGN_IN_TEXT = re.compile(r"(?<![A-Za-z0-9_])((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)=")
ENV_READ = re.compile(r"\$\{?((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)")
ENV_JSON_KEY = re.compile(r"""["']((?:SGLANG|SGL)_[A-Z0-9][A-Z0-9_]*)["']\s*:""")
FLAG = re.compile(r"--[A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9])?")
SHELL_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
VAR_REF = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
LAUNCH_MODULES = {"sglang.launch_server", "sglang_router.launch_server"}
LAUNCHER_TEXT = re.compile(r"sglang(?:_router)?\.launch_server\b|\bsglang[ \t]+serve\b")
SECTION = re.compile(
    r"(?:sglang|sgl)(?:[_-](?:server[_-])?(?:args|arguments|kwargs|config|configs|options"
    r"|params|settings|overrides|server|engine[_-]args))?|(?:sglang[_-])?server[_-]args",
    re.I,
)
OVERRIDES = re.compile(
    r"overrides|server[_-]args|args|kwargs|engine[_-]args|(?:sglang|sgl)[_-]args", re.I
)
ENV_SECTION = re.compile(r"env|envs|environment|env[_-]?vars|extra[_-]?envs?", re.I)
ARGV_KEYS = {"args", "arguments", "argv", "command", "cmd", "entrypoint"}
PLACEHOLDER = "\x00"  # a token that is not a literal (an f-string field, a variable)


class Text:
    """A file's text with offset -> (line, column) lookup, both 1-based."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1

    def offset(self, line: int, column0: int) -> int:
        return self.starts[line - 1] + column0


@dataclass
class FlagHit:
    index: int  # token index
    flag: str
    written: str
    prefix: str | None
    value: str | None


class Sink:
    """Collects the usages of one file, with its path and position lookup."""

    def __init__(self, rel: str, text: Text, out: SurfaceUsages, prefixes: Prefixes):
        self.rel = rel
        self.text = text
        self.out = out
        self.prefixes = prefixes

    def flag(self, offset: int, hit: FlagHit, context: str) -> None:
        line, column = self.text.pos(offset)
        self.out.flags.append(
            FlagUsage(self.rel, line, column, hit.flag, hit.written, hit.prefix, context, hit.value)
        )

    def env(self, offset: int, name: str, kind: str, context: str) -> None:
        line, column = self.text.pos(offset)
        self.out.envs.append(EnvUsage(self.rel, line, column, name, kind, context))

    def url(self, offset: int, route: str, method: str | None, keys: list[str],
            alternatives: list[str] | None = None) -> None:  # fmt: skip
        line, column = self.text.pos(offset)
        usage = UrlUsage(self.rel, line, column, route, method, list(keys), alternatives or [])
        self.out.urls.append(usage)
