"""Regenerate every published audit in reports/ from reports/audits.toml.

    python reports/regenerate.py --consumers /work/consumers --mirrors /work/.mirror
    python reports/regenerate.py --only verl        # entries whose name contains `verl`

Repository consumers come from a checkout (--consumers) or a git mirror (--mirrors,
exported at the commit); released consumers are downloaded from the package index and
audited from the sglang version they pin. An audit whose consumer cannot be found is
skipped and its page kept. The table in reports/README.md is rewritten from the pages.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from driftaudit.check import triage
from driftaudit.errors import DriftauditError
from driftaudit.pipeline import date_findings, run_compare
from driftaudit.report import findings_markdown
from driftaudit.sources.latest import resolve_latest
from driftaudit.store.db import default_cache_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
_ROW = re.compile(r"^<!-- audit: (?P<json>.*) -->$", re.M)


def _git_export(repo_dir: Path, commit: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "--git-dir", str(repo_dir), "archive", "--format=tar", commit],
        capture_output=True,
    )
    if archive.returncode != 0:
        raise DriftauditError(f"{repo_dir}: no commit {commit}")
    tar_path = dest.with_suffix(".tar")
    tar_path.write_bytes(archive.stdout)
    with tarfile.open(tar_path) as tf:
        tf.extractall(dest, filter="data")
    return dest


def _repo_consumer(entry: dict, args, work: Path) -> Path | None:
    if args.consumers and entry.get("checkout"):
        path = args.consumers / entry["checkout"]
        if path.is_dir():
            return path
    if args.mirrors:
        slug = entry["repo"].replace("/", "+")
        for candidate in (args.mirrors / slug / "repo", args.mirrors / slug):
            git_dir = candidate / ".git" if (candidate / ".git").is_dir() else candidate
            if (git_dir / "HEAD").is_file():
                return _git_export(git_dir, entry["commit"], work / f"{slug}-{entry['commit']}")
    return None


def _unpack(archive: Path, dest: Path) -> Path:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
        return dest
    with tarfile.open(archive) as tf:
        tf.extractall(dest, filter="data")
    (top,) = [p for p in dest.iterdir() if p.is_dir()]  # an sdist has one top folder
    return top


def _sglang_pin(root: Path) -> str | None:
    """The exact sglang version a wheel's (or sdist's) metadata pins, if any."""
    for meta in [*root.glob("*.dist-info/METADATA"), *root.glob("PKG-INFO")]:
        message = Parser().parsestr(meta.read_text(errors="replace"))
        for line in message.get_all("Requires-Dist") or []:
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            pins = [s.version for s in requirement.specifier if s.operator in ("==", "===")]
            if requirement.name.lower() == "sglang" and pins:
                return pins[0]
    return None


def _package_consumer(entry: dict, work: Path) -> tuple[Path, str]:
    download = work / f"{entry['package']}-{entry['version']}-download"
    download.mkdir(parents=True, exist_ok=True)
    spec = f"{entry['package']}=={entry['version']}"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(download), spec],
        capture_output=True,
        text=True,
    )
    archives = sorted(download.glob("*.whl")) or sorted(download.glob("*.tar.gz"))
    if result.returncode != 0 or not archives:
        raise DriftauditError(f"cannot download {spec}: {result.stderr.strip()[-200:]}")
    root = _unpack(archives[0], work / f"{entry['package']}-{entry['version']}")
    pin = _sglang_pin(root)
    if pin is None:
        raise DriftauditError(f"{spec} pins no exact sglang version in its metadata")
    return root, pin


def audit(entry: dict, args, work: Path, cache_dir: Path) -> Path | None:
    new = resolve_latest(entry["new"], cache_dir, args.offline)
    if "package" in entry:
        name = f"{entry['package']}-{entry['version']}"
        consumer, old = _package_consumer(entry, work)
        title = f"driftaudit: {entry['package']} {entry['version']} (package index)"
        how = (
            f"`{entry['package']}=={entry['version']}` as released on the package index, which "
            f"pins `sglang=={old}`, audited against sglang {new}"
            + (" (the newest release)" if entry["new"] == "latest" else "")
            + "."
        )
        upgrade = f"{old} -> {new}"
    else:
        name = f"{entry['repo'].split('/')[-1].lower()}-{entry['commit']}"
        consumer = _repo_consumer(entry, args, work)
        if consumer is None:
            print(f"skip {name}: no checkout or mirror of {entry['repo']}", file=sys.stderr)
            return None
        old = entry["old"]
        title = f"driftaudit: {entry['repo']} @ {entry['commit']}"
        how = f"{entry['repo']} at commit `{entry['commit']}`, sglang {old} -> {new}."
        upgrade = f"{old} -> {new}"
    result = run_compare(consumer, old, new, cache_dir)
    findings = triage(result.findings, result.files).findings  # the consumer's suppressions
    date_findings(findings, result.old, result.new, cache_dir, offline=False)  # introduced
    regenerate = f"Regenerate: `python reports/regenerate.py --only {name}`."
    page = HERE / f"{name}-sglang-{old}-to-{new}.md"
    text = findings_markdown(
        findings, result.old, result.new, name, title=title, preamble=how + " " + regenerate
    )
    row = {
        "page": page.name,
        "consumer": entry.get("repo", entry.get("package")),
        "at": entry.get("commit", entry.get("version")),
        "upgrade": upgrade,
        "findings": len(findings),
        "errors": sum(f.severity == "error" for f in findings),
    }
    page.write_text(text + f"\n<!-- audit: {json.dumps(row)} -->\n", encoding="utf-8")
    print(f"{page.name}: {len(findings)} findings", file=sys.stderr)
    return page


def write_index() -> None:
    rows = []
    for page in sorted(HERE.glob("*.md")):
        match = _ROW.search(page.read_text(encoding="utf-8"))
        if match and page.name != "README.md":
            rows.append(json.loads(match.group("json")))
    rows.sort(key=lambda r: (r["consumer"].lower(), r["at"]))
    lines = [
        "# Published audits",
        "",
        "driftaudit on public consumers of sglang: projects on GitHub at a given commit, and",
        "released packages from the package index audited from the sglang version they pin to",
        "the newest release. Each page starts with what to fix, by rule and by sglang symbol.",
        "",
        "Regenerate them all with `python reports/regenerate.py --consumers DIR --mirrors DIR`",
        "(the list is `reports/audits.toml`; the consumers are not vendored here).",
        "",
        "| audit | consumer | at | sglang upgrade | findings | errors |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        lines.append(
            f"| [{row['page']}]({row['page']}) | {row['consumer']} | {row['at']} | "
            f"{row['upgrade']} | {row['findings']} | {row['errors']} |"
        )
    (HERE / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", type=Path, default=HERE / "audits.toml")
    parser.add_argument("--consumers", type=Path, help="checkouts, named as `checkout`")
    parser.add_argument("--mirrors", type=Path, help="git mirrors, named OWNER+NAME")
    parser.add_argument("--only", help="audits whose page name contains this")
    parser.add_argument("--offline", action="store_true", help="latest = newest cached release")
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    cache_dir = args.cache_dir or default_cache_dir()
    entries = tomllib.loads(args.list.read_text(encoding="utf-8"))["audit"]
    status = 0
    with tempfile.TemporaryDirectory(prefix="driftaudit-reports-") as tmp:
        for entry in entries:
            key = entry.get("package") or entry["repo"].split("/")[-1].lower()
            label = f"{key}-{entry.get('version') or entry.get('commit')}"
            if args.only and args.only.lower() not in label.lower():
                continue
            try:
                audit(entry, args, Path(tmp), cache_dir)
            except DriftauditError as exc:
                print(f"error: {label}: {exc}", file=sys.stderr)
                status = 1
    write_index()
    return status


if __name__ == "__main__":
    sys.exit(main())
