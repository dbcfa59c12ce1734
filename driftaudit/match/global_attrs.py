"""DA104 on an attribute protocol: the consumer stores `obj.x` on an object an sglang
module owns (`from sglang.srt.entrypoints.http_server import app; app.x = ...`), `x`
being a name the old release's own code stored on that object (so its code reads it),
and the new release's code no longer stores it (it reads another name now)."""

from __future__ import annotations

import difflib

from driftaudit.drift.protocol import ProtocolAttributeDropped
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.snapshot.owned_globals import stored_attributes
from driftaudit.usage import ReferenceUsage, UsageSet


def protocol_findings(usages: UsageSet, differ) -> list[Finding]:
    stores = [u for u in usages.usages if isinstance(u, ReferenceUsage) and u.store]
    written = {(u.path, u.symbol) for u in stores}
    findings = []
    for usage in stores:
        owner, _, attribute = usage.symbol.rpartition(".")
        module, _, name = owner.rpartition(".")
        old = stored_attributes(differ.old, module, name)
        new = stored_attributes(differ.new, module, name)
        if not old or new is None or attribute not in old or attribute in new:
            continue
        added = sorted(set(new) - set(old))
        if any((usage.path, f"{owner}.{a}") in written for a in added):
            continue  # the consumer sets the new name as well (written for both)
        close = difflib.get_close_matches(attribute, added, n=1, cutoff=0.6)
        replacement = close[0] if close else None
        where_old = f"{differ.old.files[module]}:{old[attribute]}"
        where_new = f"{differ.new.files[module]}:{new[replacement]}" if replacement else None
        change = ProtocolAttributeDropped(
            usage.symbol, where_old, where_new, owner, attribute, replacement
        )
        fix = Fix(f"set `{name}.{replacement}` as the new release does") if replacement else None
        message = f"sets `{name}.{attribute}`: {change.explain()}"
        # the write runs and does nothing: silently different behaviour, a warning
        findings.append(finding_at(usage, change, message, fix, use="patch", severity="warning"))
    return findings
