"""The baseline: findings a team has accepted, so `check` fails only on new ones.

An entry is a fingerprint of (rule, path, symbol, the finding's source line with its
whitespace collapsed): it survives lines inserted above or below and re-indentation,
and goes stale when the line itself changes. Identical lines count: two accepted
findings on two identical lines need two entries. Entries that match no finding any
more are reported as DA003 (info).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit import __version__
from driftaudit.check.sourcelines import line_text
from driftaudit.codes import STALE_BASELINE_ENTRY
from driftaudit.errors import DriftauditError
from driftaudit.findings import Finding

DEFAULT_BASELINE = ".driftaudit-baseline.json"
FORMAT_VERSION = 1


def fingerprint(finding: Finding, root: Path) -> str:
    # the text of the line where the usage starts (the statement or call a keyword is
    # in): baselines written before findings pointed at the keyword still match
    text = " ".join(line_text(root, finding.path, finding.fix_at[0]).split())
    key = "\0".join((finding.code.code, finding.path, finding.symbol, text))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass
class Baseline:
    entries: list[dict] = field(default_factory=list)  # fingerprint, rule, path, symbol, line

    @classmethod
    def load(cls, path: Path) -> Baseline:
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            entries = data["findings"]
            if not all(
                isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in entries
            ):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            raise DriftauditError(
                f"{path}: not a driftaudit baseline (rewrite it with --update-baseline)"
            ) from None
        return cls(entries)

    @classmethod
    def of(cls, findings: list[Finding], root: Path) -> Baseline:
        return cls(
            [
                {
                    "fingerprint": fingerprint(f, root),
                    "rule": f.code.code,
                    "path": f.path,
                    "symbol": f.symbol,
                    "line": f.line,
                }
                for f in findings
            ]
        )

    def write(self, path: Path) -> None:
        document = {
            "tool": {"name": "driftaudit", "version": __version__},
            "version": FORMAT_VERSION,
            "findings": sorted(self.entries, key=lambda e: (e["path"], e["line"], e["rule"])),
        }
        try:
            path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise DriftauditError(f"cannot write {path}: {exc.strerror}") from None

    def split(
        self, findings: list[Finding], root: Path
    ) -> tuple[list[Finding], list[Finding], list[Finding]]:
        """(new findings, known findings, DA003 findings for stale entries)."""
        remaining = Counter(e["fingerprint"] for e in self.entries)
        new, known = [], []
        for finding in findings:
            key = fingerprint(finding, root)
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
                        int(entry.get("line", 1) or 1),
                        1,
                        entry.get("symbol", ""),
                        f"stale baseline entry: no {entry.get('rule', '?')} finding matches it "
                        "any more (--update-baseline drops it)",
                    )
                )
        return new, known, stale
