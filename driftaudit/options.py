"""The command line's grammar: every command and its options (argparse), the formats
and `--fail-on` levels; `cli.py` runs the commands."""

from __future__ import annotations

import argparse
from pathlib import Path

from driftaudit import __version__
from driftaudit.check.baseline import DEFAULT_BASELINE

FAIL_ON = ("error", "warning", "info", "never")
FINDING_FORMATS = ("console", "json", "markdown", "sarif", "github", "gitlab", "html")
CHANGE_FORMATS = ("console", "json", "markdown", "sarif", "html")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="driftaudit", description="Static API-drift auditor for sglang upgrades."
    )
    parser.add_argument("--version", action="version", version=f"driftaudit {__version__}")
    # a string, not a Path: Path("") is ".", and an empty --cache-dir must be refused
    parser.add_argument("--cache-dir", help="default: ~/.cache/driftaudit")
    # accepted after the command too: `driftaudit compare --cache-dir D ...`
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", default=argparse.SUPPRESS)
    run = argparse.ArgumentParser(add_help=False)
    run.add_argument(
        "--offline",
        action="store_true",
        help="no index look-up or download: latest = newest cached release",
    )
    run.add_argument(
        "--index-url",
        metavar="URL",
        help="the package index's simple API (default: pip's index-url, $PIP_INDEX_URL, PyPI)",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress or notes on stderr")
    cached = argparse.ArgumentParser(add_help=False)
    cached.add_argument(
        "--no-cache",
        action="store_true",
        help="compute the findings again (the last run's findings are reused when the "
        "consumer, both releases, packs, options and driftaudit are unchanged)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    for name, help_text in (
        ("compare", "audit a consumer against two sglang versions"),
        ("check", "compare for CI: settings from [tool.driftaudit], the exit code says it"),
    ):
        compare = commands.add_parser(name, parents=[common, run, cached], help=help_text)
        compare.add_argument("path", nargs="?", default=".", type=Path, help="the consumer")
        compare.add_argument("--old", help="version spec; default: the consumer's sglang pin")
        compare.add_argument(
            "--new", help="version spec: 0.5.14, latest, a directory, git:PATH@REF"
        )
        compare.add_argument(
            "--supports",
            metavar="SPEC",
            help="a supported range ('>=0.5.22,<=0.5.23'): audit against every release "
            "in it, in place of --old/--new (default: supports in the config)",
        )
        compare.add_argument(
            "--format", "--output-format", choices=FINDING_FORMATS, default="console"
        )
        compare.add_argument("--output", type=Path, help="write the report to this file")
        _selection_options(compare)
        compare.add_argument(
            "--statistics",
            action="store_true",
            help="counts per code instead of the findings (json with --format json)",
        )
        compare.add_argument(
            "--show-fixes",
            action="store_true",
            help="after the report, the fixes `fix` would apply, per file and code",
        )
        compare.add_argument("--fail-on", choices=FAIL_ON, help="default: error")
        compare.add_argument(
            "--show-info",
            action="store_true",
            help="also report info findings (changelog notes; off by default, as "
            "`show-info = true` in the config; on with --fail-on info)",
        )
        compare.add_argument("--exclude", action="append", default=[], help="files to skip")
        _packs_option(compare)
        compare.add_argument(
            "--min-confidence",
            choices=("likely", "certain"),
            default="likely",
            help="drop `likely` findings (receiver type unknown) with `certain`",
        )
        compare.add_argument(
            "--baseline",
            type=Path,
            help=f"accepted findings (check: default {DEFAULT_BASELINE} in the consumer)",
        )
        compare.add_argument(
            "--update-baseline",
            action="store_true",
            help="write every current finding to the baseline and exit 0",
        )
        compare.add_argument(
            "--no-timeline",
            action="store_true",
            help="do not read the releases between old and new for each finding's "
            "introduced and deprecated releases",
        )
        compare.add_argument(
            "--trust-config-paths",
            action="store_true",
            help="let old/new in the consumer's config name a directory or git repository",
        )

    fix = commands.add_parser(
        "fix",
        parents=[common, run, cached],
        help="rewrite the mechanical fixes (a diff; --apply writes)",
    )
    fix.add_argument("path", nargs="?", default=".", type=Path, help="the consumer repo")
    fix.add_argument("--old", help="version spec; default: the consumer's sglang pin")
    fix.add_argument("--new", help="version spec")
    fix.add_argument(
        "--supports",
        metavar="SPEC",
        help="a supported range ('>=0.5.22,<=0.5.23'): write fixes that work on every "
        "release in it, in place of --old/--new (default: supports in the config)",
    )
    fix.add_argument(
        "--apply",
        action="store_true",
        help="write the changes, all or none (default: print the diff, exit 1 if not empty)",
    )
    fix.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply fixes that may change behaviour (`driftaudit rule CODE` says which)",
    )
    _selection_options(fix)
    fix.add_argument("--exclude", action="append", default=[], help="glob of files to skip")
    fix.add_argument(
        "--baseline",
        type=Path,
        help=f"accepted findings, left unfixed (default: as check, {DEFAULT_BASELINE})",
    )
    _packs_option(fix)
    fix.add_argument(
        "--trust-config-paths",
        action="store_true",
        help="let old/new in the consumer's config name a directory or git repository",
    )

    diff = commands.add_parser(
        "diff", parents=[common, run], help="sglang-side API changelog between two versions"
    )
    diff.add_argument("--old", required=True)
    diff.add_argument("--new", required=True)
    diff.add_argument("--module", help="only changes under this dotted prefix")
    diff.add_argument("--format", choices=CHANGE_FORMATS, default="console")
    diff.add_argument("--output", type=Path)

    cache = commands.add_parser(
        "cache", parents=[common], help="the cache directory: info, clean, prune"
    )
    actions = cache.add_subparsers(dest="action", required=True)
    info = actions.add_parser(
        "info", parents=[common], help="what the cache holds: each part, its size, the total"
    )
    info.add_argument("--format", choices=("console", "json"), default="console")
    clean = actions.add_parser(
        "clean",
        parents=[common],
        help="remove everything driftaudit cached, or the named releases only",
    )
    clean.add_argument(
        "releases", nargs="*", metavar="RELEASE", help="a version (0.5.14) or a git-<sha> export"
    )
    prune = actions.add_parser(
        "prune",
        parents=[common],
        help="remove what this driftaudit cannot use and releases not used lately",
    )
    prune.add_argument(
        "--keep-days",
        type=_count,
        metavar="N",
        help="remove releases and exports not used for N days (default 30)",
    )
    prune.add_argument(
        "--keep",
        type=_count,
        metavar="N",
        help="keep at most the N most recently used releases and exports",
    )

    history = commands.add_parser(
        "history",
        parents=[common, run],
        help="a name's signature or presence in every release of a range",
    )
    history.add_argument(
        "symbol",
        help="sglang.x.Class.method, sglang.x.func(param), a ServerArgs field "
        "(sglang.srt.server_args.ServerArgs.tp_size), --flag, SGLANG_ENV_VAR, a requirement",
    )
    history.add_argument(
        "--old", help="the first release (default: the last ten releases up to --new)"
    )
    history.add_argument("--new", default="latest", help="the last release (default: latest)")
    history.add_argument("--format", choices=("console", "json"), default="console")
    history.add_argument("--output", type=Path)

    plan = commands.add_parser(
        "plan",
        parents=[common, run, cached],
        help="the upgrade's findings by the release that brings them, and the steps to take",
    )
    plan.add_argument("path", nargs="?", default=".", type=Path, help="the consumer")
    plan.add_argument("--old", help="a release; default: the consumer's sglang pin")
    plan.add_argument("--new", help="a release (0.5.23, latest)")
    plan.add_argument("--format", choices=("console", "json", "markdown"), default="console")
    plan.add_argument("--output", type=Path, help="write the plan to this file")
    _selection_options(plan)
    plan.add_argument(
        "--show-info", action="store_true", help="also plan info findings (changelog notes)"
    )
    plan.add_argument("--exclude", action="append", default=[], help="files to skip")
    _packs_option(plan)
    plan.add_argument("--min-confidence", choices=("likely", "certain"), default="likely")
    plan.add_argument("--baseline", type=Path, help="accepted findings, left out of the plan")
    plan.add_argument(
        "--trust-config-paths",
        action="store_true",
        help="let old/new in the consumer's config name a directory or git repository",
    )

    rule = commands.add_parser("rule", help="explain a code (DA102), or list them all")
    rule.add_argument("code", nargs="?")
    return parser


def _count(text: str) -> int:
    """A whole number, 0 or more (argparse's error otherwise: exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value


def _selection_options(command: argparse.ArgumentParser) -> None:
    """As ruff's: codes or prefixes, comma-separated or repeated; and the config file."""
    for name, what in (
        ("--select", "only these codes or prefixes (DA1,DA203)"),
        ("--ignore", "not these codes or prefixes"),
        ("--extend-select", "these too, beside select"),
    ):
        command.add_argument(name, action="append", default=[], metavar="CODES", help=what)
    command.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="settings from this file (pyproject.toml: its [tool.driftaudit]; else a "
        "driftaudit.toml)",
    )


def _packs_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--packs", action="append", type=Path, metavar="DIR", help="a directory of packs"
    )
    # the old name, kept so existing scripts run; hidden from --help
    command.add_argument(
        "--rules", action="append", type=Path, dest="packs", help=argparse.SUPPRESS
    )
