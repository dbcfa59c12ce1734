"""Fix edits for ServerArgs settings and environment variables sglang renamed: the flag
as the consumer wrote it (`--sglang-cuda-graph-bs` in a script, `sglang_cuda_graph_bs` as
a wrapped name or a config key, `--cuda-graph-bs` in an argv list) respelled as the new
flag, a `ServerArgs(old=...)` keyword renamed, an env var renamed where it is set or read.

Safe when sglang itself maps the old setting to the new one 1:1 (the same field's new
flag, a deprecated alias, a deprecation naming it); unsafe when the replacement was only
inferred from name and help similarity. A replacement that needs a value
(`--x=tc_piecewise`) is no rename: no edit.
"""

from __future__ import annotations

from driftaudit.drift.env_renames import EnvReplacement
from driftaudit.drift.serverargs import FlagRemoved, ServerArgFieldRemoved, ServerArgsDrift
from driftaudit.findings import Fix
from driftaudit.usage.surfaces import FlagUsage

KIND = "replace-text"


def respell(written: str, old_flag: str, new_flag: str) -> str | None:
    """`--sglang-cuda-graph-bs` (wrapping `--cuda-graph-bs`) -> `--sglang-cuda-graph-bs-decode`
    for `--cuda-graph-bs-decode`; `sglang_cuda_graph_bs` -> `sglang_cuda_graph_bs_decode`.
    None when the written form does not end with the old flag in a known spelling."""
    old, new = old_flag.removeprefix("--"), new_flag.removeprefix("--")
    if not new or "=" in new or " " in new:
        return None
    for before, after in ((old, new), (old.replace("-", "_"), new.replace("-", "_"))):
        if written.endswith(before):
            return written[: len(written) - len(before)] + after
    return None


def _flag_is_alias(drift: ServerArgsDrift, change: FlagRemoved) -> bool:
    """Does sglang map the removed flag onto its replacement 1:1?"""
    name = drift.old.flags.get(change.flag)
    twin = drift.new.fields.get(name or "")
    if twin is not None and twin.flag == change.replacement:
        return True  # the same field under a new flag
    alias = drift.replacements.flag_replacement(change.flag)
    if alias is not None and alias[0] == change.replacement:
        return True
    field = drift.old.fields.get(name or "")
    suggestion = drift.replacements.suggest(field) if field is not None else None
    return bool(suggestion and suggestion.alias and suggestion.flag == change.replacement)


def flag_fix(usage: FlagUsage, change: FlagRemoved, drift: ServerArgsDrift) -> Fix | None:
    """`use --new`, with the edit that respells the flag where the consumer wrote it."""
    if not change.replacement:
        return None
    description = f"use `{change.replacement}`"
    if usage.context == "python-attr":
        # a dest read in Python (`cfg.sglang_x`, `getattr(args, "sglang_x")`, a dataclass
        # field) is the consumer's own name for the setting, spelled again in its
        # declaration, constructor keywords and reads: renaming one spelling breaks the
        # others (seen on miles' run config), so a human renames it everywhere
        return Fix(description + f" (rename `{usage.written}` wherever the consumer uses it)")
    new = respell(usage.written, usage.flag, change.replacement)
    if new is None or new == usage.written:
        return Fix(description)
    edit = {"kind": KIND, "old": usage.written, "new": new}
    safety = "safe" if _flag_is_alias(drift, change) else "unsafe"
    return Fix(description, edit, safety)


def keyword_fix(keyword: str, change: ServerArgFieldRemoved, kind: str) -> Fix | None:
    """`ServerArgs(old=...)` -> `ServerArgs(new=...)` (kind rename-keyword), `{"old": ...}`
    -> `{"new": ...}` (rename-key), when a field replaces the old one as is."""
    suggestion = change.suggestion
    if change.replacement:
        new, safety = change.replacement, "safe"  # its flag now sets that field
    elif suggestion is not None and suggestion.value is None:
        new, safety = suggestion.field, "safe" if suggestion.alias else "unsafe"
    else:
        return None
    edit = {"kind": kind, "old": keyword, "new": new}
    return Fix(f"set `{new}` instead", edit, safety)


def env_fix(name: str, found: EnvReplacement | None) -> Fix | None:
    """`use SGLANG_Y`, with the edit that renames the variable where the consumer sets or
    reads it; none when the new variable means the opposite (the value must change)."""
    if found is None:
        return None
    if found.inverted:
        return Fix(f"set `{found.name}` to the opposite value instead")
    edit = {"kind": KIND, "old": name, "new": found.name}
    return Fix(f"use `{found.name}`", edit, "safe" if found.safe else "unsafe")
