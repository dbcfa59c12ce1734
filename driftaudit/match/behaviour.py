"""What sglang stopped doing, found without packs: copies of sglang code whose original
changed (DA701) and calls whose sglang callee no longer reaches what it did (DA702)."""

from __future__ import annotations

from driftaudit.findings import Finding
from driftaudit.match.consumer_ast import sglang_files
from driftaudit.match.copies import copy_findings
from driftaudit.match.reach import reach_findings
from driftaudit.match.receivers import TypeResolver
from driftaudit.usage import UsageSet
from driftaudit.usage.files import ConsumerFiles


def behaviour_findings(usages: UsageSet, old, new, consumer: ConsumerFiles) -> list[Finding]:
    files = sglang_files(usages, consumer)
    findings = copy_findings(usages, old, new, files)
    types = TypeResolver(old)
    findings += reach_findings(usages, old, new, types, files)
    return findings
