"""Wrapping prefixes: a consumer that forwards flags to sglang under its own prefix
(`--sglang-tp-size` -> `--tp-size`, `args.sglang_tp_size`).

Those passed in (`--wrap-prefixes`, config) are used as given; `detect_prefixes` adds
`--sglang-` as soon as one `--sglang-<letter>` flag appears, and another
`--<words>-sglang-` or `--[<words>-]sgl-` prefix only when a Python keyword or
assignment named `*prefix*` spells it (`flag_prefix="eval-sglang"`), or when two distinct
flags carry it and one of them is also written with `--sglang-` or is a hallmark sglang
flag (`--tp-size`, ...).
"""

from __future__ import annotations

import re
from pathlib import Path

_SGLANG_PREFIX = re.compile(r"--sglang-([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)")
_OTHER_PREFIX = re.compile(
    r"--((?:[a-z][a-z0-9]*-)*?(?:sglang|sgl))-([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)"
)
_HALLMARK_FLAGS = {
    "model-path", "tp-size", "dp-size", "ep-size", "mem-fraction-static", "attention-backend",
    "context-length", "chunked-prefill-size", "max-running-requests", "cuda-graph-max-bs",
    "enable-dp-attention", "tokenizer-path", "trust-remote-code", "port", "host",
}  # fmt: skip
_PREFIX_KEYWORD = re.compile(r"""\b\w*prefix\w*\s*[=:]\s*["'](-{0,2}[a-z][\w-]*)["']""", re.I)
_PREFIX_CORE = re.compile(r"(?:[a-z][a-z0-9]*-)*(?:sglang|sgl)")


def norm_prefix(prefix: str) -> str:
    core = prefix.strip().strip("-_").replace("_", "-")
    return f"--{core}-" if core else ""


def detect_prefixes(root: Path, texts: dict[str, str]) -> list[str]:
    """Wrapping prefixes evident in the consumer's texts (relpath -> text).

    `--sglang-` when one `--sglang-<letter>` flag appears anywhere. Another
    `--<words>-sglang-` or `--[<words>-]sgl-` prefix only when a Python keyword or
    assignment named `*prefix*` spells it (`flag_prefix="eval-sglang"`,
    `dest_prefix="eval_sglang_"`), or when two distinct flags carry it and one of them
    is also written `--sglang-<flag>` or is a hallmark sglang flag (`--tp-size`, ...):
    `--dashboard-sglang-scrape-mode` is the consumer's own flag, not a wrapper.
    `root` names the tree the texts come from (unused).
    """
    del root
    found: set[str] = set()
    seen: dict[str, set[str]] = {}
    wrapped: set[str] = set()
    for rel, text in texts.items():
        if "sgl" not in text:
            continue
        at = text.find("--sglang-")
        while at >= 0:
            m = _SGLANG_PREFIX.match(text, at)
            before = text[at - 1] if at else ""
            if m and not (before.isalnum() or before in ("-", "_")):
                found.add("--sglang-")
                wrapped.add(m.group(1))
            at = text.find("--sglang-", at + 9)
        at = text.find("-sgl")
        while at >= 0:
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "-"):
                start -= 1
            m = _OTHER_PREFIX.match(text, start)
            if m and (start == 0 or text[start - 1] != "_"):
                prefix = f"--{m.group(1)}-"
                if prefix != "--sglang-":
                    seen.setdefault(prefix, set()).add(m.group(2))
            at = text.find("-sgl", at + 4)
        if rel.endswith(".py") and "prefix" in text:
            at = text.find("prefix")
            while at >= 0:
                line_start = text.rfind("\n", 0, at) + 1
                line_end = text.find("\n", at)
                line = text[line_start : line_end if line_end >= 0 else len(text)]
                if "sgl" in line:
                    for m in _PREFIX_KEYWORD.finditer(line):
                        core = m.group(1).strip("-_").replace("_", "-")
                        if _PREFIX_CORE.fullmatch(core):
                            found.add(f"--{core}-")
                at = text.find("prefix", line_start + len(line) + 1) if line_end >= 0 else -1
    for prefix, flags in seen.items():
        if len(flags) >= 2 and (flags & wrapped or flags & _HALLMARK_FLAGS):
            found.add(prefix)
    return sorted(found)


class Prefixes:
    def __init__(self, prefixes: list[str]):
        self.dash = sorted({p for p in prefixes if p}, key=len, reverse=True)
        self.py = [(p.strip("-").replace("-", "_") + "_", p) for p in self.dash]
        self.kebab = [(p.strip("-") + "-", p) for p in self.dash]

    def split_flag(self, name: str) -> tuple[str, str] | None:
        """`--sglang-tp-size` -> ("--tp-size", "--sglang-")."""
        for prefix in self.dash:
            if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isalpha():
                return "--" + name[len(prefix) :], prefix
        return None

    def split_name(self, name: str) -> tuple[str, str] | None:
        """`sglang_tp_size` / `sglang-tp-size` -> ("--tp-size", "--sglang-")."""
        for forms in (self.py, self.kebab):
            for form, prefix in forms:
                if name.startswith(form) and name[len(form) : len(form) + 1].isalpha():
                    return "--" + name[len(form) :].replace("_", "-"), prefix
        return None
