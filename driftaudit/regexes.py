"""Regular expressions: what every match of one contains, and the engine that runs the
regexes of packs.

`required_text` is the plain text a substring test (`in`, fast, in C) can look for
before the regex runs. `re` has no such hint of its own for a pattern that does not
start with its literal text, so this reads it from the pattern as `re` parses it (a
private module: any surprise gives no hint).

`bounded` compiles a pack's regex for RE2 (google-re2), whose matching time is linear in
the text for every pattern: no backtracking, so no pattern (`^(a|a)*$`, `(a+)+`) can
make a line cost more than its length times the compiled program's size, which is
capped too. Packs come from the user's `--packs DIR` and run on lines of the consumer,
which anyone who opens a pull request writes. What RE2 cannot run (backreferences,
lookarounds) is refused when the pack is loaded, with the reason.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# The compiled program's size (RE2 instructions) a pack regex may reach: the time per
# character of a line grows with it. The shipped patterns need under 60. The worst
# patterns near the cap (`(?:a*b*){115}c` on random a/b lines of MAX_TEXT_LINE, 4,000,
# characters, packs.py) take 40 ms on the line that builds RE2's DFA, 0.4 ms a line on
# average; a backtracking engine never finishes them.
MAX_PROGRAM = 500
# RE2's memory budget for one regex (program and DFA cache): beyond it compiling fails.
_MAX_MEM = 8 << 20


class RegexRefused(ValueError):
    """A pack regex that RE2 cannot run in its bound: the message says why."""


@functools.cache
def bounded(regex: str) -> Any:
    """`regex` compiled for RE2 (an object with `search(text)` whose match has `start()`
    and `start(group)`, positions in characters), or RegexRefused."""
    import re2  # google-re2: only where packs have text patterns

    options = re2.Options()
    options.log_errors = False  # the refusal is ours to say, on one line
    options.max_mem = _MAX_MEM
    try:
        compiled = re2.compile(regex, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "does not compile"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", errors="replace")
        reason = repr(str(reason))[1:-1]  # it quotes the pattern: one line, escaped
        raise RegexRefused(
            f"regex {regex!r} cannot run in linear time ({reason}): RE2 syntax, without "
            "backreferences or lookarounds (a text pattern's `unless` excludes lines)"
        ) from None
    if compiled.programsize > MAX_PROGRAM:
        raise RegexRefused(
            f"regex {regex!r} compiles to {compiled.programsize} RE2 instructions, more "
            f"than {MAX_PROGRAM}: split it, or bound its repetitions"
        )
    return compiled


@functools.cache
def required_text(regex: str) -> str | None:
    """The longest run of plain characters at the top level of `regex`: every match
    contains it (None: there is none, or the pattern ignores case). Read from the
    pattern as `re` parses it (a private module: any surprise gives None)."""
    try:
        try:
            # private modules of 3.11+ (the except takes 3.10, mypy's target)
            from re import _constants as constants  # type: ignore[attr-defined]
            from re import _parser as parser  # type: ignore[attr-defined]
        except ImportError:  # Python 3.10
            import sre_constants as constants
            import sre_parse as parser
        parsed = parser.parse(regex)
        flags = getattr(getattr(parsed, "state", None), "flags", None)
        if flags is None:
            flags = parsed.pattern.flags
        if flags & re.IGNORECASE:
            return None
        runs: list[str] = []
        run = _literal_runs(parsed, constants, runs, [])
        runs.append("".join(run))
    except Exception:  # noqa: BLE001 -- no hint: every line is searched, as before
        return None
    return max(runs, key=len) or None


def _literal_runs(items, constants, runs: list[str], run: list[str]) -> list[str]:
    """Collect into `runs` the runs of literal characters of a concatenation; a group
    without flags (`(?:...)`, `(?P<at>...)`) continues the run it stands in. Returns
    the run still open at the end."""
    for op, argument in items:
        if op is constants.LITERAL:
            run.append(chr(argument))
        elif op is constants.SUBPATTERN and not argument[1] and not argument[2]:
            run = _literal_runs(argument[-1], constants, runs, run)
        else:  # a class, a branch, a repeat, an anchor, a flagged group: the run ends
            runs.append("".join(run))
            run = []
    return run


def required_bytes(pattern: re.Pattern[bytes]) -> bytes | None:
    """`required_text` of a bytes pattern (every byte read as the character of that code)."""
    text = required_text(pattern.pattern.decode("latin-1"))
    if text is None or pattern.flags & re.IGNORECASE:
        return None
    return text.encode("latin-1")
