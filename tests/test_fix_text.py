"""Before/after tests for replace-text, the edit that respells a renamed flag where the
consumer wrote it: a span of a script, config or Dockerfile (re-parsed as its format), a
Python string literal or name (libcst). With what each must leave alone: comments, help
and log texts, docstrings, the consumer's own parser, a longer flag sharing the prefix."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from driftaudit.fix.apply import rewrite
from driftaudit.fix.edits import Edit
from driftaudit.fix.formats import format_of, format_problem
from driftaudit.fix.text import splice
from driftaudit.match.renames import respell
from driftaudit.pipeline import run_compare, run_fix

from .conftest import FIXTURES

OLD, NEW = "--sglang-cuda-graph-bs", "--sglang-cuda-graph-bs-decode"


def at(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """(line, 1-based character column) of the nth occurrence of needle."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def edit(path: str, text: str, old: str, new: str, nth: int = 0) -> Edit:
    line, column = at(text, old, nth)
    return Edit(path, line, column, "replace-text", {"old": old, "new": new})


def run(path: str, before: str, *edits: Edit) -> str:
    return rewrite(path, before, list(edits)).after


def check(path: str, before: str, after: str, *spans: tuple[str, str, int]) -> None:
    before, after = textwrap.dedent(before), textwrap.dedent(after)
    edits = [edit(path, before, old, new, nth) for old, new, nth in spans]
    result = run(path, before, *edits)
    assert result == after
    assert run(path, result, *edits) == result, "a second run changes nothing"


# ---- respelling -------------------------------------------------------------------


def test_respell_keeps_the_wrapping_and_the_spelling():
    assert respell(OLD, "--cuda-graph-bs", "--cuda-graph-bs-decode") == NEW
    assert respell("sglang_nsa_decode_backend", "--nsa-decode-backend", "--dsa-decode-backend") == (
        "sglang_dsa_decode_backend"
    )
    assert respell("cuda_graph_max_bs", "--cuda-graph-max-bs", "--x-y") == "x_y"
    assert respell("--tp", "--cuda-graph-bs", "--y") is None  # not that flag
    assert respell("--x", "--x", "--y=on") is None  # a value to add: no rename


# ---- scripts, configs, Dockerfiles ------------------------------------------------


def test_shell_flag_is_respelled_and_its_prefix_twin_left_alone():
    check(
        "run.sh",
        """\
        #!/bin/bash
        # --sglang-cuda-graph-bs in a comment stays
        python train.py --sglang-cuda-graph-bs-other 1 --sglang-cuda-graph-bs 1 2 4 \\
           --sglang-tp-size 2
        """,
        """\
        #!/bin/bash
        # --sglang-cuda-graph-bs in a comment stays
        python train.py --sglang-cuda-graph-bs-other 1 --sglang-cuda-graph-bs-decode 1 2 4 \\
           --sglang-tp-size 2
        """,
        (OLD, NEW, 2),
    )


def test_a_span_that_is_a_longer_flag_or_a_comment_is_not_edited():
    text = "x --sglang-cuda-graph-bs-other 1  # --sglang-cuda-graph-bs\n"
    wrong = Edit("run.sh", 1, 3, "replace-text", {"old": OLD, "new": NEW})
    after, applied, skipped = splice(text, [wrong])
    assert after == text and not applied and skipped


def test_columns_are_characters_after_non_ascii_text():
    before = "echo 'café ☕' && python train.py --sglang-cuda-graph-bs 8\n"
    line, column = at(before, OLD)
    assert column < len(before[: before.index(OLD)].encode("utf-8")) + 1  # chars, not bytes
    after = run(
        "run.sh", before, Edit("run.sh", line, column, "replace-text", {"old": OLD, "new": NEW})
    )
    assert after == before.replace(OLD, NEW)


def test_yaml_key_and_crlf_kept():
    before = "sglang:\r\n  name: ünïcode\r\n  cuda_graph_max_bs: 8\r\ntraining:\r\n  x: 1\r\n"
    line, column = at(before.replace("\r\n", "\n"), "cuda_graph_max_bs")
    change = rewrite(
        "c.yaml",
        before,
        [
            Edit(
                "c.yaml",
                line,
                column,
                "replace-text",
                {"old": "cuda_graph_max_bs", "new": "cuda_graph_max_bs_decode"},
            )
        ],
    )
    assert change.after == before.replace("cuda_graph_max_bs", "cuda_graph_max_bs_decode")
    assert change.applied


def test_toml_json_and_dockerfile_spans():
    check(
        "c.toml",
        "[sglang]\ncuda-graph-bs = [1, 2]\n",
        "[sglang]\ncuda-graph-bs-decode = [1, 2]\n",
        ("cuda-graph-bs", "cuda-graph-bs-decode", 0),
    )
    check(
        "c.json",
        '{"args": ["--cuda-graph-bs", "8"]}\n',
        '{"args": ["--cuda-graph-bs-decode", "8"]}\n',
        ("--cuda-graph-bs", "--cuda-graph-bs-decode", 0),
    )
    check(
        "Dockerfile",
        "FROM x\nCMD python -m sglang.launch_server --cuda-graph-bs 8\n",
        "FROM x\nCMD python -m sglang.launch_server --cuda-graph-bs-decode 8\n",
        ("--cuda-graph-bs", "--cuda-graph-bs-decode", 0),
    )


@pytest.mark.parametrize(
    ("path", "before", "old", "new"),
    [
        ("c.yaml", "sglang:\n  a_b: 1\n", "a_b", "a: b"),
        ("c.json", '{"a_b": 1}\n', "a_b", 'a"'),
        ("c.toml", "a_b = 1\n", "a_b", "a b"),
    ],
)
def test_a_result_that_does_not_parse_leaves_the_file_unchanged(path, before, old, new):
    change = rewrite(path, before, [edit(path, before, old, new)])
    assert change.after == before and not change.applied
    assert "would not parse" in change.skipped[0][1]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_shell_result_is_checked_with_bash_n():
    assert format_problem("run.sh", "echo --a\n", "echo --a (\n") is not None
    assert format_problem("run.sh", "echo --a\n", "echo --b\n") is None
    assert format_of("scripts/launch", "#!/usr/bin/env bash\necho\n") == "shell"


def test_a_template_that_did_not_parse_is_held_to_its_exact_text_only():
    before = "sglang:\n  {{ x }}: 1\n  cuda_graph_bs: 2\n"
    after = run("c.yaml", before, edit("c.yaml", before, "cuda_graph_bs", "cuda_graph_bs_decode"))
    assert after == before.replace("cuda_graph_bs", "cuda_graph_bs_decode")


# ---- Python strings and names -------------------------------------------------------


def test_python_strings_keep_prefix_and_quotes():
    check(
        "m.py",
        """\
        args = ["--sglang-cuda-graph-bs", "8"]
        extra = (
            "--sglang-tp-size 2 "
            f"--sglang-cuda-graph-bs {' '.join(bs)} "
            r'--sglang-cuda-graph-bs 1'
        )
        """,
        """\
        args = ["--sglang-cuda-graph-bs-decode", "8"]
        extra = (
            "--sglang-tp-size 2 "
            f"--sglang-cuda-graph-bs-decode {' '.join(bs)} "
            r'--sglang-cuda-graph-bs-decode 1'
        )
        """,
        (OLD, NEW, 0),
        (OLD, NEW, 1),
        (OLD, NEW, 2),
    )


def test_python_names_and_getattr_strings():
    check(
        "m.py",
        """\
        class Config:
            sglang_cuda_graph_bs: str | None = None  # é

        def f(cfg, args):
            return cfg.sglang_cuda_graph_bs, getattr(args, "sglang_cuda_graph_bs")
        """,
        """\
        class Config:
            sglang_cuda_graph_bs_decode: str | None = None  # é

        def f(cfg, args):
            return cfg.sglang_cuda_graph_bs_decode, getattr(args, "sglang_cuda_graph_bs_decode")
        """,
        ("sglang_cuda_graph_bs", "sglang_cuda_graph_bs_decode", 0),
        ("sglang_cuda_graph_bs", "sglang_cuda_graph_bs_decode", 1),
        ("sglang_cuda_graph_bs", "sglang_cuda_graph_bs_decode", 2),
    )


def test_python_non_ascii_before_the_flag():
    check(
        "m.py",
        'cmd = "écho ☕ --sglang-cuda-graph-bs 8"\n',
        'cmd = "écho ☕ --sglang-cuda-graph-bs-decode 8"\n',
        (OLD, NEW, 0),
    )


@pytest.mark.parametrize(
    "source",
    [
        "x = 1  # --sglang-cuda-graph-bs\n",
        'parser.add_argument("--x", help="like --sglang-cuda-graph-bs")\n',
        'parser.add_argument("--sglang-cuda-graph-bs", type=int)\n',
        'print("pass --sglang-cuda-graph-bs 8")\n',
        'logger.warning(f"pass --sglang-cuda-graph-bs {n}")\n',
        'raise ValueError("--sglang-cuda-graph-bs is gone")\n',
        'def f():\n    """Pass --sglang-cuda-graph-bs."""\n',
        'cmd = "--sglang-cuda-graph-bs-other 8"\n',
    ],
)
def test_python_prose_comments_and_own_parser_are_left_alone(source):
    line, column = at(source, OLD)
    change = rewrite(
        "m.py", source, [Edit("m.py", line, column, "replace-text", {"old": OLD, "new": NEW})]
    )
    assert change.after == source and not change.applied
    if "#" not in source and "-other" not in source:
        assert "left alone" in change.skipped[0][1]


# ---- end to end: compare -> fix --apply -> compare --------------------------------

CASE = FIXTURES / "codes" / "DA404"


def test_fix_reaches_every_surface_and_a_second_run_is_a_no_op(tmp_path, cache_dir):
    consumer = tmp_path / "consumer"
    shutil.copytree(CASE / "consumer", consumer)
    old, new = str(CASE / "old"), str(CASE / "new")
    before = run_compare(consumer, old, new, cache_dir).findings
    named = [f for f in before if f.fix and f.fix.autofixable]
    assert named
    result = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=True)
    assert result.written
    script = (consumer / "scripts/launch.sh").read_text()
    assert "--model-path m --disable-radix-cache  # expect" in script
    assert "# python -m sglang.launch_server --enable-piecewise" in script  # comment kept
    config = (consumer / "configs/serve.yaml").read_text()
    assert "  disable-radix-cache: true  # expect" in config
    assert "training:\n  disable-radix: true" in config  # not sglang's section
    code = (consumer / "app/launch.py").read_text()
    assert 'parser.add_argument("--disable-radix", action="store_true")' in code  # its own
    assert 'parser.add_argument("--sglang-disable-radix"' in code  # its own parser's flag
    after = run_compare(consumer, old, new, cache_dir).findings
    fixed = {(f.path, f.line, f.code.code) for f in named} - {
        (f.path, f.line, f.code.code) for f in after
    }
    assert {p for p, _, _ in fixed} == {"scripts/launch.sh", "configs/serve.yaml"}
    again = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=True)
    assert not any(c.changed for c in again.changes)


def test_a_dest_the_consumer_reads_in_python_is_not_renamed(tmp_path, cache_dir):
    """`cfg.sglang_x` names the consumer's own config field (declared and passed as a
    keyword elsewhere): renaming one spelling would break the others (miles' run config).
    The flag literal it feeds carries the finding; the field and its read do not (one fact,
    one finding)."""
    consumer = tmp_path / "consumer"
    shutil.copytree(CASE / "consumer", consumer)
    code = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass RunConfig:\n"
        "    sglang_disable_radix: bool = False\n\n\n"
        "def argv(cfg):\n"
        "    if cfg.sglang_disable_radix:\n"
        '        return ["--sglang-disable-radix"]\n'
        "    return []\n\n\n"
        "CFG = RunConfig(sglang_disable_radix=True)\n"
    )
    (consumer / "app" / "own_config.py").write_text(code)
    old, new = str(CASE / "old"), str(CASE / "new")
    findings = run_compare(consumer, old, new, cache_dir).findings
    lines = {f.line for f in findings if f.path == "app/own_config.py"}
    assert 11 in lines and not lines & {6, 10}
    run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=True)
    after = (consumer / "app" / "own_config.py").read_text()
    assert "    sglang_disable_radix: bool = False\n" in after  # the declaration is untouched
    assert "CFG = RunConfig(sglang_disable_radix=True)" in after
    assert "    if cfg.sglang_disable_radix:\n" in after
    assert '"--sglang-disable-radix-cache"' in after  # the flag string itself is respelled


# ---- ServerArgs keywords and keyword-dict keys --------------------------------------

KEYWORDS = FIXTURES / "codes" / "DA401-replacement"
KEYWORD_CONSUMER = """\
from sglang.srt.server_args import ServerArgs


def build(m):
    return ServerArgs(model_path=m, prefill_cp_mode="zigzag", enable_gdn_replay_spec=True)


KW = {"model_path": "m", 'prefill_cp_mode': "zigzag", "enable_trace": True}
ServerArgs(**KW)
"""


@pytest.mark.parametrize("unsafe", [False, True])
def test_server_args_keywords_and_dict_keys_renamed(tmp_path, cache_dir, unsafe):
    consumer = tmp_path / "consumer"
    (consumer / "app").mkdir(parents=True)
    (consumer / "app" / "kw.py").write_text(KEYWORD_CONSUMER)
    old, new = str(KEYWORDS / "old"), str(KEYWORDS / "new")
    run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=unsafe)
    code = (consumer / "app" / "kw.py").read_text()
    # a deprecation of the old release named it: safe
    assert 'ServerArgs(model_path=m, cp_strategy="zigzag", ' in code
    assert "'cp_strategy': \"zigzag\"" in code  # quotes kept
    assert '"enable_trace": True' in code  # no replacement: left alone
    # found by name and help similarity only: unsafe
    renamed = "enable_linear_replay_spec=True" in code
    assert renamed == unsafe and ("enable_gdn_replay_spec=True" in code) != unsafe
    again = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=unsafe)
    assert not any(c.changed for c in again.changes)


def test_rename_key_leaves_other_keys_and_escaped_spellings():
    before = 'd = {"a_b": 1, "a\\x5fb": 2}\nf(**dict(a_b=1, c=2))\n'
    change = rewrite(
        "m.py",
        before,
        [
            Edit("m.py", 1, 6, "rename-key", {"old": "a_b", "new": "x"}),
            Edit("m.py", 1, 16, "rename-key", {"old": "a_b", "new": "x"}),
            Edit("m.py", 2, 10, "rename-key", {"old": "a_b", "new": "x"}),
        ],
    )
    assert change.after == 'd = {"x": 1, "a\\x5fb": 2}\nf(**dict(x=1, c=2))\n'
    assert len(change.applied) == 2


# ---- enum members drift found renamed -------------------------------------------------

ENUMS = FIXTURES / "codes" / "DA302-renamed"


@pytest.mark.parametrize("unsafe", [False, True])
def test_enum_member_renamed_only_with_unsafe_fixes(tmp_path, cache_dir, unsafe):
    consumer = tmp_path / "consumer"
    shutil.copytree(ENUMS / "consumer", consumer)
    before = (consumer / "use.py").read_text()
    old, new = str(ENUMS / "old"), str(ENUMS / "new")
    run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=unsafe)
    after = (consumer / "use.py").read_text()
    if not unsafe:
        assert after == before
        return
    assert "batch.mode == ForwardMode.DRAFT_EXTEND_V2:" in after
    assert "return modes.ForwardMode.DRAFT_EXTEND_V2" in after
    assert "LocalMode.DRAFT_EXTEND\n" in after  # the consumer's own class
    assert not run_compare(consumer, old, new, cache_dir).findings


def test_two_flags_in_one_python_string_and_one_shell_line():
    pairs = [("--cuda-graph-bs", "--cuda-graph-bs-decode"), ("--cuda-graph-max-bs",
             "--cuda-graph-max-bs-decode")]  # fmt: skip
    for path, text in [
        ("m.py", 'cmd = "sglang serve --cuda-graph-bs 1 --cuda-graph-max-bs 2"\n'),
        ("run.sh", "sglang serve --cuda-graph-bs 1 --cuda-graph-max-bs 2\n"),
    ]:
        after = text.replace("-bs 1", "-bs-decode 1").replace("-bs 2", "-bs-decode 2")
        check(path, text, after, *[(o, n, 0) for o, n in pairs])
