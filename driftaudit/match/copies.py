"""Consumer functions that are copies of sglang functions whose code changed (DA701).

Consumers copy sglang code and patch it in (a logits-processor forward, an event loop, a
re-implemented `initialize_model_parallel`). The copy keeps the old code when sglang
moves on. A consumer function is compared (`similarity`) with the functions of the
sglang modules it can have come from: the modules its files import (and the modules
defining what they import), the modules of the sglang classes it subclasses, those that
define a top-level name equal to its own (when few do), and modules a provenance note names
("adapted from .../sglang/srt/layers/logits_processor.py"). Candidates come from an
inverted index of name bags, so only a handful of pairs are aligned per function.

A near-copy (similarity >= MIN_SIMILARITY) is reported when the original is gone or its
normalised body changed in lines the copy took (a change elsewhere, e.g. in a branch the
copy left out, leaves nothing to port); a partial copy (a provenance note naming sglang,
and at least MIN_CONTAINMENT of the original copied in long runs) only when the change
touches the lines it copied.

The lines a copy took are counted on its live code (`ConsumerFunction.live`): a branch of
the copy whose condition is pinned (a constant, or a name the copy's function or module
binds to constants only, combined with `not`, `and`, `or`) keeps only the arm it takes,
so an upstream change under a flag the copy kept but turned off is nothing to port. What
counts as upstream's change is in `drift.copy_changes` (its new modes are left out, and
the branches the copy's asserts decide, `drift.refactors`; so is a new way to compute a
local the copy binds and never reads, `refactors.unread`: its value reaches nothing of
the copy's).
"""

from __future__ import annotations

import ast
import copy
import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import partial

from driftaudit.astwalk import block_children, walk
from driftaudit.drift.changes import short_name
from driftaudit.drift.copy_changes import body_change
from driftaudit.drift.pairs import MISSING, PairMemo
from driftaudit.drift.refactors import Pins, asserted, decide, unread
from driftaudit.findings import Finding, Fix, finding_at
from driftaudit.similarity import MIN_TOKENS, compare, function_tokens, functions, name_bag
from driftaudit.snapshot.fingerprints import FunctionPrint, module_prints
from driftaudit.usage import ImportUsage, OverrideUsage, UsageSet

MIN_SIMILARITY = 0.7  # a near-copy
MIN_CONTAINMENT = 0.3  # a partial copy with a provenance note: share of the original
MIN_RUN = 30  # ... and the longest run of tokens copied unchanged
MIN_SHARED_NAMES = 0.3  # candidates share this share of the smaller name bag
CANDIDATES = 5  # aligned per consumer function
MAX_NAME_DEFINERS = 3  # a name defined by more sglang modules says nothing of provenance
_PROVENANCE = re.compile(r"sglang|sgl-project", re.I)
_MODULE_REF = re.compile(r"sglang[/.]srt(?:[/.]\w+)+")


@dataclass
class ConsumerFunction:
    path: str
    qualname: str
    line: int
    column: int
    tokens: list[str]
    note: str  # docstring and comments in and just above the function
    live: list[str] | None = None  # the tokens without the arms it pins off, if any
    pins: Pins = frozenset()  # the conditions it asserts (`refactors.asserted`)
    unread: frozenset[str] = frozenset()  # locals it binds and never reads

    @property
    def provenance(self) -> bool:
        return bool(_PROVENANCE.search(self.note))

    def named_modules(self) -> set[str]:
        found = set()
        for ref in _MODULE_REF.findall(self.note):
            found.add(re.sub(r"\.py$", "", ref).replace("/", "."))
        return found


def consumer_functions(files: dict[str, tuple[str, ast.Module]]) -> list[ConsumerFunction]:
    """The functions (>= MIN_TOKENS) of the consumer files that import sglang."""
    found = []
    for path, (text, tree) in files.items():
        lines = text.splitlines()
        module = None  # the module's constants, read at its first function
        for qualname, fn in functions(tree):
            tokens, _ = function_tokens(fn)
            if len(tokens) < MIN_TOKENS:
                continue
            start = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
            above = lines[max(start - 4, 0) : start - 1]
            body = lines[start - 1 : fn.end_lineno or fn.lineno]
            note = "\n".join(
                [ast.get_docstring(fn) or ""]
                + [ln for ln in above + body if ln.lstrip().startswith("#")]
            )
            if module is None:
                module = _constants(tree.body)
            live = _live(fn, module)
            found.append(
                ConsumerFunction(
                    path,
                    qualname,
                    fn.lineno,
                    fn.col_offset + 1,
                    tokens,
                    note,
                    live,
                    asserted(fn),
                    unread(fn),
                )
            )
    return found


_UNKNOWN = object()


def _constants(statements: list[ast.stmt], outer: dict | None = None) -> dict[str, object]:
    """The names `statements` bind (outside nested functions and classes) to constant
    values only, all with the same truth, over `outer` (the module's, for a function)."""
    values: dict[str, object] = dict(outer or {})
    seen: set[str] = set()
    todo = list(statements)
    while todo:
        node = todo.pop()
        bound: list[tuple[ast.expr, object]] = []
        if isinstance(node, ast.Assign):
            truth = (
                _truth_value(node.value, {}) if isinstance(node.value, ast.Constant) else _UNKNOWN
            )
            bound = [(target, truth) for target in node.targets]
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            plain = isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Constant)
            bound = [(node.target, _truth_value(node.value, {}) if plain else _UNKNOWN)]
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            bound = [(node.target, _UNKNOWN)]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            bound = [(i.optional_vars, _UNKNOWN) for i in node.items if i.optional_vars]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = [(ast.Name((a.asname or a.name).split(".")[0]), _UNKNOWN) for a in node.names]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = [(ast.Name(node.name), _UNKNOWN)]  # what it holds is its own scope's
        else:
            todo.extend(block_children(node))
        for target, truth in bound:
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                direct = isinstance(target, ast.Name)
                if name not in seen and direct:
                    values[name] = truth
                elif not (direct and values.get(name, _UNKNOWN) == truth):
                    values[name] = _UNKNOWN  # bound to something else too
                seen.add(name)
    for statement in statements:  # rebound elsewhere: by a walrus, a handler, `global`
        for node in ast.walk(statement):
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                values[node.target.id] = _UNKNOWN
            elif isinstance(node, ast.ExceptHandler) and node.name:
                values[node.name] = _UNKNOWN
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                values.update(dict.fromkeys(node.names, _UNKNOWN))
    return {k: v for k, v in values.items() if v is not _UNKNOWN}


def _truth_value(test: ast.expr, constants: dict[str, object]) -> object:
    """The truth of a condition the copy pins (constants, names bound only to constants,
    through `not`, `and`, `or`: `refactors.decide`), else _UNKNOWN."""
    found = decide(test, partial(_pinned, constants=constants))
    return _UNKNOWN if found is None else found


def _pinned(test: ast.expr, constants: dict[str, object]) -> bool | None:
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name) and test.id in constants:
        return bool(constants[test.id])
    return None


def _live(fn: ast.FunctionDef | ast.AsyncFunctionDef, module: dict[str, object]):
    """The tokens of `fn` with each pinned branch reduced to the arm it takes; None when
    it pins none."""
    args = fn.args
    params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    constants = {k: v for k, v in _constants(fn.body, module).items() if k not in params}
    tests = (n.test for n in walk(fn) if isinstance(n, ast.If))
    if all(_truth_value(test, constants) is _UNKNOWN for test in tests):
        return None  # the usual case: no copy of the tree to make
    return function_tokens(_Pinned(constants).visit(copy.deepcopy(fn)))[0]


class _Pinned(ast.NodeTransformer):
    def __init__(self, constants: dict[str, object]):
        self.constants = constants

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        truth = _truth_value(node.test, self.constants)
        if truth is _UNKNOWN:
            return node
        return node.body if truth else node.orelse


def _module_of(snapshot, symbol: str) -> str | None:
    parts = symbol.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        if name in snapshot.files:
            return name
    return None


def candidate_modules(usages: UsageSet, snapshot, ours: list[ConsumerFunction]) -> set[str]:
    modules: set[str] = set()
    for usage in usages.usages:
        if isinstance(usage, ImportUsage):
            modules.add(_module_of(snapshot, usage.symbol))
            found = snapshot.resolve(usage.symbol)
            if found is not None and found.module is not None:
                modules.add(found.module.name)
        elif isinstance(usage, OverrideUsage) and not usage.stand_in:
            for base in usage.bases:
                found = snapshot.resolve(base)
                if found is not None and found.module is not None:
                    modules.add(found.module.name)
    index = snapshot.definers(function.qualname.rpartition(".")[2] for function in ours)
    for function in ours:
        definers = index[function.qualname.rpartition(".")[2]]
        if len(definers) <= MAX_NAME_DEFINERS:  # `main` is everywhere: no hint at all
            modules.update(definers)
        modules.update(m for m in function.named_modules() if m in snapshot.files)
    return {m for m in modules if m and m in snapshot.files}


class CopyIndex:
    """sglang functions by the names their bodies use (an inverted index)."""

    def __init__(self, prints: list[FunctionPrint]):
        self.prints = prints
        self.postings: dict[str, list[int]] = defaultdict(list)
        for number, found in enumerate(prints):
            for name in found.bag:
                self.postings[name].append(number)

    def candidates(self, bag: frozenset[str], modules: set[str]) -> list[FunctionPrint]:
        """The functions sharing most names with `bag`, and every function of `modules`
        (those a provenance note names)."""
        named = [p for p in self.prints if p.module in modules]
        shared: Counter[int] = Counter()
        for name in bag:
            shared.update(self.postings.get(name, ()))
        ranked = []
        for number, count in shared.items():
            other = self.prints[number].bag
            if count >= MIN_SHARED_NAMES * min(len(bag), len(other)):
                ranked.append((count / (len(bag) + len(other) - count), number))
        ranked.sort(reverse=True)
        return named + [
            self.prints[n] for _, n in ranked[:CANDIDATES] if self.prints[n] not in named
        ]


def copy_findings(
    usages: UsageSet, old, new, files: dict, ours: list[ConsumerFunction] | None = None
) -> list[Finding]:
    """DA701 findings; `files`: the consumer's sglang files (`consumer_ast.SglangFiles`),
    or `ours`: their functions (`consumer_functions`), already read."""
    if ours is None:
        ours = consumer_functions(files)
    if not ours:
        return []
    modules = sorted(candidate_modules(usages, old, ours))
    # the best original of a function depends on its tokens, its note and the candidate
    # modules alone: stored per version pair, so an unchanged function is not aligned again
    memo = PairMemo(old, new, "copies-best")
    scope = hashlib.sha256(repr(modules).encode()).hexdigest()
    index, places = None, {}
    findings = []
    for function in ours:
        question = hashlib.sha256(
            repr((scope, function.tokens, function.note)).encode()
        ).hexdigest()
        best = _recalled(memo.get(question, tuple), old)
        if best is None:
            if index is None:
                prints = []
                for module in modules:
                    for number, found in enumerate(module_prints(old, module)):
                        places[id(found)] = (module, number)
                        prints.append(found)
                index = CopyIndex(prints)
            best = _best(function, index)
            stored = () if best is None else (places[id(best[0])], *best[1:])
            memo.put(question, stored)
        elif not best:
            best = None
        if best is not None:
            finding = _finding(function, *best, old, new, memo)
            if finding is not None:
                findings.append(finding)
    memo.flush()
    return findings


def _best(function: ConsumerFunction, index: CopyIndex):
    """(original, similarity, near) of the closest original, or None."""
    best = None
    min_containment = MIN_CONTAINMENT if function.provenance else 2.0  # 2: never
    for original in index.candidates(name_bag(function.tokens), function.named_modules()):
        similarity = compare(
            function.tokens, original.tokens, original.lines, MIN_SIMILARITY, min_containment
        )
        if similarity is None:
            continue
        near = similarity.ratio >= MIN_SIMILARITY
        partial = similarity.containment >= min_containment and similarity.longest >= MIN_RUN
        if (near or partial) and (best is None or similarity.ratio > best[1].ratio):
            best = (original, similarity, near)
    return best


def _recalled(stored, old):
    """A stored answer of `_best`: () for none, else (original, similarity, near); None
    when there is none to recall (or it no longer fits)."""
    if stored is MISSING:
        return None
    if stored == ():
        return ()
    try:
        (module, number), similarity, near = stored
        return module_prints(old, module)[number], similarity, near
    except (TypeError, ValueError, IndexError):
        return None


def _display(original: FunctionPrint) -> str:
    """`Cls.meth`, or `module.function` for a top-level function."""
    if "." in original.qualname:
        return short_name(original.symbol)
    return f"{original.module.rpartition('.')[2]}.{original.qualname}"


def _finding(function: ConsumerFunction, original, similarity, near: bool, old, new, memo):
    # what became of an original depends on the two trees alone: kept per version pair
    # ... and the conditions the copy asserts
    pins, unread = sorted(function.pins), sorted(function.unread)
    where = (original.module, original.qualname, original.lineno)
    question = repr(("body-to-port", *where, pins, unread))
    compute = partial(body_change, old, new, original, function.pins, function.unread)
    change = memo.answer(question, compute)
    if change is None:
        return None
    copied = similarity.copied_lines
    if function.live is not None:  # the lines its live code took
        live = compare(function.live, original.tokens, original.lines)
        copied = live.copied_lines if live is not None else frozenset()
    touched = len(change.changed_lines & copied)
    if not change.gone and not touched:
        return None  # the change lies outside what the consumer copied: nothing to port
    if not near and change.gone:
        return None  # a partial copy: only a change to the part it copied matters
    kind = "a copy" if near else "a partial copy"
    name = function.qualname
    score = f"similarity {similarity.ratio:.2f}, {similarity.containment:.0%} of the original"
    message = f"`{name}` is {kind} ({score}) of `{_display(original)}`, which "
    if change.gone:
        message += "is gone from the new release"
        fix = Fix("re-base the copy on what replaced the original, or stop copying it")
    else:
        moved = f"moved to `{change.moved_to}` and " if change.moved_to else ""
        message += (
            f"{moved}changed in the new release (+{change.added} -{change.removed} lines, "
            f"{touched} of the changed lines in the part copied)"
        )
        fix = Fix("port the upstream change to the copy: its unified diff is in `details`")
    return finding_at(
        function,
        change,
        message,
        fix,
        confidence="certain" if near else "likely",
        details=change.diff or None,
    )
