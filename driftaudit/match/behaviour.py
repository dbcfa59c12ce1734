"""What sglang stopped doing, found without packs: copies of sglang code whose original
changed (DA701) and calls whose sglang callee no longer reaches what it did (DA702)."""

from __future__ import annotations

from driftaudit.findings import Finding
from driftaudit.match.consumer_ast import SglangFiles, attribute_reads, sglang_paths
from driftaudit.match.copies import consumer_functions, copy_findings
from driftaudit.match.reach import reach_findings
from driftaudit.match.receivers import TypeResolver
from driftaudit.usage import UsageSet
from driftaudit.usage.files import ConsumerFiles


def behaviour_findings(usages: UsageSet, old, new, consumer: ConsumerFiles) -> list[Finding]:
    ours, reads = [], set()
    for path in sglang_paths(usages):
        file = consumer.get(path)
        facts = None if file is None else file.derived("behaviour-facts", _facts(file), tuple)
        if facts is not None:  # parse errors are DA001 findings already
            ours += facts[0]
            reads |= facts[1]
    findings = copy_findings(usages, old, new, {}, ours)
    files = SglangFiles(usages, consumer)  # parsed only where a branch guard needs values
    findings += reach_findings(usages, old, new, TypeResolver(old), reads, files)
    return findings


def _facts(file):
    """What the checks read of one file: its functions (copies) and attribute reads
    (reach); per file, so an unchanged file is not parsed again (`ConsumerFile.derived`)."""

    def compute():
        if file.text is None or file.tree is None:
            return None
        one = {file.rel: (file.text, file.tree)}
        return consumer_functions(one), attribute_reads(one)

    return compute
