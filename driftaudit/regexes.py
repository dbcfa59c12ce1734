"""What every match of a regular expression contains: the plain text a substring test
(`in`, fast, in C) can look for before the regex runs. `re` has no such hint of its own
for a pattern that does not start with its literal text, so this reads it from the
pattern as `re` parses it (a private module: any surprise gives no hint)."""

from __future__ import annotations

import functools
import re


@functools.cache
def required_text(regex: str) -> str | None:
    """The longest run of plain characters at the top level of `regex`: every match
    contains it (None: there is none, or the pattern ignores case). Read from the
    pattern as `re` parses it (a private module: any surprise gives None)."""
    try:
        try:
            from re import _constants as constants
            from re import _parser as parser
        except ImportError:  # Python 3.10
            import sre_constants as constants
            import sre_parse as parser
        parsed = parser.parse(regex)
        flags = getattr(getattr(parsed, "state", None), "flags", None)
        if flags is None:
            flags = parsed.pattern.flags
        if flags & re.IGNORECASE:
            return None
        best, run = "", []
        for op, argument in parsed:
            if op is constants.LITERAL:
                run.append(chr(argument))
            else:  # a class, a group, a repeat or an anchor: the run ends here
                best, run = max(best, "".join(run), key=len), []
        best = max(best, "".join(run), key=len)
    except Exception:  # noqa: BLE001 -- no hint: every line is searched, as before
        return None
    return best or None


def required_bytes(pattern: re.Pattern[bytes]) -> bytes | None:
    """`required_text` of a bytes pattern (every byte read as the character of that code)."""
    text = required_text(pattern.pattern.decode("latin-1"))
    if text is None or pattern.flags & re.IGNORECASE:
        return None
    return text.encode("latin-1")
