"""The baseline: findings a team has accepted, so `check` fails only on new ones.

An entry is a fingerprint of (rule, path, symbol, the finding's source line with its
whitespace collapsed): it survives lines inserted above or below and re-indentation,
and goes stale when the line itself changes. Identical lines count: two accepted
findings on two identical lines need two entries. Entries that match no finding any
more are reported as DA003 (info).

The file is read and written as `confined` says: in the consumer tree, a symlink out of
it, a FIFO or a device is an error; a write follows no symlink and replaces the file
atomically. An entry of the wrong shape (a `line` that is not a positive integer, a
`path` that leaves the consumer) is an error that names it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit import __version__
from driftaudit.codes import STALE_BASELINE_ENTRY
from driftaudit.confined import read_bytes, write_bytes
from driftaudit.errors import DriftauditError
from driftaudit.findings import Finding

if TYPE_CHECKING:
    from driftaudit.usage.files import ConsumerFiles

DEFAULT_BASELINE = ".driftaudit-baseline.json"
FORMAT_VERSION = 1


def fingerprint(finding: Finding, files: ConsumerFiles) -> str:
    # the text of the line where the usage starts (the statement or call a keyword is
    # in): baselines written before findings pointed at the keyword still match
    text = " ".join(files.line(finding.path, finding.fix_at[0]).split())
    key = "\0".join((finding.code.code, finding.path, finding.symbol, text))
    # a name that is not UTF-8 hashes as its bytes
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@dataclass
class Baseline:
    entries: list[dict] = field(default_factory=list)  # fingerprint, rule, path, symbol, line

    @classmethod
    def load(cls, path: Path, root: Path) -> Baseline:
        """The baseline at `path` (empty when there is none); `root`: the consumer."""
        data = read_bytes(root, path, "baseline")
        if data is None:
            return cls()
        try:
            document = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError, MemoryError):  # UnicodeDecodeError is one
            raise DriftauditError(f"{path}: {_NOT_A_BASELINE}") from None
        entries = document.get("findings") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise DriftauditError(f"{path}: {_NOT_A_BASELINE}")
        for number, entry in enumerate(entries, 1):
            problem = _entry_problem(entry)
            if problem is not None:
                raise DriftauditError(f"{path}: entry {number} {problem} ({_REWRITE})")
        return cls(entries)

    @classmethod
    def of(cls, findings: list[Finding], files: ConsumerFiles) -> Baseline:
        return cls(
            [
                {
                    "fingerprint": fingerprint(f, files),
                    "rule": f.code.code,
                    "path": f.path,
                    "symbol": f.symbol,
                    "line": f.line,
                }
                for f in findings
            ]
        )

    def write(self, path: Path, root: Path) -> None:
        document = {
            "tool": {"name": "driftaudit", "version": __version__},
            "version": FORMAT_VERSION,
            "findings": sorted(self.entries, key=lambda e: (e["path"], e["line"], e["rule"])),
        }
        text = json.dumps(document, indent=2) + "\n"
        write_bytes(root, path, text.encode("utf-8"), "baseline")

    def split(
        self, findings: list[Finding], files: ConsumerFiles
    ) -> tuple[list[Finding], list[Finding], list[Finding]]:
        """(new findings, known findings, DA003 findings for stale entries)."""
        remaining = Counter(e["fingerprint"] for e in self.entries)
        new, known = [], []
        for finding in findings:
            key = fingerprint(finding, files)
            if remaining[key] > 0:
                remaining[key] -= 1
                known.append(finding)
            else:
                new.append(finding)
        stale = []
        for entry in self.entries:
            if remaining[entry["fingerprint"]] > 0:
                remaining[entry["fingerprint"]] -= 1
                stale.append(
                    Finding(
                        STALE_BASELINE_ENTRY,
                        entry.get("path", "?"),
                        entry.get("line", 1),
                        1,
                        entry.get("symbol", ""),
                        f"stale baseline entry: no {entry.get('rule', '?')} finding matches it "
                        "any more (--update-baseline drops it)",
                    )
                )
        return new, known, stale


_REWRITE = "rewrite it with --update-baseline"
_NOT_A_BASELINE = f"not a driftaudit baseline ({_REWRITE})"
# the fields an entry may hold besides its fingerprint, and what each must be
_FIELDS = {"rule": str, "path": str, "symbol": str, "line": int}


def _entry_problem(entry: object) -> str | None:
    """What is wrong with one entry, or None. `path` and `line` end up in the report (a
    stale entry is a DA003 finding there), so they must be a place in the consumer."""
    if not isinstance(entry, dict):
        return "is not an object"
    if not isinstance(entry.get("fingerprint"), str):
        return "has no fingerprint"
    for name, kind in _FIELDS.items():
        value = entry.get(name)
        if name in entry and (not isinstance(value, kind) or isinstance(value, bool)):
            return f"has a {name} that is not {'an integer' if kind is int else 'a string'}"
    if entry.get("line", 1) < 1:
        return "has a line below 1"
    path = entry.get("path", "?")
    parts = path.replace("\\", "/").split("/")
    if path.startswith("/") or ".." in parts or "\0" in path or not path.strip():
        return f"has a path that is not in the consumer ({path!r})"
    return None
