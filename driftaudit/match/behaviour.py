"""What sglang stopped doing, found without packs: copies of sglang code whose original
changed (DA701) and calls whose sglang callee no longer reaches what it did (DA702)."""

from __future__ import annotations

from driftaudit.findings import Finding
from driftaudit.match.consumer_ast import SglangFiles, sglang_paths
from driftaudit.match.copies import consumer_functions, copy_findings
from driftaudit.match.reach import reach_findings
from driftaudit.match.receivers import TypeResolver
from driftaudit.usage import UsageSet
from driftaudit.usage.files import ConsumerFiles


def behaviour_findings(usages: UsageSet, old, new, consumer: ConsumerFiles) -> list[Finding]:
    ours = []
    for path in sglang_paths(usages):
        file = consumer.get(path)
        functions = None if file is None else file.derived("functions", _functions(file), list)
        if functions is not None:  # parse errors are DA001 findings already
            ours += functions
    findings = copy_findings(usages, old, new, {}, ours)
    files = SglangFiles(usages, consumer)  # parsed only where a branch guard needs values
    findings += reach_findings(usages, old, new, TypeResolver(old), files)
    return findings


def _functions(file):
    """One file's functions, for the copy check; per file, so an unchanged file is not
    parsed again (`ConsumerFile.derived`)."""

    def compute():
        if file.text is None or file.tree is None:
            return None
        return consumer_functions({file.rel: (file.text, file.tree)})

    return compute
