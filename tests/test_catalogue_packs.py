"""The catalogue's pack and fixer cases: a pack from `--packs DIR` is trusted less than
code (its regexes run on lines anyone who opens a pull request writes, its codemods on
the consumer's code), and a fix is reported only when a re-audit confirms it.

- a pack regex runs on RE2, in time linear in the line whatever the pattern; what RE2
  cannot run is refused on load (one line, exit 2);
- codemod parameters are checked on load against each primitive's declared parameters
  (one line naming the file, the entry and the parameter, exit 2), never a traceback;
- `fix` keeps an edit only when a re-audit of the fixed files no longer reports its
  finding and reports nothing new; in diff mode it exits 1 when the diff is not empty.
"""

from __future__ import annotations

import json
import shutil
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftaudit.cli import main
from driftaudit.packs import MAX_TEXT_LINE

from .conftest import FIXTURES, write_tree

TREES = FIXTURES / "packs" / "sglang-0.5.14"
OLD, NEW = str(TREES / "old"), str(TREES / "new")
HEADER = '[pack]\nname = "p"\nfrom = "0.5.9"\nto = "0.5.14"\n'
ENTRY = '[[entry]]\nid = "e"\nintroduced = "0.5.13"\nmessage = "m"\nevidence = "ev"\n'


@contextmanager
def _no_hang(seconds: int):
    """Fail instead of hanging: a backtracking engine would not finish these at all."""

    def stop(*_):
        raise AssertionError(f"still matching after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _packs(tmp_path: Path, body: str) -> Path:
    return write_tree(tmp_path / "packs", {"p.toml": HEADER + body})


def _argv(command: str, tmp_path: Path, consumer: Path, packs: Path, *more: str) -> list[str]:
    cache = str(tmp_path / "cache")
    base = [command, "--cache-dir", cache, "--old", OLD, "--new", NEW, "--packs", str(packs)]
    return [*base, *more, str(consumer)]


def _one_line_error(capsys, argv: list[str], *needles: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err, err
    assert len(err.splitlines()) == 1 and err.startswith("driftaudit: error: "), err
    for needle in needles:
        assert needle in err, err
    return err


# ---- regexes -------------------------------------------------------------------------

# (pattern, what makes a backtracking engine take exponential or high-polynomial time)
PATHOLOGICAL = [
    r"^(a|a)*$",  # overlapping alternation
    r"^(a|aa)*$",
    r"(a+)+$",  # nested quantifiers
    r"(\w+\s?)*$",
    r"^(a*)*b",
    r"(.*a){12}!",  # polynomial: n**12 ways to split the line
    r"(?:a*b*){100}c",  # a program near the size cap
]


@pytest.mark.parametrize("regex", PATHOLOGICAL)
def test_pathological_regexes_run_in_linear_time_on_long_lines(capsys, tmp_path, regex):
    """Every line as long as a text pattern reads (MAX_TEXT_LINE), built to make a
    backtracking engine try every way to match: 200 of them take RE2 milliseconds."""
    long_line = "a" * (MAX_TEXT_LINE - 1) + "!"
    consumer = write_tree(
        tmp_path / "c",
        {"Dockerfile": "FROM x\n" + (long_line + "\n") * 200 + "a" * 10 + "\n"},
    )
    regex_toml = regex.replace("\\", "\\\\")
    pattern = f'pattern = {{ kind = "text", regex = "{regex_toml}", glob = "Dockerfile" }}\n'
    packs = _packs(tmp_path, ENTRY + pattern)
    with _no_hang(60):
        code = main(_argv("compare", tmp_path, consumer, packs, "--format", "json"))
    out = capsys.readouterr()
    assert code == 0 and "Traceback" not in out.err
    lines = {f["line"] for f in json.loads(out.out)["findings"] if f["rule"] == "DA902"}
    expected = {
        # the last line, ten `a`s, matches the patterns that need no `!`
        r"^(a|a)*$": {202},
        r"^(a|aa)*$": {202},
        r"(a+)+$": {202},
        r"(\w+\s?)*$": set(range(1, 203)),  # `$` can always match an empty run at the end
        r"^(a*)*b": set(),
        r"(.*a){12}!": set(range(2, 202)),
        r"(?:a*b*){100}c": set(),
    }[regex]
    assert lines == expected


@pytest.mark.parametrize(
    ("field", "regex", "needle"),
    [
        ("regex", r"(a+)\\1", "invalid escape sequence"),  # backreference
        ("regex", r"(?<![/\\w])tilelang", "invalid perl operator: (?<"),  # lookbehind
        ("regex", r"tilelang(?=\\s*==)", "invalid perl operator: (?="),  # lookahead
        ("unless", r"(?!a)", "invalid perl operator: (?!"),
        ("regex", r"(?:a*b*){999}c", "more than 500"),  # a program over the cap
        ("regex", r"(\n", "missing ): (\\n"),  # the pattern's newline, escaped: one line
    ],
)
def test_regexes_the_linear_engine_cannot_run_are_refused(capsys, tmp_path, field, regex, needle):
    consumer = write_tree(tmp_path / "c", {"Dockerfile": "FROM x\n"})
    fields = f'regex = "x", {field} = "{regex}"' if field != "regex" else f'regex = "{regex}"'
    packs = _packs(tmp_path, ENTRY + f'pattern = {{ kind = "text", {fields} }}\n')
    argv = _argv("compare", tmp_path, consumer, packs)
    _one_line_error(capsys, argv, "p.toml", "entry 'e'", f"`{field}`", needle)


# ---- codemod parameters ---------------------------------------------------------------

MEMBER = (
    'pattern = { kind = "member", class = "sglang.srt.managers.schedule_batch.Req", '
    'member = "fill_ids", access = "store" }\n'
)


@pytest.mark.parametrize(
    ("step", "parameter"),
    [
        ('primitive = "rewrite-assignment"\nold = 1\nmember = "m"', "`old`"),
        ('primitive = "rewrite-assignment"\nold = "fill_ids"\nmember = ["m"]', "`member`"),
        ('primitive = "rewrite-assignment"\nold = "a"\nmember = "b"\nvalue = 3', "`value`"),
        ('primitive = "rewrite-assignment"\nold = "a"\nmember = "b"\nafter = "x"', "`after`"),
        ('primitive = "rewrite-assignment"\nold = "a"\nmember = "b"\nimports = "a"', "`imports`"),
        ('primitive = "pad-unpack"\nslots = { a = 1 }', "`slots`"),
        ('primitive = "replace-callee"\nmodule = 5\nname = "f"', "`module`"),
        ('primitive = "replace-text"\nold = "a"\nnew = 1.5', "`new`"),
        ('primitive = "move-import"\nname = "x"\nnew_module = "m"\nnew_name = 1', "`new_name`"),
        ('primitive = "drop-keyword"\nkeyword = "k"\nat = [1, 1]', "'at'"),
    ],
)
def test_codemod_parameters_of_the_wrong_type_are_one_line(capsys, tmp_path, step, parameter):
    consumer = shutil.copytree(TREES / "consumer", tmp_path / "c")
    packs = _packs(tmp_path, ENTRY + MEMBER + "[[entry.codemod]]\n" + step + "\n")
    _one_line_error(
        capsys, _argv("fix", tmp_path, consumer, packs), "p.toml", "entry 'e'", parameter
    )


def _toml(value) -> str:
    """A TOML value (strings as JSON writes them: valid TOML basic strings, or a TOML
    error for a lone surrogate, which is bad input too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"


_SCALARS = (
    st.text(max_size=12)
    | st.sampled_from(["fill_ids", "x", "sglang.srt.a", "{receiver}.n", "{value}", "", "a b"])
    | st.integers(-3, 3)
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=6,
)
_PRIMITIVES = [
    "add-import", "drop-keyword", "move-import", "pad-unpack", "rename-attribute",
    "rename-import", "rename-key", "rename-keyword", "replace-callee",
    "replace-len-of-member", "replace-text", "replace-with-receiver", "rewrite-assignment",
]  # fmt: skip
_PARAMETERS = [
    "module", "name", "keyword", "new_module", "new_name", "slots", "old", "new",
    "drop_first_argument", "member", "template", "method", "value", "after", "imports",
    "at", "kind",
]  # fmt: skip
_STEPS = st.fixed_dictionaries(
    {"primitive": st.sampled_from(_PRIMITIVES) | _VALUES},
    optional={name: _VALUES for name in _PARAMETERS},
)
_PATTERNS = st.sampled_from(
    [
        {
            "kind": "member",
            "class": "sglang.srt.managers.schedule_batch.Req",
            "member": "fill_ids",
            "access": "store",
        },
        {
            "kind": "call",
            "symbol": "sglang.srt.managers.scheduler.Scheduler.prepare_mlp_sync_batch_raw",
        },
        {"kind": "text", "regex": "fill_ids", "glob": "*.py"},
    ]
) | st.dictionaries(
    st.sampled_from(["kind", "class", "member", "symbol", "regex", "glob", "unless", "access"]),
    _VALUES | st.sampled_from(["member", "call", "text", "import", "(a|a)*", "*.py"]),
    max_size=4,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pattern=_PATTERNS, steps=st.lists(_STEPS, max_size=3), within=st.none() | _PATTERNS)
def test_any_pack_toml_gives_an_exit_code_never_a_traceback(
    capsys, tmp_path_factory, pattern, steps, within
):
    """Random keys, values and types in patterns and codemod steps: `fix` (which loads the
    pack, matches it and runs its codemods) exits 0, 1 or 2, with one line for 2."""
    tmp_path = tmp_path_factory.mktemp("fuzz")
    consumer = shutil.copytree(TREES / "consumer", tmp_path / "c")
    body = ENTRY + f"pattern = {_toml(pattern)}\n"
    if within is not None:
        body += f"within = {_toml(within)}\n"
    for step in steps:
        body += "[[entry.codemod]]\n" + "".join(
            f"{json.dumps(k)} = {_toml(v)}\n" for k, v in step.items()
        )
    packs = _packs(tmp_path, body)
    code = main(_argv("fix", tmp_path, consumer, packs, "--unsafe-fixes", "-q"))
    err = capsys.readouterr().err
    assert code in (0, 1, 2) and "Traceback" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1, err


# ---- the fixer: re-audited, and its exit code --------------------------------------

SCHEDULER_OLD = """\
class Scheduler:
    def prepare_batch(self, batch, dp_size):
        return batch

    def launch(self, batch):
        return batch
"""
SCHEDULER_NEW = """\
class Scheduler:
    pass
"""
DP_ATTN = """\
def prepare_batch(batch, *, dp_size, attn_tp_size):
    return batch


def launch(batch):
    return batch
"""
CONSUMER = """\
from sglang.srt.scheduler import Scheduler


def step(scheduler, batch):
    Scheduler.prepare_batch(scheduler, batch, dp_size=1)
    return Scheduler.launch(scheduler, batch)
"""
REPLACE_CALLEE = """
[[entry]]
id = "{name}-moved"
introduced = "0.5.13"
severity = "error"
message = "Scheduler.{name} is a module function: call it."
evidence = "sglang/srt/dp_attn.py"
pattern = {{ kind = "call", symbol = "sglang.srt.scheduler.Scheduler.{name}" }}

[[entry.codemod]]
primitive = "replace-callee"
module = "sglang.srt.dp_attn"
name = "{name}"
drop_first_argument = true
"""


def _moved_methods(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    old = write_tree(
        tmp_path / "old",
        {
            "sglang/__init__.py": "",
            "sglang/version.py": '__version__ = "0.5.9"\n',
            "sglang/srt/__init__.py": "",
            "sglang/srt/scheduler.py": SCHEDULER_OLD,
        },
    )
    new = write_tree(
        tmp_path / "new",
        {
            "sglang/__init__.py": "",
            "sglang/version.py": '__version__ = "0.5.14"\n',
            "sglang/srt/__init__.py": "",
            "sglang/srt/scheduler.py": SCHEDULER_NEW,
            "sglang/srt/dp_attn.py": DP_ATTN,
        },
    )
    consumer = write_tree(tmp_path / "consumer", {"step.py": CONSUMER})
    body = REPLACE_CALLEE.format(name="prepare_batch") + REPLACE_CALLEE.format(name="launch")
    packs = _packs(tmp_path, body)
    return old, new, consumer, packs


def _fix(tmp_path: Path, *more: str) -> list[str]:
    old, new, consumer, packs = _moved_methods(tmp_path)
    cache = str(tmp_path / "cache")
    return [
        "fix", "--cache-dir", cache, "--old", str(old), "--new", str(new), "--packs", str(packs),
        "--unsafe-fixes", *more, str(consumer),
    ]  # fmt: skip


def test_a_fix_the_re_audit_flags_is_held_back_and_needs_a_human(capsys, tmp_path):
    """`prepare_batch(batch, dp_size=1)` would miss the new required `attn_tp_size` (a
    new DA203 the first audit did not have): that rewrite is not made; `launch` is."""
    argv = _fix(tmp_path, "--apply")
    assert main(argv) == 0
    err = capsys.readouterr().err
    text = (tmp_path / "consumer" / "step.py").read_text()
    assert "    Scheduler.prepare_batch(scheduler, batch, dp_size=1)\n" in text
    assert "    return launch(batch)\n" in text and "from sglang.srt.dp_attn import launch" in text
    assert "fixed 1 findings in 1 files" in err
    assert "not fixed: step.py:5:5 replace-callee: held back: the fixed code gets DA203" in err
    assert "1 findings need a human:" in err and "step.py:5:15 DA901" in err
    # what is written is what the re-audit saw: nothing new, the kept fix's finding gone
    trees = argv[1 : argv.index("--unsafe-fixes")]  # --cache-dir, --old, --new, --packs
    assert main(["compare", *trees, "--format", "json", "--fail-on", "never", argv[-1]]) == 0
    rules = [(f["rule"], f["line"]) for f in json.loads(capsys.readouterr().out)["findings"]]
    assert rules == [("DA901", 6)]  # below the import the kept fix added


def test_fix_in_diff_mode_exits_1_when_there_is_a_diff(capsys, tmp_path):
    """As ruff's `--diff`: 1 when a fix is pending, 0 when there is nothing to change."""
    argv = _fix(tmp_path)
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "+    return launch(batch)" in out and "-    Scheduler.prepare_batch" not in out
    assert main([*argv[:-1], "--apply", argv[-1]]) == 0
    capsys.readouterr()
    assert main(argv) == 0  # what is left needs a human: no diff
    assert capsys.readouterr().out == ""
