"""What `fix` leaves alone and why: findings silenced inline or accepted in the baseline
(as `check` does not report them), and the fix plan the command prints."""

from __future__ import annotations

import shutil

from driftaudit.check import Baseline
from driftaudit.cli import main
from driftaudit.pipeline import run_compare, run_fix
from driftaudit.usage.files import ConsumerFiles

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
    Baseline.of(accepted, ConsumerFiles(consumer)).write(baseline, consumer)
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
    Baseline.of(findings, ConsumerFiles(consumer)).write(
        consumer / ".driftaudit-baseline.json", consumer
    )
    before = (consumer / "scripts" / "launch.sh").read_text()
    argv = ["fix", "--cache-dir", str(cache), "--old", OLD, "--new", NEW, str(consumer)]
    assert main([*argv, "--apply", "--unsafe-fixes"]) == 0
    assert (consumer / "scripts" / "launch.sh").read_text() == before
    err = capsys.readouterr().err
    assert "fixed 0 findings" in err and f"{len(findings)} accepted in the baseline" in err
    # another baseline (an empty one) accepts nothing: everything is fixed
    empty = tmp_path / "none.json"
    Baseline.of([], ConsumerFiles(consumer)).write(empty, consumer)
    assert main([*argv, "--apply", "--baseline", str(empty)]) == 0
    assert (consumer / "scripts" / "launch.sh").read_text() != before


# ---- wrapped dests read in Python: sglang's (renamed) or the consumer's (left) --------

DESTS = FIXTURES / "fix" / "dests"
D_OLD, D_NEW = str(DESTS / "old"), str(DESTS / "new")
RUN_CONFIG = """\
from dataclasses import dataclass


@dataclass
class RunConfig:
    sglang_cuda_graph_bs: str = ""


def argv(cfg: RunConfig) -> list[str]:
    args = ["python", "-m", "sglang.launch_server"]
    if cfg.sglang_cuda_graph_bs:
        args += ["--cuda-graph-bs"] + cfg.sglang_cuda_graph_bs.split()
    return args


CFG = RunConfig(sglang_cuda_graph_bs="1 2 4")
"""


def _dests(tmp_path, drop=(), **files):
    consumer = tmp_path / "consumer"
    shutil.copytree(DESTS / "consumer", consumer)
    for rel in drop:
        (consumer / rel).unlink()
    for name, text in files.items():
        (consumer / "app" / f"{name}.py").write_text(text)
    return consumer


def test_a_dest_of_sglang_flags_the_consumer_registers_is_renamed(tmp_path, cache_dir):
    """`ServerArgs.add_cli_args(parser)` behind a prefixing wrapper: `args.sglang_x` is
    argparse's dest of sglang's own flag, and follows sglang's rename."""
    consumer = _dests(tmp_path)
    arguments = consumer / "app" / "arguments.py"
    before = arguments.read_text()
    safe_only = run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True)
    assert arguments.read_text() == before  # a rename inferred by similarity is unsafe
    assert any(f.path == "app/arguments.py" for f in safe_only.unsafe_held)
    run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True, unsafe_fixes=True)
    after = arguments.read_text()
    assert (
        'return args.sglang_cuda_graph_bs_decode or getattr(args, "sglang_cuda_graph_bs_decode"'
        in after
    )
    assert "if args.sglang_disable_radix_cache:" in after  # unchanged in sglang: left
    assert "--sglang-cuda-graph-bs-decode 1 2 4" in (consumer / "scripts" / "train.sh").read_text()
    left = run_compare(consumer, D_OLD, D_NEW, cache_dir).findings
    assert not [f for f in left if f.code.code == "DA404"]
    again = run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True, unsafe_fixes=True)
    assert not any(c.changed for c in again.changes)


def test_a_field_of_the_consumer_passed_as_a_flag_literal_needs_no_rename(tmp_path, cache_dir):
    """miles' run config: the field is declared, passed as a keyword and read; the flag
    literal next to the read is what reaches sglang, and only that is respelled."""
    consumer = _dests(tmp_path, drop=["app/arguments.py"], run_config=RUN_CONFIG)
    findings = run_compare(consumer, D_OLD, D_NEW, cache_dir).findings
    fields = [f for f in findings if f.path == "app/run_config.py" and f.line in (6, 11)]
    # the read at :11 carries the same fact as the literal at :12, which reports it
    assert {f.line for f in fields} == {6}
    assert all(f.fix.covered_by == "app/run_config.py:12" and not f.fix.edit for f in fields)
    assert all("nothing to rename here" in f.fix.description for f in fields)
    result = run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True, unsafe_fixes=True)
    after = (consumer / "app" / "run_config.py").read_text()
    assert after == RUN_CONFIG.replace('"--cuda-graph-bs"', '"--cuda-graph-bs-decode"')
    assert {(f.path, f.line) for f in result.covered()} >= {(f.path, f.line) for f in fields}
    assert not [f for f in result.needs_a_human() if f.path == "app/run_config.py"]
    again = run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True, unsafe_fixes=True)
    assert not any(c.changed for c in again.changes)
    assert not [f for f in again.needs_a_human() if f.path == "app/run_config.py"]
    # the field is the consumer's own and now passes the new flag: nothing left to report
    after = run_compare(consumer, D_OLD, D_NEW, cache_dir).findings
    assert not [f for f in after if f.path == "app/run_config.py"]


def test_a_dest_the_consumer_also_declares_is_left_to_a_human(tmp_path, cache_dir):
    """The same name is sglang's dest in one file and the consumer's field in another:
    which spellings are sglang's is not known, so nothing is renamed."""
    consumer = _dests(tmp_path, run_config=RUN_CONFIG)
    before = (consumer / "app" / "arguments.py").read_text()
    result = run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True, unsafe_fixes=True)
    assert (consumer / "app" / "arguments.py").read_text() == before
    human = [f for f in result.needs_a_human() if f.path == "app/arguments.py"]
    assert human and "also declares it at app/run_config.py:6" in human[0].fix.description


def test_the_consumers_own_parser_dest_is_not_renamed(tmp_path, cache_dir):
    own = (
        "import argparse\n\n\n"
        "def parser():\n"
        "    p = argparse.ArgumentParser()\n"
        '    p.add_argument("--sglang-cuda-graph-bs", type=str)\n'
        "    return p\n\n\n"
        "def sizes(args):\n"
        "    return args.sglang_cuda_graph_bs.split()\n"
    )
    consumer = _dests(tmp_path, drop=["app/arguments.py"], own_parser=own)
    result = run_fix(consumer, D_OLD, D_NEW, cache_dir, apply=True, unsafe_fixes=True)
    assert (consumer / "app" / "own_parser.py").read_text() == own
    # the read at :11 is the same fact as the consumer's own flag at :6 (one finding there),
    # which is left to a human: its parser is the consumer's
    left = [f for f in result.needs_a_human() if f.path == "app/own_parser.py"]
    assert [f.line for f in left] == [6]
    # compare says so too: the flag names the consumer's own option, no edit is offered
    assert not left[0].fix.autofixable and "consumer's own parser" in left[0].fix.description


# ---- deprecated flags: an alias is respelled, one that needs a value says why --------

DEPRECATED = FIXTURES / "fix" / "deprecated"


def test_a_deprecated_alias_is_respelled_and_a_valued_replacement_is_left(tmp_path, cache_dir):
    consumer = tmp_path / "consumer"
    shutil.copytree(DEPRECATED / "consumer", consumer)
    old, new = str(DEPRECATED / "old"), str(DEPRECATED / "new")
    result = run_fix(consumer, old, new, cache_dir, apply=True)  # safe: sglang's own alias
    script = (consumer / "scripts" / "serve.sh").read_text()
    assert "--model-path m --cuda-graph-max-bs-decode 64\n" in script
    assert "--dp-size 4 --enable-dp-attention\n" in script  # needs a value: a human's
    (human,) = result.needs_a_human()
    assert human.code.code == "DA405" and not human.fix.edit
    assert "`--attn-dp-size <dp-size>` takes a value" in human.fix.description
    again = run_fix(consumer, old, new, cache_dir, apply=True)
    assert not any(c.changed for c in again.changes)


def test_the_fix_command_says_what_needs_no_edit_and_why_the_rest_needs_a_human(tmp_path, capsys):
    consumer = _dests(tmp_path, drop=["app/arguments.py"], run_config=RUN_CONFIG)
    shutil.copy(DEPRECATED / "consumer" / "scripts" / "serve.sh", consumer / "scripts")
    argv = ["fix", "--cache-dir", str(tmp_path / "cache"), "-q", str(consumer)]
    assert main([*argv, "--old", str(DEPRECATED / "old"), "--new", str(DEPRECATED / "new")]) == 1
    err = capsys.readouterr().err
    assert "1 findings need a human:" in err
    assert "scripts/serve.sh:3:" in err and "takes a value; follow the deprecation" in err
    assert main([*argv, "--old", D_OLD, "--new", D_NEW]) == 0
    err = capsys.readouterr().err
    assert "findings need no edit of their own:" in err
    assert "app/run_config.py:6:5 " in err  # a path:line:column, never an emoji
    assert "nothing to rename here" in err


def test_a_wrapped_deprecated_flag_whose_dest_the_consumer_reads_says_so(tmp_path, cache_dir):
    """miles reads `args.sglang_enable_dp_attention` itself: rewriting its scripts to the
    new flag would change its own behaviour, not only sglang's."""
    consumer = tmp_path / "consumer"
    (consumer / "scripts").mkdir(parents=True)
    (consumer / "scripts" / "train.sh").write_text(
        "python train.py --sglang-dp-size 4 --sglang-enable-dp-attention\n"
    )
    (consumer / "check.py").write_text(
        "def validate(args):\n    return args.sglang_enable_dp_attention\n"
    )
    old, new = str(DEPRECATED / "old"), str(DEPRECATED / "new")
    findings = run_compare(consumer, old, new, cache_dir).findings
    (script,) = [f for f in findings if f.path == "scripts/train.sh"]
    assert script.code.code == "DA405" and not script.fix.edit
    assert "reads `sglang_enable_dp_attention` itself (check.py:2)" in script.fix.description


def test_a_field_of_the_consumer_already_passed_as_the_new_flag_is_no_finding(tmp_path, cache_dir):
    """After `fix` respelled miles' `"--sglang-cuda-graph-bs"` literal, its own run-config
    field `sglang_cuda_graph_bs` feeds `--sglang-cuda-graph-bs-decode`: not sglang's name
    (issue 9: consumer-owned names), nothing to report."""
    fixed = RUN_CONFIG.replace('"--cuda-graph-bs"', '"--sglang-cuda-graph-bs-decode"')
    consumer = _dests(tmp_path, run_config=fixed)
    findings = run_compare(consumer, D_OLD, D_NEW, cache_dir).findings
    assert not [f for f in findings if f.path == "app/run_config.py"]
    stale = RUN_CONFIG.replace('"--cuda-graph-bs"', '"--sglang-cuda-graph-bs"')
    (consumer / "app" / "run_config.py").write_text(stale)
    findings = run_compare(consumer, D_OLD, D_NEW, cache_dir).findings
    assert [f for f in findings if f.path == "app/run_config.py"]  # the literal still breaks
