"""Command line: the commands and exit codes (their options: `options.py`). No logic
lives here.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input.
"""

from __future__ import annotations

import errno
import gc
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from driftaudit.check import triage
from driftaudit.check.baseline import DEFAULT_BASELINE, Baseline
from driftaudit.check.selection import Selection
from driftaudit.codes import CODES, explain, lookup, selectors
from driftaudit.config import load_config
from driftaudit.confined import in_tree, write_bytes
from driftaudit.errors import DriftauditError
from driftaudit.findings import at_or_above, group_facts
from driftaudit.options import FAIL_ON, parser
from driftaudit.progress import progress
from driftaudit.report.escape import json_text, terminal, terminal_lines
from driftaudit.sources import configure_sources
from driftaudit.store.db import default_cache_dir
from driftaudit.usage.files import ConsumerFiles

if TYPE_CHECKING:
    from driftaudit.pipeline import CompareResult

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _selection(args, config) -> Selection:
    return Selection.layered(
        config,
        selectors(args.select, "--select"),
        selectors(args.ignore, "--ignore"),
        selectors(args.extend_select, "--extend-select"),
    )


# `fix`: young collections every 5000 net allocations (not 700), middle ones every 20
# young ones and full ones every 100 middle ones (not 10 and 10): bounded, and far rarer.
# libcst's trees and metadata hold cycles, so its garbage is still collected.
_GC_THRESHOLDS = (5000, 20, 100)


def _tune_gc(command: str) -> None:
    """What is alive now (the imported modules) is frozen: no collection walks it again.
    The analysis commands (compare, check, diff, rule) then run without the cyclic
    collector: a run keeps large structures alive that hold no garbage (the consumer's
    syntax trees, the models read so far) and every collection walks them. Measured on
    miles 31f1 (0.5.16 -> 0.5.23): the collector cost 2.2 s of 23.8 s CPU cold and 1.5 s
    of 8.8 s with --no-cache, at the thresholds `fix` keeps; switched off, peak memory
    moved from 217 to 219 MB, and a collection at the end of the run finds 22,000
    objects of cyclic garbage (griffe's visits, ~2 MB). `fix` keeps collecting."""
    gc.freeze()
    if command == "fix":
        gc.set_threshold(*_GC_THRESHOLDS)
        gc.enable()  # off while the command was imported (`driftaudit.__main__`)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if argv is None:  # the process's own command (not a call from Python): it owns the GC
        _tune_gc(args.command)
    cache_dir = None
    configure_sources(getattr(args, "index_url", None), getattr(args, "offline", False))
    try:
        cache_dir = _cache_dir(args)
        if args.command == "cache":  # reads or removes, never creates: its own checks
            return _cache(args, cache_dir)
        if args.command != "rule":
            _check_cache_dir(cache_dir)
        if args.command in ("compare", "check"):
            return _compare(args, cache_dir)
        if args.command == "diff":
            return _diff(args, cache_dir)
        if args.command == "history":
            return _history(args, cache_dir)
        if args.command == "plan":
            return _plan(args, cache_dir)
        if args.command == "fix":
            return _fix(args, cache_dir)
        return _rule(args)
    except DriftauditError as exc:
        print(terminal(f"driftaudit: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # the environment, not driftaudit: a full disk, a lost mount
        where = f" ({exc.filename})" if exc.filename else ""
        print(terminal(f"driftaudit: error: {exc.strerror or exc}{where}"), file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.Error as exc:
        print(terminal(f"driftaudit: error: snapshot cache in {cache_dir}: {exc}"), file=sys.stderr)
        return EXIT_USAGE


def _cache_dir(args) -> Path:
    """--cache-dir, else the default (`cache.default_cache_dir`). An empty or blank name
    is refused (Path("") is the working directory); so is a cache inside the audited
    consumer, where a checkout could plant the releases and entries it trusts."""
    if args.cache_dir is None:
        cache_dir = default_cache_dir()
    elif not args.cache_dir.strip():
        raise DriftauditError("--cache-dir must not be empty")
    else:
        cache_dir = Path(args.cache_dir)
    consumer = getattr(args, "path", None)
    if consumer is not None and in_tree(consumer, cache_dir) is not None:
        raise DriftauditError(
            f"cache directory {str(cache_dir)!r} lies inside the audited consumer "
            f"{str(consumer)!r}: a checkout could plant its entries; use another --cache-dir"
        )
    return cache_dir


def _check_cache_dir(cache_dir: Path) -> None:
    """The cache must be a writable directory: say so in one line, before any work."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise DriftauditError(f"cache directory {str(cache_dir)!r} is not a directory") from None
    except OSError as exc:
        raise DriftauditError(
            f"cannot create cache directory {str(cache_dir)!r}: {exc.strerror}"
        ) from None
    if not cache_dir.is_dir():
        raise DriftauditError(f"cache directory {str(cache_dir)!r} is not a directory")
    if not os.access(cache_dir, os.W_OK | os.X_OK):
        raise DriftauditError(
            f"cache directory {str(cache_dir)!r} is not writable "
            f"({os.strerror(errno.EACCES)}); use --cache-dir or $DRIFTAUDIT_CACHE_DIR"
        )


def _emit(text_or_render, args) -> None:
    """Write JSON text (or a console rendering) to --output or stdout. --output is the
    user's word, written as `confined.write_bytes` writes: atomically, and never
    through a symlink in the consumer tree."""
    if args.output is not None:
        if isinstance(text_or_render, str):
            text = text_or_render
        else:
            import io

            from rich.console import Console  # only for console output

            buffer = io.StringIO()
            text_or_render(Console(file=buffer, soft_wrap=True, no_color=True))
            text = buffer.getvalue()
        write_bytes(getattr(args, "path", None), args.output, text.encode("utf-8"), "output")
    elif isinstance(text_or_render, str):
        sys.stdout.write(text_or_render)
    else:
        from rich.console import Console

        text_or_render(Console(soft_wrap=True))


def _compare(args, cache_dir: Path) -> int:
    config, new = _consumer_settings(args, cache_dir)
    selection = _selection(args, config)  # a bad code is refused before the run
    fail_on = args.fail_on or config.fail_on or "error"
    if fail_on not in FAIL_ON:
        raise DriftauditError(f"fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    show_info = args.show_info or config.show_info or fail_on == "info"
    result, files, gate = _reported(args, cache_dir, config, new, selection, show_info)
    if not (args.no_timeline or args.statistics or args.update_baseline):
        from driftaudit.pipeline import date_findings

        with progress(not args.quiet):
            date_findings(gate.findings, result.old, result.new, cache_dir, args.offline)
    if args.update_baseline:
        gate.write_baseline()
        _note(args, f"wrote {len(gate.accepted)} findings to the baseline {gate.baseline_path}")
        return EXIT_OK
    notes = []
    if gate.suppressed:
        notes.append(f"{len(gate.suppressed)} suppressed inline")
    if gate.known:
        notes.append(f"{len(gate.known)} known (in the baseline {gate.baseline_path})")
    not_reported = "Not reported: " + ", ".join(notes) + "." if notes else ""
    if args.statistics:
        from driftaudit import report

        if args.format == "json":
            document = report.statistics_json(gate.findings, result.old, result.new, str(args.path))
            _emit(document, args)
        else:
            _emit(report.findings_statistics(gate.findings), args)
    else:
        _render(args, gate.findings, result.old, result.new, files, gate.suppressed, not_reported)
        if files.cache is not None:  # the fixes a report computed, kept for the next run
            files.cache.flush()
    if args.show_fixes:
        _show_fixes(args, gate.findings)
    if notes:
        _note(args, not_reported)
    if fail_on != "never" and any(at_or_above(f.severity, fail_on) for f in gate.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _reported(
    args, cache_dir: Path, config, new: str | None, selection: Selection, show_info: bool
):
    """The compare's run (or, with a supported range, the run over every release in it)
    and what it reports: (result, the consumer's files, the gate: triage,
    --min-confidence, info findings unless shown, the selection)."""
    from driftaudit.pipeline import run_compare

    exclude = [*config.exclude, *args.exclude]
    baseline_path = _baseline_path(args, config)
    # read first: a bad baseline is refused before the run
    baseline = Baseline.load(baseline_path, args.path) if baseline_path else None
    supports = _supported_range(args, config)
    result: CompareResult
    with progress(not args.quiet):
        if supports is not None:
            from driftaudit.supported import run_supported

            result = run_supported(
                args.path,
                supports,
                cache_dir,
                args.offline,
                exclude,
                args.packs,
                config.wrap_prefixes,
                use_cache=not args.no_cache,
                source="command line" if args.supports else "config",
            )
        else:
            assert new is not None
            result = run_compare(
                args.path,
                args.old or config.old,
                new,
                cache_dir,
                exclude,
                args.packs,
                config.wrap_prefixes,
                _allow_paths(args, config),
                use_cache=not args.no_cache,
                sources=_sources(args),
            )
    _note_skipped(result.files.skipped if result.files else [], args.quiet)
    files = result.files or ConsumerFiles(args.path, exclude)
    gate = triage(result.findings, files, baseline_path, baseline)
    if args.min_confidence == "certain":  # after triage: a suppression of it is still used
        gate.findings = [f for f in gate.findings if f.confidence == "certain"]
        gate.accepted = [f for f in gate.accepted if f.confidence == "certain"]
    if not show_info:
        # changelog notes off; DA0xx (about the consumer's own suppressions, baseline) stay
        gate.findings = [f for f in gate.findings if f.severity != "info" or _own(f)]
    # the one place the selection applies: after triage, as --min-confidence
    gate.findings, gate.accepted = selection.apply(gate.findings), selection.apply(gate.accepted)
    return result, files, gate


def _plan(args, cache_dir: Path) -> int:
    """`driftaudit plan`: the compare's reported findings cut into steps (history/plan.py)."""
    from driftaudit import report
    from driftaudit.pipeline import plan_upgrade

    config, new = _consumer_settings(args, cache_dir)
    selection = _selection(args, config)
    show_info = args.show_info or config.show_info
    result, _, gate = _reported(args, cache_dir, config, new, selection, show_info)
    with progress(not args.quiet):
        plan = plan_upgrade(gate.findings, result.old, result.new, cache_dir, args.offline, result)
    consumer = str(args.path)
    if args.format == "json":
        _emit(report.plan_json(plan, result.old, result.new, consumer), args)
    elif args.format == "markdown":
        _emit(report.plan_markdown(plan, result.old, result.new, consumer), args)
    else:
        _emit(
            lambda console: report.render_plan(console, plan, result.old, result.new, consumer),
            args,
        )
    return EXIT_OK


def _show_fixes(args, findings) -> None:
    """After a console report on stdout, on stdout (as ruff); after any other report
    (a document: JSON, SARIF, a file), on stderr."""
    from driftaudit import report

    text = report.fixes_summary(findings)
    on_stdout = args.format == "console" and args.output is None
    (sys.stdout if on_stdout else sys.stderr).write(text)


def _own(finding) -> bool:
    """A finding about the consumer's input itself (DA0xx), not about an sglang change."""
    return finding.code.code.startswith("DA0")


def _note_skipped(skipped: list, quiet: bool = False, shown: int = 10) -> None:
    """What the walk left out, one line each on stderr: every folder that holds no
    consumer source (a virtualenv, installed packages, build output), then up to `shown`
    files (a bad symlink, a FIFO, too large, unreadable; Python ones and notebooks are
    DA001 findings as well). -q silences them, as every note."""
    if quiet:
        return
    folders = [item for item in skipped if item.rel.endswith("/")]
    files = [item for item in skipped if not item.rel.endswith("/")]
    for item in folders + files[:shown]:
        print(terminal(f"driftaudit: note: not read: {item.rel} ({item.reason})"), file=sys.stderr)
    if len(files) > shown:
        print(f"driftaudit: note: {len(files) - shown} more files not read", file=sys.stderr)


def _baseline_path(args, config) -> Path | None:
    """--baseline, else (for check, or to update one) [tool.driftaudit] baseline or the
    default file in the consumer."""
    if args.baseline is not None:
        return args.baseline
    if args.command == "check" or getattr(args, "update_baseline", False):
        return args.path / (config.baseline or DEFAULT_BASELINE)
    return None


def _note(args, text: str) -> None:
    if not args.quiet:
        from rich.console import Console
        from rich.text import Text

        Console(stderr=True, soft_wrap=True).print(Text(terminal(text)))


def _prefix(consumer: Path) -> tuple[Path, str]:
    """(base directory, the consumer's path under it): report paths from the working
    directory (the repository root in CI), when the consumer lies under it."""
    cwd = Path.cwd().resolve()
    try:
        relative = consumer.resolve().relative_to(cwd).as_posix()
    except ValueError:
        return consumer.resolve(), ""
    return cwd, "" if relative == "." else relative + "/"


def _render(args, findings, old, new, files, suppressed=(), not_reported: str = "") -> None:
    """`files`: the consumer's index (the lines of snippets, regions and fingerprints)."""
    from driftaudit import report

    consumer = str(args.path)
    if args.format == "json":
        _emit(report.findings_json(findings, old, new, consumer), args)
    elif args.format == "markdown":
        text = report.findings_markdown(findings, old, new, consumer, preamble=not_reported)
        _emit(text, args)
    elif args.format == "sarif":
        from driftaudit.fix.suggest import suggested_fixes

        base, prefix = _prefix(args.path)
        fixes = suggested_fixes([*findings, *suppressed], files)  # once, before rendering
        document = report.findings_sarif(
            findings, old, new, consumer, files, base, prefix, suppressed, fixes
        )
        _emit(document, args)
    elif args.format == "github":
        _emit(report.findings_github(findings, files, _prefix(args.path)[1], old), args)
    elif args.format == "gitlab":
        _emit(report.findings_gitlab(findings, files, _prefix(args.path)[1]), args)
    elif args.format == "html":
        from driftaudit.fix.suggest import previews  # the fixes the page shows

        shown = previews(findings, files)
        text = report.findings_html(
            findings, old, new, consumer, files, shown, preamble=not_reported
        )
        _emit(text, args)
    else:
        _emit(lambda console: report.render_console(console, findings, old, new, consumer), args)


def _consumer_settings(args, cache_dir: Path):
    if not args.path.is_dir():
        problem = "does not exist" if not args.path.exists() else "is not a directory"
        raise DriftauditError(f"consumer path {str(args.path)!r} {problem}")
    config = load_config(args.path, args.config)
    new = args.new or config.new
    if new is None and _supported_range(args, config) is None:
        raise DriftauditError("--new is required (or set new in [tool.driftaudit])")
    return config, new


def _supported_range(args, config) -> str | None:
    """The supported range to audit: --supports, else the config's `supports` unless
    --old or --new is given (the command line wins)."""
    given = getattr(args, "supports", None)  # compare, check and fix
    if given is not None:
        if args.old is not None or args.new is not None:
            raise DriftauditError("--supports audits every release in its range: drop --old/--new")
        return given
    if args.old is None and args.new is None and given is None and hasattr(args, "supports"):
        return config.supports
    return None


def _allow_paths(args, config) -> tuple[bool, bool]:
    """A spec from the command line may be a path; one from the consumer's config only
    with --trust-config-paths (the consumer's files are not the user's word)."""
    trusted = args.trust_config_paths
    return (args.old is not None or trusted, args.new is not None or trusted)


def _sources(args) -> tuple[str, str]:
    """Where --old and --new were written: on the command line, else in the config (an
    --old given nowhere is read from the consumer's pin, which the run records)."""
    return (
        "command line" if args.old is not None else "config",
        "command line" if args.new is not None else "config",
    )


def _fix(args, cache_dir: Path) -> int:
    from driftaudit.pipeline import run_fix

    config, new = _consumer_settings(args, cache_dir)
    selection = _selection(args, config)
    baseline = args.baseline or args.path / (config.baseline or DEFAULT_BASELINE)
    Baseline.load(baseline, args.path)  # a bad one is refused before the run
    supports = _supported_range(args, config)
    with progress(not args.quiet):
        result = run_fix(
            args.path,
            args.old or config.old,
            new,
            cache_dir,
            apply=args.apply,
            select=selection.select,
            ignore=selection.ignore,
            exclude=[*config.exclude, *args.exclude],
            pack_dirs=args.packs,
            prefixes=config.wrap_prefixes,
            unsafe_fixes=args.unsafe_fixes,
            per_file_ignores=selection.per_file,
            allow_paths=_allow_paths(args, config),
            use_cache=not args.no_cache,
            baseline=baseline,
            sources=_sources(args),
            supports=supports,
            offline=args.offline,
        )
    _note_skipped(result.compare.files.skipped if result.compare.files else [], args.quiet)
    if not args.apply:
        shown = terminal_lines if sys.stdout.isatty() else str  # a pipe gets the exact patch
        for change in result.changes:
            if change.changed:
                sys.stdout.write(shown(change.diff()))
    from rich.console import Console
    from rich.text import Text

    err = Console(stderr=True, soft_wrap=True)

    def say(line: str) -> None:  # a Text: no markup or emoji code (`args.py:100:5`) is read
        err.print(Text(terminal(line)))

    if result.swept:
        say(f"removed {len(result.swept)} temporary files left by an interrupted run")
    files = sum(1 for c in result.changes if c.changed)
    if result.refused:
        say(f"nothing written: {len(result.refused)} files cannot be written safely")
        for path, reason in result.refused:
            say(f"  {path}: {reason}")
    verb = "fixed" if result.written else "would fix"
    say(f"{verb} {result.fixed} findings in {files} files")
    for change in result.changes:
        for edit, reason in change.skipped:
            say(
                f"  not fixed: {edit.path}:{edit.line}:{edit.column} {edit.kind}: {reason}",
            )
    if result.unsafe_held:
        say(
            f"{len(result.unsafe_held)} unsafe fixes not applied (behaviour may change): "
            "pass --unsafe-fixes to apply them"
        )
    left = [(len(result.suppressed), "suppressed inline")]
    left.append((len(result.known), "accepted in the baseline"))
    notes = [f"{n} {what}" for n, what in left if n]
    if notes:
        say(f"not fixed, as check does not report them: {', '.join(notes)}")
    covered = result.covered()
    if covered:
        say(f"{len(covered)} findings need no edit of their own:")
        for finding in covered:
            assert finding.fix is not None  # covered: another finding's fix takes care of it
            say(f"  {_where(finding)} {finding.fix.description}")
    remaining = group_facts(result.needs_a_human())
    if remaining:
        places = sum(len(group) for group in remaining)
        at = f" ({places} places)" if places > len(remaining) else ""
        say(f"{len(remaining)} findings need a human{at}:")
        out_of_range = {id(f): why for f, why in result.range_held}
        for group in remaining:  # one line per fact
            finding = group[0]
            why = f" ({finding.fix.description})" if finding.fix else ""
            if id(finding) in out_of_range:
                why = f" (not fixed: {out_of_range[id(finding)]})"
            more = f" (and {len(group) - 1} more places)" if len(group) > 1 else ""
            say(f"  {_where(finding)} {finding.message}{why}{more}")
    if result.refused:
        return EXIT_USAGE
    # as ruff's `--diff`: without --apply, 1 when there is a diff (a gate: "fixes pending")
    return EXIT_FINDINGS if not args.apply and files else EXIT_OK


def _where(finding) -> str:
    return f"{finding.path}:{finding.line}:{finding.column} {finding.code.code}"


def _diff(args, cache_dir: Path) -> int:
    from driftaudit import report
    from driftaudit.pipeline import run_diff

    with progress(not args.quiet):
        old, new, changes = run_diff(args.old, args.new, cache_dir, args.module)
    if args.format == "json":
        _emit(report.changes_json(changes, old.tree, new.tree), args)
    elif args.format == "markdown":
        _emit(report.changes_markdown(changes, old.tree, new.tree), args)
    elif args.format == "sarif":
        _emit(report.changes_sarif(changes, old.tree, new.tree), args)
    elif args.format == "html":
        _emit(report.changes_html(changes, old.tree, new.tree), args)
    else:
        _emit(lambda console: report.render_changes(console, changes, old.tree, new.tree), args)
    return EXIT_OK


def _cache(args, cache_dir: Path) -> int:
    """`driftaudit cache info|clean|prune` (store/maintenance.py)."""
    from driftaudit.report import cache_inventory
    from driftaudit.store import maintenance

    if args.action == "info":
        found = maintenance.inventory(cache_dir)
        if args.format == "json":
            from driftaudit.report.json_report import opening

            document = opening() | cache_inventory.info_json(found)
            sys.stdout.write(json_text(document))
        else:
            for line in cache_inventory.info_lines(found):
                print(terminal(line))
        return EXIT_OK
    if args.action == "clean":
        outcome = maintenance.clean(cache_dir, args.releases)
    else:
        keep_days = maintenance.DEFAULT_KEEP_DAYS if args.keep_days is None else args.keep_days
        outcome = maintenance.prune(cache_dir, keep_days, args.keep)
    for line in cache_inventory.outcome_lines(
        outcome, lambda freed: f"freed {cache_inventory.human(freed)} in {cache_dir}"
    ):
        print(terminal(line))
    return EXIT_OK


def _history(args, cache_dir: Path) -> int:
    from driftaudit import report
    from driftaudit.pipeline import run_history

    with progress(not args.quiet):
        result = run_history(args.symbol, args.old, args.new, cache_dir, args.offline)
    if args.format == "json":
        _emit(report.history_json(result), args)
    else:
        _emit(lambda console: report.render_history(console, result), args)
    return EXIT_OK


def _rule(args) -> int:
    """`driftaudit rule`: every code, one line each; `driftaudit rule DA102`: one explained."""
    if args.code is None:
        for each in sorted(CODES.values(), key=lambda c: c.code):
            fix = each.applicability or ""
            print(f"{each.code}  {each.kind:28} {each.severity:8} {fix:6}  {each.summary}")
        return EXIT_OK
    code = lookup(args.code)
    if code is None:
        raise DriftauditError(f"unknown code {args.code!r}; `driftaudit rule` lists them")
    print(explain(code))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
