"""Which findings a run reports, as ruff selects rules: `select`, `ignore` and
`extend-select` (codes or prefixes) and `per-file-ignores` (gitignore-style globs,
relative to the consumer root -> codes or prefixes; `!glob`: every file it does not match).

Layers as in ruff: the config's settings, then the command line's; a `--select` starts
the selection again (the config's `select` and `ignore` no longer count), `--ignore`
and `--extend-select` add to what the config says. Applied once, by the CLI, after the
gate (a suppression of an ignored code is still used) and before the report; the
findings cache stores the pipeline's findings, before any selection.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pathspec

from driftaudit.codes import selected
from driftaudit.findings import Finding


@dataclass
class Selection:
    select: list[str] = field(default_factory=list)  # empty: every code
    ignore: list[str] = field(default_factory=list)
    per_file: list[tuple[str, list[str]]] = field(default_factory=list)  # (glob, codes)

    @classmethod
    def layered(
        cls,
        config,
        select: list[str],
        ignore: list[str],
        extend_select: list[str],
    ) -> Selection:
        """The config's selection (`Config`), then the command line's (validated codes)."""
        if select:
            chosen, dropped = list(select), list(ignore)
        else:
            chosen, dropped = list(config.select), [*config.ignore, *ignore]
        if chosen:  # with every code on, extend-select adds nothing
            chosen += [*config.extend_select, *extend_select]
        return cls(chosen, dropped, list(config.per_file_ignores.items()))

    def __post_init__(self) -> None:
        self._specs = [
            (_spec(pattern), pattern.startswith("!"), codes) for pattern, codes in self.per_file
        ]

    def keeps(self, finding: Finding) -> bool:
        code = finding.code.code
        if not selected(code, self.select, self.ignore):
            return False
        for spec, negated, codes in self._specs:
            if spec.match_file(finding.path) != negated and not selected(code, None, codes):
                return False  # the file's pattern ignores this code
        return True

    def apply(self, findings: list[Finding]) -> list[Finding]:
        return [f for f in findings if self.keeps(f)]


def _spec(pattern: str) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern.removeprefix("!")])
