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

import re

from driftaudit.drift.env_renames import EnvReplacement
from driftaudit.drift.serverarg_changes import (
    FlagDeprecated,
    FlagRemoved,
    ServerArgFieldRemoved,
    ServerArgsDrift,
)
from driftaudit.findings import Fix
from driftaudit.usage.dest_owners import NameOwners
from driftaudit.usage.surface_uses import FlagUsage

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


def flag_fix(
    usage: FlagUsage,
    change: FlagRemoved,
    drift: ServerArgsDrift,
    owners: NameOwners | None = None,
    generated: tuple[str, int] | None = None,
) -> Fix | None:
    """`use --new`, with the edit that respells the flag where the consumer wrote it; for
    a wrapped dest read in Python, see `dest_fix` (`owners`, `generated`: there)."""
    if not change.replacement:
        return None
    description = f"use `{change.replacement}`"
    if usage.context == "python-attr":
        old_dest = drift.old.flags.get(usage.flag) or ""
        new_dest = drift.new.flags.get(change.replacement)
        new = None
        if new_dest and old_dest and usage.written.endswith(old_dest):
            new = usage.written[: len(usage.written) - len(old_dest)] + new_dest
        safety = "safe" if _flag_is_alias(drift, change) else "unsafe"
        literal = "--" + usage.written.replace("_", "-")  # as the consumer would pass it
        passed = {literal, usage.flag, old_dest}
        current = {change.replacement, respell(literal, usage.flag, change.replacement)}
        current.add(new_dest)
        return dest_fix(
            usage.path,
            usage.written,
            new,
            description,
            safety,
            owners,
            generated,
            (passed, current),
        )
    new = respell(usage.written, usage.flag, change.replacement)
    if new is None or new == usage.written:
        return Fix(description)
    edit = {"kind": KIND, "old": usage.written, "new": new}
    safety = "safe" if _flag_is_alias(drift, change) else "unsafe"
    return Fix(description, edit, safety)


_VALUED = re.compile(r"--[a-z0-9][a-z0-9-]*[ =]<[^>]+>")


def deprecated_fix(
    usage: FlagUsage,
    change: FlagDeprecated,
    drift: ServerArgsDrift,
    owners: NameOwners | None = None,
    generated: tuple[str, int] | None = None,
    read_at: tuple[str, int, str] | None = None,
) -> Fix:
    """A deprecated flag: respelled when the new release keeps it only as an alias that
    stores its own argument into the field of the flag its deprecation names (safe:
    sglang maps it one to one); otherwise no edit, and the fix says why (`read_at`: where
    the consumer's own code reads the wrapped dest, (path, line, name))."""
    alias = next(
        (
            r
            for r in drift.replacements.new_redirects
            if r.source == usage.flag
            and r.value is None
            and r.new_flag
            and drift.new.flags.get(r.new_flag) == r.target
        ),
        None,
    )
    if alias is not None:
        description = f"use `{alias.new_flag}`"
        if usage.context == "python-attr":  # the dest the alias stores into
            old_dest = drift.old.flags.get(usage.flag) or ""
            new = None
            if old_dest and usage.written.endswith(old_dest):
                new = usage.written[: len(usage.written) - len(old_dest)] + alias.target
            literal = "--" + usage.written.replace("_", "-")
            passed = {literal, usage.flag, old_dest}
            current = {alias.new_flag, alias.target, respell(literal, usage.flag, alias.new_flag)}
            return dest_fix(
                usage.path,
                usage.written,
                new,
                description,
                "safe",
                owners,
                generated,
                (passed, current),
            )
        new = respell(usage.written, usage.flag, alias.new_flag)
        if new is None or new == usage.written:
            return Fix(description)
        return Fix(description, {"kind": KIND, "old": usage.written, "new": new}, "safe")
    valued = _VALUED.search(change.note or "")
    if valued:
        why = f"its replacement `{valued.group(0)}` takes a value"
    else:
        why = "sglang maps it onto no other flag one to one"
    if read_at is not None:  # a wrapped flag whose dest the consumer's own code reads
        why += f", and the consumer reads `{read_at[2]}` itself ({read_at[0]}:{read_at[1]})"
    return Fix(f"no automatic fix: {why}; follow the deprecation note by hand")


def dest_fix(
    where: str,
    written: str,
    new: str | None,
    description: str,
    safety: str,
    owners: NameOwners | None,
    generated: tuple[str, int] | None,
    passed: tuple[set, set] = (set(), set()),
) -> Fix:
    """A wrapped dest read in Python (`args.sglang_x`, `getattr(args, "sglang_x")`, a
    class field) in the file `where`: renamed (`new`) only where it is sglang's
    (`generated`: the consumer registers sglang's own flags, and declares no such name
    itself); a name the consumer declares is spelled again in its declaration,
    constructor keywords and reads, so renaming one spelling breaks the others (seen on
    miles' run config): the flag literal (or ServerArgs keyword) it is passed under reaches
    sglang (`passed`: its old spellings, and its new ones), and that literal's own
    finding is the fix, or it already reads as the new one."""
    owners = owners or NameOwners()
    local = [d for d in owners.declared if d[0] == where]
    if generated is not None and owners.declared and not local:
        path, line = owners.declared[0]
        return Fix(
            f"{description} (`{written}` may be the dest of sglang's own flag, registered at "
            f"{generated[0]}:{generated[1]}, but the consumer also declares it at {path}:{line}: "
            "rename by hand the spellings that are sglang's)"
        )
    if owners.declared:
        path, line = (local or owners.declared)[0]
        own = f"`{written}` is the consumer's own name (declared at {path}:{line})"
        for at, line, flag in owners.emitted:
            if flag in passed[0] or flag in passed[1]:
                then = "whose own finding is the fix" if flag in passed[0] else "as it should"
                return Fix(
                    f"{description}: nothing to rename here: {own} and reaches sglang as "
                    f"`{flag}` at {at}:{line}, {then}",
                    covered_by=f"{at}:{line}",
                )
        return Fix(f"{description} ({own}: rename it wherever the consumer uses it)")
    if generated is not None and new is not None and new != written:
        at = f"{generated[0]}:{generated[1]}"
        edit = {"kind": KIND, "old": written, "new": new}
        why = f"the dest of sglang's own flag, as the consumer registers them at {at}"
        return Fix(f"{description}: `{written}` is {why}", edit, safety)
    return Fix(description + f" (rename `{written}` wherever the consumer uses it)")


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
