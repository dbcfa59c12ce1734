"""What `fix` leaves alone and why: findings silenced inline or accepted in the baseline
(as `check` does not report them), and the fix plan the command prints."""

from __future__ import annotations

import shutil

from driftaudit.check import Baseline
from driftaudit.cli import main
from driftaudit.pipeline import run_compare, run_fix

from .conftest import FIXTURES

CASE = FIXTURES / "codes" / "DA404"
OLD, NEW = str(CASE / "old"), str(CASE / "new")


def _consumer(tmp_path):
    consumer = tmp_path / "consumer"
    shutil.copytree(CASE / "consumer", consumer)
    return consumer


def test_a_finding_suppressed_inline_is_not_fixed(tmp_path, cache_dir):
    consumer = _consumer(tmp_path)
    script = consumer / "scripts" / "launch.sh"
    text = script.read_text().replace(
        "--disable-radix  # expect: DA404", "--disable-radix  # driftaudit: ignore[DA404]"
    )
    script.write_text(text)
    result = run_fix(consumer, OLD, NEW, cache_dir, apply=True, unsafe_fixes=True)
    after = script.read_text()
    assert "--model-path m --disable-radix  # driftaudit: ignore[DA404]" in after  # left
    yaml = (consumer / "configs" / "serve.yaml").read_text()
    assert "  disable-radix-cache: true  # expect" in yaml  # the same flag elsewhere is fixed
    assert [(f.path, f.line) for f in result.suppressed] == [("scripts/launch.sh", 3)]
    assert all(f.line != 3 or f.path != "scripts/launch.sh" for f in result.needs_a_human())
    # a suppression of another code silences nothing: that finding is fixed
    script.write_text(text.replace("ignore[DA404]", "ignore[DA201]"))
    run_fix(consumer, OLD, NEW, cache_dir, apply=True, unsafe_fixes=True)
    assert "--disable-radix-cache  # driftaudit: ignore[DA201]" in script.read_text()


def test_a_finding_in_the_baseline_is_not_fixed(tmp_path, cache_dir):
    consumer = _consumer(tmp_path)
    findings = run_compare(consumer, OLD, NEW, cache_dir).findings
    accepted = [f for f in findings if f.path == "configs/serve.yaml"]
    assert accepted
    baseline = consumer / ".driftaudit-baseline.json"
    Baseline.of(accepted, consumer).write(baseline)
    yaml_before = (consumer / "configs" / "serve.yaml").read_text()
    result = run_fix(consumer, OLD, NEW, cache_dir, apply=True, baseline=baseline)
    assert (consumer / "configs" / "serve.yaml").read_text() == yaml_before
    assert "--disable-radix-cache  # expect" in (consumer / "scripts" / "launch.sh").read_text()
    assert {f.path for f in result.known} == {"configs/serve.yaml"}
    assert not any(f.path == "configs/serve.yaml" for f in result.needs_a_human())


def test_fix_command_reads_the_default_baseline_as_check_does(tmp_path, capsys):
    consumer = _consumer(tmp_path)
    cache = tmp_path / "cache"
    findings = run_compare(consumer, OLD, NEW, cache).findings
    Baseline.of(findings, consumer).write(consumer / ".driftaudit-baseline.json")
    before = (consumer / "scripts" / "launch.sh").read_text()
    argv = ["fix", "--cache-dir", str(cache), "--old", OLD, "--new", NEW, str(consumer)]
    assert main([*argv, "--apply", "--unsafe-fixes"]) == 0
    assert (consumer / "scripts" / "launch.sh").read_text() == before
    err = capsys.readouterr().err
    assert "fixed 0 findings" in err and f"{len(findings)} accepted in the baseline" in err
    # another baseline (an empty one) accepts nothing: everything is fixed
    empty = tmp_path / "none.json"
    Baseline.of([], consumer).write(empty)
    assert main([*argv, "--apply", "--baseline", str(empty)]) == 0
    assert (consumer / "scripts" / "launch.sh").read_text() != before
