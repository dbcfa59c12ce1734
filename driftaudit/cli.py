"""Command line: commands, options and exit codes. No logic lives here.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from driftaudit import __version__
from driftaudit.cache import default_cache_dir
from driftaudit.config import load_config
from driftaudit.errors import DriftauditError
from driftaudit.findings import at_or_above
from driftaudit.rules import RULES, explain, get_rule

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FAIL_ON = ("error", "warning", "info", "never")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="driftaudit", description="Static API-drift auditor for sglang upgrades."
    )
    parser.add_argument("--version", action="version", version=f"driftaudit {__version__}")
    parser.add_argument("--cache-dir", type=Path, help="default: ~/.cache/driftaudit")
    # accepted after the command too: `driftaudit compare --cache-dir D ...`
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", type=Path, default=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", required=True)

    for name, help_text in (
        ("compare", "audit a consumer against two sglang versions"),
        ("check", "compare for CI: settings from [tool.driftaudit], the exit code says it"),
    ):
        compare = commands.add_parser(name, parents=[common], help=help_text)
        compare.add_argument("path", nargs="?", default=".", type=Path, help="the consumer")
        compare.add_argument("--old", help="version spec; default: the consumer's sglang pin")
        compare.add_argument("--new", help="version spec: 0.5.14, a directory, git:PATH@REF")
        compare.add_argument("--format", choices=("console", "json", "markdown"), default="console")
        compare.add_argument("--output", type=Path, help="write the report to this file")
        compare.add_argument("--fail-on", choices=FAIL_ON, help="default: error")
        compare.add_argument("--exclude", action="append", default=[], help="files to skip")
        compare.add_argument("--rules", action="append", type=Path, help="rule-pack directory")
        compare.add_argument(
            "--min-confidence",
            choices=("likely", "certain"),
            default="likely",
            help="drop `likely` findings (receiver type unknown) with `certain`",
        )

    fix = commands.add_parser(
        "fix", parents=[common], help="rewrite the mechanical fixes (a diff; --apply writes)"
    )
    fix.add_argument("path", nargs="?", default=".", type=Path, help="the consumer repo")
    fix.add_argument("--old", help="version spec; default: the consumer's sglang pin")
    fix.add_argument("--new", help="version spec")
    fix.add_argument("--apply", action="store_true", help="write the changes (default: diff)")
    fix.add_argument("--select", action="append", default=[], help="only these rule codes")
    fix.add_argument("--ignore", action="append", default=[], help="skip these rule codes")
    fix.add_argument("--exclude", action="append", default=[], help="glob of files to skip")
    fix.add_argument("--rules", action="append", type=Path, help="rule-pack directory")

    diff = commands.add_parser(
        "diff", parents=[common], help="sglang-side API changelog between two versions"
    )
    diff.add_argument("--old", required=True)
    diff.add_argument("--new", required=True)
    diff.add_argument("--module", help="only changes under this dotted prefix")
    diff.add_argument("--format", choices=("console", "json"), default="console")
    diff.add_argument("--output", type=Path)

    rule = commands.add_parser("rule", help="explain a rule code, or list them all")
    rule.add_argument("code", nargs="?")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cache_dir = args.cache_dir or default_cache_dir()
    try:
        if args.command in ("compare", "check"):
            return _compare(args, cache_dir)
        if args.command == "diff":
            return _diff(args, cache_dir)
        if args.command == "fix":
            return _fix(args, cache_dir)
        return _rule(args)
    except DriftauditError as exc:
        print(f"driftaudit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


def _emit(text_or_render, args) -> None:
    """Write JSON text (or a console rendering) to --output or stdout."""
    if args.output is not None:
        try:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text_or_render, str):
                args.output.write_text(text_or_render, encoding="utf-8")
            else:
                with args.output.open("w", encoding="utf-8") as handle:
                    text_or_render(Console(file=handle, soft_wrap=True, no_color=True))
        except OSError as exc:
            raise DriftauditError(f"cannot write {args.output}: {exc.strerror}") from None
    elif isinstance(text_or_render, str):
        sys.stdout.write(text_or_render)
    else:
        text_or_render(Console(soft_wrap=True))


def _compare(args, cache_dir: Path) -> int:
    from driftaudit.pipeline import run_compare
    from driftaudit.report import findings_json, findings_markdown, render_console

    config, new = _consumer_settings(args)
    fail_on = args.fail_on or config.fail_on or "error"
    if fail_on not in FAIL_ON:
        raise DriftauditError(f"fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    result = run_compare(
        args.path,
        args.old or config.old,
        new,
        cache_dir,
        [*config.exclude, *args.exclude],
        args.rules,
        config.wrap_prefixes,
    )
    _note_skipped(result.files.skipped if result.files else [])
    consumer = str(args.path)
    if args.min_confidence == "certain":
        result.findings = [f for f in result.findings if f.confidence == "certain"]
    if args.format == "json":
        _emit(findings_json(result.findings, result.old, result.new, consumer), args)
    elif args.format == "markdown":
        _emit(findings_markdown(result.findings, result.old, result.new, consumer), args)
    else:
        _emit(
            lambda console: render_console(
                console, result.findings, result.old, result.new, consumer
            ),
            args,
        )
    if fail_on != "never" and any(at_or_above(f.severity, fail_on) for f in result.findings):
        return EXIT_FINDINGS
    return EXIT_OK


def _note_skipped(skipped: list, shown: int = 10) -> None:
    """Consumer files the walk left out (a bad symlink, a FIFO, too large, unreadable):
    one line each on stderr (Python ones are DA001 findings as well)."""
    for item in skipped[:shown]:
        print(f"driftaudit: note: not read: {item.rel} ({item.reason})", file=sys.stderr)
    if len(skipped) > shown:
        print(f"driftaudit: note: {len(skipped) - shown} more files not read", file=sys.stderr)


def _consumer_settings(args):
    if not args.path.is_dir():
        problem = "does not exist" if not args.path.exists() else "is not a directory"
        raise DriftauditError(f"consumer path {str(args.path)!r} {problem}")
    config = load_config(args.path)
    new = args.new or config.new
    if new is None:
        raise DriftauditError("--new is required (or set new in [tool.driftaudit])")
    return config, new


def _fix(args, cache_dir: Path) -> int:
    from driftaudit.pipeline import run_fix

    config, new = _consumer_settings(args)
    result = run_fix(
        args.path,
        args.old or config.old,
        new,
        cache_dir,
        apply=args.apply,
        select=[s.upper() for s in args.select],
        ignore=[i.upper() for i in args.ignore],
        exclude=[*config.exclude, *args.exclude],
        rules=args.rules,
        prefixes=config.wrap_prefixes,
    )
    if not args.apply:
        for change in result.changes:
            if change.changed:
                sys.stdout.write(change.diff())
    err = Console(stderr=True, soft_wrap=True)
    files = sum(1 for c in result.changes if c.changed)
    verb = "fixed" if args.apply else "would fix"
    err.print(f"{verb} {result.fixed} findings in {files} files")
    for change in result.changes:
        for edit, reason in change.skipped:
            err.print(f"  not fixed: {edit.path}:{edit.line}:{edit.column} {edit.kind}: {reason}")
    remaining = result.needs_a_human()
    if remaining:
        err.print(f"{len(remaining)} findings need a human:")
        for finding in remaining:
            err.print(
                f"  {finding.path}:{finding.line}:{finding.column} {finding.rule.code} "
                f"{finding.message}",
                markup=False,
            )
    return EXIT_OK


def _diff(args, cache_dir: Path) -> int:
    from driftaudit.pipeline import run_diff
    from driftaudit.report import changes_json, render_changes

    old, new, changes = run_diff(args.old, args.new, cache_dir, args.module)
    if args.format == "json":
        _emit(changes_json(changes, old.tree, new.tree), args)
    else:
        _emit(lambda console: render_changes(console, changes, old.tree, new.tree), args)
    return EXIT_OK


def _rule(args) -> int:
    if args.code is None:
        for rule in RULES.values():
            print(f"{rule.code}  {rule.kind:28} {rule.severity:8} {rule.summary}")
        return EXIT_OK
    rule = get_rule(args.code)
    if rule is None:
        raise DriftauditError(f"unknown rule {args.code!r}; `driftaudit rule` lists them")
    print(explain(rule))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
