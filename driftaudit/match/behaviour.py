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
    usages: UsageSet, old, new, consumer: ConsumerFiles, fork: bool
) -> Callable[[], list[Finding]]:
    """The behaviour checks (`reach_half`, `copy_half`), started now in a forked child
    when `fork` (the pipeline's `Parallelism`: a cold run on two cores or more), so they
    run alongside matching; else computed when the returned function is called. The
    child checks reach first (the larger half); the copy check, if the child has not
    started it when this process is done matching, is taken back and computed here
    while the child finishes reach."""
    halves = {
        "reach": lambda: reach_half(usages, old, new, consumer),
        "copies": lambda: copy_half(usages, old, new, consumer),
    }
    if not fork:
        return lambda: [f for half in halves.values() for f in half()]
    from driftaudit.forked import Forked

    cache = consumer.cache

    def before() -> None:  # in the child
        for store in {id(s.store): s.store for s in (old, new)}.values():
            store.in_child()  # the builds ahead report to this process's parent
        if cache is not None:
            cache.store.in_child()

    def in_child(half: Callable[[], list[Finding]]) -> Callable[[], tuple]:
        def job() -> tuple:  # its findings, and what it derived from consumer files
            mark = len(cache.computed) if cache is not None else 0
            return half(), cache.computed_since(mark) if cache is not None else []

        return job

    child = Forked({name: in_child(half) for name, half in halves.items()}, before)

    def findings() -> list[Finding]:
        found = []
        for name in reversed(halves):  # the copy check first: taken back if not started
            done, value = (False, None) if child.take(name) else child.result(name)
            if not done:
                found += halves[name]()
                continue
            part, derived = value
            if cache is not None:
                cache.absorb(derived, consumer)
            found += part
        return found

    return findings


def copy_half(usages: UsageSet, old, new, consumer: ConsumerFiles) -> list[Finding]:
    """DA701: the consumer's copies of sglang code whose original changed."""
    ours = []
    for path in sglang_paths(usages):
        file = consumer.get(path)
        functions = None if file is None else file.derived("functions", _functions(file), list)
        if functions is not None:  # parse errors are DA001 findings already
            ours += functions
    return copy_findings(usages, old, new, {}, ours)


def reach_half(usages: UsageSet, old, new, consumer: ConsumerFiles) -> list[Finding]:
    """DA702: calls whose sglang callee no longer reaches what it did."""
    files = SglangFiles(usages, consumer)  # parsed only where a branch guard needs values
    return reach_findings(usages, old, new, TypeResolver(old, usages.fields), files)


def _functions(file):
    """One file's functions, for the copy check; per file, so an unchanged file is not
    parsed again (`ConsumerFile.derived`)."""

    def compute():
        if file.text is None or file.tree is None:
            return None
        return consumer_functions({file.rel: (file.text, file.tree)})

    return compute
