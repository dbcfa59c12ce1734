"""What sglang stopped doing, found without packs: copies of sglang code whose original
changed (DA701) and calls whose sglang callee no longer reaches what it did (DA702)."""

from __future__ import annotations

from collections.abc import Callable

from driftaudit.findings import Finding
from driftaudit.match.consumer_ast import SglangFiles, sglang_paths
from driftaudit.match.copies import consumer_functions, copy_findings
from driftaudit.match.reach import reach_findings
from driftaudit.match.receivers import TypeResolver
from driftaudit.usage import UsageSet
from driftaudit.usage.files import ConsumerFiles


def behaviour_later(
    usages: UsageSet, old, new, consumer: ConsumerFiles
) -> Callable[[], list[Finding]]:
    """`behaviour_findings`, started now in a forked child when the trees' entries are
    being built (a cold run on two cores or more: `snapshot/prefetch.py` started), so it
    runs alongside matching; else computed when the returned function is called."""
    if old.prefetch is None and new.prefetch is None:
        return lambda: behaviour_findings(usages, old, new, consumer)
    from driftaudit.forked import Forked

    cache = consumer.cache
    mark = len(cache.computed) if cache is not None else 0

    def before() -> None:  # in the child
        for snapshot in (old, new):
            snapshot.prefetch = None  # the prefetch child reports to this process's parent
        for store in {id(s.store): s.store for s in (old, new)}.values():
            store.reopen_in_child()
        if cache is not None:
            cache.store.reopen_in_child()

    def compute():  # in the child
        findings = behaviour_findings(usages, old, new, consumer)
        return findings, cache.computed_since(mark) if cache is not None else []

    child = Forked(compute, before)

    def findings() -> list[Finding]:
        done, value = child.result()
        if not done:
            return behaviour_findings(usages, old, new, consumer)
        found, derived = value
        if cache is not None:
            cache.absorb(derived, consumer)
        return found

    return findings


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
