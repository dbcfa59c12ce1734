"""Inline suppressions: `# driftaudit: ignore[DA102,DA201]` or `# driftaudit: ignore` on a
finding's line (or on the first line of the call or statement it points into) silences
it. Python comments are found with `tokenize` (a `#` inside a string is not a comment);
shell, YAML, TOML, Dockerfiles and requirement files use `#` comments too and are read
line by line; a notebook's code cells are read as Python, and its suppressions placed
where they stand in the `.ipynb` file, as its findings are. A suppression that silences
nothing is itself reported (DA002), so stale ones do not pile up.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from driftaudit.codes import UNUSED_SUPPRESSION
from driftaudit.findings import Finding
from driftaudit.usage.files import ConsumerFiles

_MARKER = re.compile(
    r"#.*?\bdriftaudit:\s*ignore(?![\w-])(?:\[(?P<codes>[A-Za-z0-9,\s]*)\])?", re.IGNORECASE
)
# files whose comments start with `#`; others cannot carry a suppression
_HASH_COMMENT_SUFFIXES = {
    ".py",
    ".pyi",
    ".sh",
    ".bash",
    ".yaml",
    ".yml",
    ".toml",
    ".txt",
    ".cfg",
    ".ini",
    ".env",
}


@dataclass
class Suppression:
    path: str
    line: int
    column: int
    codes: frozenset[str]  # empty: every code
    length: int = 1  # of the comment, for the region of an unused one
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return not self.codes or code in self.codes


def _parse(comment: str) -> frozenset[str] | None:
    match = _MARKER.search(comment)
    if match is None:
        return None
    codes = match.group("codes") or ""
    return frozenset(c.strip().upper() for c in codes.split(",") if c.strip())


def _python_comments(text: str) -> list[tuple[int, int, str]]:
    try:
        return [
            (token.start[0], token.start[1] + 1, token.string)
            for token in tokenize.generate_tokens(io.StringIO(text).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):  # does not tokenize (DA001): read lines
        return list(_hash_comments(text))  # (not after the comments read so far: twice)


def _hash_comments(text: str):
    for lineno, line in enumerate(text.splitlines(), 1):
        index = line.find("#")
        if index >= 0:
            yield lineno, index + 1, line[index:]


def scan_file(relpath: str, text: str | None, python: bool | None = None) -> list[Suppression]:
    """`python`: whether `text` is Python (default: by the file's name)."""
    if text is None or "driftaudit" not in text.lower():
        return []
    is_python = relpath.endswith((".py", ".pyi")) if python is None else python
    comments = _python_comments(text) if is_python else _hash_comments(text)
    found = []
    for line, column, comment in comments:
        codes = _parse(comment)
        if codes is not None:
            found.append(Suppression(relpath, line, column, codes, len(comment.rstrip())))
    return found


def _is_hash_commented(path: Path) -> bool:
    name = path.name
    return (
        path.suffix in _HASH_COMMENT_SUFFIXES
        or name.startswith("Dockerfile")
        or name.startswith("requirements")
    )


def scan_consumer(files: ConsumerFiles) -> list[Suppression]:
    """Every suppression comment in the consumer's files (its index: excludes and
    .gitignore applied, each file read once per run)."""
    found = []
    for file in files:
        if file.is_notebook:
            found += [_placed(s, file) for s in scan_file(file.rel, file.text, python=True)]
        elif _is_hash_commented(file.path):
            found += scan_file(file.rel, file.text)
    return found


def _placed(suppression: Suppression, file) -> Suppression:
    """A notebook's suppression, moved to where its comment is in the file."""
    line, column = file.place(suppression.line, suppression.column)
    end = file.place(suppression.line, suppression.column + suppression.length)
    length = end[1] - column if end[0] == line else suppression.length
    return Suppression(suppression.path, line, column, suppression.codes, length)


def apply_suppressions(
    findings: list[Finding], suppressions: list[Suppression]
) -> tuple[list[Finding], list[Finding]]:
    """(kept findings, suppressed findings); unused suppressions are added to the kept
    ones as DA002 findings."""
    by_place = {(s.path, s.line): s for s in suppressions}
    kept, silenced = [], []
    for finding in findings:
        # on the finding's line, or on the first line of the call or statement it is in
        suppression = by_place.get((finding.path, finding.line))
        if suppression is None or not suppression.covers(finding.code.code):
            suppression = by_place.get((finding.path, finding.fix_at[0]), suppression)
        if suppression is not None and suppression.covers(finding.code.code):
            suppression.used.add(finding.code.code)
            silenced.append(finding)
        else:
            kept.append(finding)
    for s in suppressions:
        if s.codes:
            unused = sorted(s.codes - s.used)
            if not unused:
                continue
            what = ", ".join(unused)
            message = f"unused suppression: no {what} finding on this line"
        elif s.used:
            continue
        else:
            message = "unused suppression: no finding on this line"
        comment = Finding(UNUSED_SUPPRESSION, s.path, s.line, s.column, "", message)
        comment.end_column = s.column + s.length
        kept.append(comment)
    kept.sort(key=Finding.sort_key)
    return kept, silenced
