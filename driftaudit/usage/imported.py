"""The sglang modules a consumer imports by name: a guess, by a regex over its files'
text, at the models a run will ask for (a cold run builds them ahead, store/ahead.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_IMPORT_RE = re.compile(  # `from sglang.x import a, b` (its first line) or `import sglang.x`
    r"^[ \t]*(?:from[ \t]+(sglang[\w.]*)[ \t]+import[ \t]+\(?([\w, \t]*)"
    r"|import[ \t]+(sglang[\w.]*))",
    re.M,
)


def imported_modules(texts: Iterable[str | None]) -> list[str]:
    """The sglang modules `texts` import by name (and their packages), in first-seen
    order: a guess at the models a run will ask for, extracted by the child ahead."""
    names: dict[str, None] = {}
    for text in texts:
        if not text or "sglang" not in text:
            continue
        for match in _IMPORT_RE.finditer(text):
            module = match.group(1) or match.group(3)
            parts = module.split(".")
            names.update((".".join(parts[:i]), None) for i in range(1, len(parts) + 1))
            for symbol in (match.group(2) or "").split(","):
                words = symbol.split()  # `a as b`: a
                if words:  # `from sglang.srt import managers`: maybe a module
                    names[f"{module}.{words[0]}"] = None
    return list(names)
