"""Flags in a command line, whatever it was written in (shell words, a Python argv
list, a YAML/JSON sequence): a flag is sglang's when it follows an sglang launcher
(`python -m sglang.launch_server`, `sglang serve`, `sglang_router.launch_server`) or
carries a wrapping prefix (anywhere).
"""

from __future__ import annotations

from driftaudit.usage.surface_uses.prefixes import Prefixes
from driftaudit.usage.surface_uses.sink import (
    FLAG,
    LAUNCH_MODULES,
    PLACEHOLDER,
    FlagHit,
)


def is_launcher(tokens: list[str], i: int) -> int:
    """Index of the last token of an sglang launcher starting at token i, else -1."""
    token = tokens[i]
    if token in LAUNCH_MODULES or token.endswith("/sglang.launch_server"):
        return i
    if token.rsplit("/", 1)[-1] == "sglang" and i + 1 < len(tokens) and tokens[i + 1] == "serve":
        return i + 1
    return -1


def has_launcher(tokens: list[str]) -> bool:
    return any(is_launcher(tokens, i) >= 0 for i in range(len(tokens)))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _clean_value(value: str) -> str | None:
    if not value or PLACEHOLDER in value or "$" in value or "`" in value:
        return None
    return value


def argv_flags(tokens: list[str], prefixes: Prefixes, launched: bool = False) -> list[FlagHit]:
    """Flags among tokens: wrapped ones anywhere, the others after an sglang launcher
    (or all of them when `launched`: the tokens are known to reach sglang's parser)."""
    hits: list[FlagHit] = []
    active = launched
    skip_to = -1
    for i, token in enumerate(tokens):
        if i <= skip_to:
            continue
        last = is_launcher(tokens, i)
        if last >= 0:
            active = True
            skip_to = last
            continue
        if not token.startswith("--"):
            continue
        name, eq, inline = token.partition("=")
        if not eq:
            name = name.rstrip(".,;:!?)]}'\"")  # prose: "set --sglang-tokenizer-path."
        if not FLAG.fullmatch(name):
            continue
        wrapped = prefixes.split_flag(name)
        if wrapped:
            flag, prefix = wrapped
        elif active:
            flag, prefix = name, None
        else:
            continue
        value = None
        if eq:
            value = _clean_value(inline)
        elif i + 1 < len(tokens):
            nxt = tokens[i + 1]
            if not (nxt.startswith("-") and not _is_number(nxt)):
                value = _clean_value(nxt)
        hits.append(FlagHit(i, flag, name, prefix, value))
    return hits
