"""Rule packs: validation names the file and the entry; ranges select entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftaudit.errors import DriftauditError
from driftaudit.packs import load_pack, load_packs, pack_directories

from .conftest import write_tree

V1 = '__version__ = "0.5.9"\n'
V2 = '__version__ = "0.5.14"\n'

GOOD_ENTRY = """
[[entry]]
id = "one"
introduced = "0.5.13"
message = "m"
evidence = "e"
pattern = { kind = "call", symbol = "sglang.x.f" }
"""


def _text(regex: str, **more: str) -> str:
    """GOOD_ENTRY with a text pattern (TOML literal strings: no escapes to double)."""
    fields = "".join(f", {key} = '{value}'" for key, value in {"regex": regex, **more}.items())
    return GOOD_ENTRY.replace('kind = "call", symbol = "sglang.x.f"', f'kind = "text"{fields}')


def _step(primitive: str, params: str) -> str:
    return GOOD_ENTRY + f'[[entry.codemod]]\nprimitive = "{primitive}"\n{params}\n'


def _pack(tmp_path, body: str, header: str = '[pack]\nname = "p"\nfrom = "0.5.9"\nto = "0.5.14"\n'):
    path = tmp_path / "pack.toml"
    path.write_text(header + body)
    return path


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (GOOD_ENTRY.replace('introduced = "0.5.13"', 'introduced = "0.5.20"'), "outside the pack"),
        (GOOD_ENTRY.replace('kind = "call"', 'kind = "nope"'), "pattern needs a `kind`"),
        (GOOD_ENTRY.replace('symbol = "sglang.x.f"', 'sym = "x"'), "needs ['symbol']"),
        (GOOD_ENTRY + GOOD_ENTRY, "duplicate id"),
        (GOOD_ENTRY.replace('message = "m"', ""), "`message` must be a non-empty string"),
        (GOOD_ENTRY + '[[entry.codemod]]\nprimitive = "teleport"\n', "step 1: unknown primitive"),
        (GOOD_ENTRY + '[[entry.codemod]]\nprimitive = "drop-keyword"\n', "missing parameter"),
        (
            GOOD_ENTRY.replace('"sglang.x.f" }', '"sglang.x.f", keyword = 3, extra = 1 }'),
            "does not take",
        ),
        # values of the wrong type: one line naming the entry, never a traceback
        (GOOD_ENTRY.replace('symbol = "sglang.x.f"', "symbol = 5"), "`symbol` must be a"),
        (GOOD_ENTRY.replace('"sglang.x.f" }', '"sglang.x.f", keyword = 3 }'), "`keyword` must"),
        (
            GOOD_ENTRY.replace('"sglang.x.f" }', '"sglang.x.f", keyword = "k", value = "none" }'),
            "value must be one of",
        ),
        (
            GOOD_ENTRY.replace('kind = "call", symbol = "sglang.x.f"', 'kind = "text", regex = 5'),
            "`regex` must be a non-empty string",
        ),
        (
            GOOD_ENTRY.replace(
                'kind = "call", symbol = "sglang.x.f"', 'kind = "text", regex = "x", glob = ""'
            ),
            "`glob` must be a non-empty string",
        ),
        (GOOD_ENTRY.replace("pattern = {", "pattern = [] # {"), "non-empty list"),
        (GOOD_ENTRY.replace('introduced = "0.5.13"', 'introduced = "0.5.x"'), "`introduced`"),
        (
            GOOD_ENTRY
            + '[[entry.codemod]]\nprimitive = "replace-len-of-member"\nmember = "m"\n'
            + 'template = "{receiver}.{nope}"\n',
            "template names ['nope']",
        ),
        (
            GOOD_ENTRY
            + '[[entry.codemod]]\nprimitive = "rewrite-assignment"\nold = "a"\nmember = "b"\n'
            + 'after = ["{receiver}.n = len({value})"]\n',
            "template names ['value']",
        ),
        # what the linear-time engine cannot run is refused: backreferences, lookarounds
        (_text(r"(a+)\1"), "cannot run in linear time (invalid escape sequence"),
        (_text(r"(?<![/\w])tilelang"), "cannot run in linear time"),
        (_text(r"tilelang(?!==0\.1)"), "cannot run in linear time"),
        (_text("x", unless="(?=y)"), "`unless`: regex '(?=y)' cannot run in linear time"),
        (_text(r"(?:a*b*){400}c"), "RE2 instructions, more than 500"),
        (_text("x", glob="."), "glob '.' is not a path pattern"),
        (GOOD_ENTRY.replace('severity = "error"', "") + 'severity = ["error"]\n', "severity"),
        (GOOD_ENTRY + 'within = { kind = "text", regex = "x" }\n', "within: a text pattern"),
        (GOOD_ENTRY.replace('kind = "call"', "kind = [1]"), "pattern needs a `kind`"),
        # codemod parameters: declared by each primitive, checked by name and type
        (_step("drop-keyword", "keyword = 3"), "step 1: drop-keyword: parameter `keyword` must"),
        (_step("drop-keyword", 'keyword = "a b"'), "`keyword` must be a Python identifier"),
        (_step("drop-keyword", 'keyword = "k"\nkind = "move-import"'), "unknown parameter 'kind'"),
        (_step("pad-unpack", "slots = [0, true]"), "`slots` must be a non-empty list"),
        (_step("replace-callee", 'module = "a..b"\nname = "f"'), "`module` must be a dotted"),
        (
            _step("replace-callee", 'module = "m"\nname = "f"\ndrop_first_argument = "yes"'),
            "`drop_first_argument` must be true or false",
        ),
        (
            _step("rewrite-assignment", 'old = "a"\nmember = "b"\nimports = [["array"]]'),
            "`imports` must be a list of [module, name] pairs",
        ),
        (
            _step("replace-len-of-member", 'member = "m"\ntemplate = "{receiver!r}"'),
            "a field takes no ! or :",
        ),
        (
            _step("replace-len-of-member", 'member = "m"\ntemplate = "{receiver}.("'),
            "is not an expression",
        ),
        (_step("replace-text", 'old = "a"\nnew = "b\\nc"'), "`new` must be a string on one line"),
    ],
)
def test_invalid_entries_name_file_and_entry(tmp_path, body, problem):
    path = _pack(tmp_path, body)
    with pytest.raises(DriftauditError) as error:
        load_pack(path)
    assert "pack.toml" in str(error.value) and problem in str(error.value)
    assert "entry" in str(error.value)


def test_invalid_header_and_toml(tmp_path):
    with pytest.raises(DriftauditError, match=r"pack.toml: file: `entry` must be an array"):
        load_pack(
            _pack(tmp_path, 'entry = 5\n[pack]\nname = "p"\nfrom = "0.5.9"\nto = "0.5.14"\n', "")
        )
    with pytest.raises(DriftauditError, match=r"pack.toml: \[pack\]: `to` '0.5.x' is not a valid"):
        load_pack(_pack(tmp_path, "", header='[pack]\nname = "p"\nfrom = "0.5.9"\nto = "0.5.x"\n'))
    with pytest.raises(DriftauditError, match="pack.toml: file: not valid TOML"):
        load_pack(_pack(tmp_path, "[[entry", header=""))
    with pytest.raises(DriftauditError, match=r"\[pack\]: `from` must be an older release"):
        load_pack(_pack(tmp_path, "", header='[pack]\nname = "p"\nfrom = "0.5.9"\nto = "0.5.9"\n'))


def test_entries_apply_only_inside_the_compared_range(tmp_path):
    _pack(tmp_path, GOOD_ENTRY)
    assert [e.id for e in load_packs([tmp_path], "0.5.9", "0.5.14")] == ["one"]
    assert [e.id for e in load_packs([tmp_path], "0.5.12", "0.5.13")] == ["one"]
    assert load_packs([tmp_path], "0.5.13", "0.5.23") == []
    assert load_packs([tmp_path], "0.5.5", "0.5.12") == []


def test_shipped_packs_are_valid_and_cover_both_seed_upgrades():
    directories = pack_directories()
    assert directories, "the rules/ folder is found"
    early = {e.id for e in load_packs(directories, "0.5.9", "0.5.14")}
    late = {e.id for e in load_packs(directories, "0.5.22", "0.5.23")}
    assert {"req-fill-ids-assigned", "schedule-batch-model-worker-batch-removed"} <= early
    assert {"deepseek-v4-encoders-deleted", "flashmla-package-moved"} <= late
    assert not early & late
    # load_packs trusts the shipped codemods (no libcst on a compare): check them here
    for path in directories[0].iterdir():
        if path.name.endswith(".toml"):
            assert load_pack(path, check_codemods=True)


def test_dev_and_pre_releases_select_entries(tmp_path):
    _pack(tmp_path, GOOD_ENTRY.replace('introduced = "0.5.13"', 'introduced = "0.5.13rc0"'))
    assert [e.id for e in load_packs([tmp_path], "0.5.12.post1", "0.5.13rc0")] == ["one"]
    assert load_packs([tmp_path], "0.5.13rc0", "0.5.14.post1.dev0") == []
    assert [e.id for e in load_packs([tmp_path], "0.5.9", "0.5.14.post1.dev0")] == ["one"]
    with pytest.raises(DriftauditError, match="'main' is not a valid PEP 440 version"):
        load_packs([tmp_path], "main", "0.5.14")


def test_missing_rules_directory_is_an_error(tmp_path, monkeypatch):
    with pytest.raises(DriftauditError, match="does not exist"):
        pack_directories([tmp_path / "nope"])
    monkeypatch.setenv("DRIFTAUDIT_RULES", str(tmp_path / "nope"))
    with pytest.raises(DriftauditError, match=f"packs directory {str(tmp_path / 'nope')!r}"):
        pack_directories()
    monkeypatch.setenv("DRIFTAUDIT_RULES", str(tmp_path))
    assert pack_directories() == [tmp_path]
    monkeypatch.setenv("DRIFTAUDIT_PACKS", str(tmp_path / "packs"))  # the current name wins
    (tmp_path / "packs").mkdir()
    assert pack_directories() == [tmp_path / "packs"]


def test_missing_rules_directory_from_the_environment_exits_2(tmp_path, monkeypatch, capsys):
    from driftaudit.cli import main

    write_tree(tmp_path / "sglang", {"sglang/__init__.py": "", "sglang/version.py": V1})
    write_tree(tmp_path / "sglang2", {"sglang/__init__.py": "", "sglang/version.py": V2})
    write_tree(tmp_path / "consumer", {"app.py": "import sglang\n"})
    monkeypatch.setenv("DRIFTAUDIT_RULES", str(tmp_path / "nope"))
    code = main(
        [
            "compare",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--old",
            str(tmp_path / "sglang"),
            "--new",
            str(tmp_path / "sglang2"),
            str(tmp_path / "consumer"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert repr(str(tmp_path / "nope")) in err


def test_text_patterns_are_matched_line_by_line_with_a_length_cap(tmp_path):
    from driftaudit.match.pack_findings import PackMatcher
    from driftaudit.packs import MAX_TEXT_LINE

    consumer = write_tree(
        tmp_path,
        {"Dockerfile": "RUN pip install flash-mla\n" + "x" * (MAX_TEXT_LINE + 1) + " flash_mla\n"},
    )
    matcher = PackMatcher(None, None, None, consumer)
    found = matcher._text_matches({"kind": "text", "regex": "flash[-_]mla$", "glob": "Dock*"})
    assert found == [("Dockerfile", 1, 17)]  # `$` is the line's end; line 2 is too long


def test_builtin_packs_are_the_repository_rules():
    """Imported from the checkout, as the tests import it, the built-in packs are the
    repository's rules/ (an installed wheel's are checked in test_packaging.py)."""
    (directory,) = pack_directories()
    packs = {p.name: p.read_bytes() for p in directory.iterdir() if p.name.endswith(".toml")}
    rules = Path(__file__).parents[1] / "rules"
    assert packs and packs == {p.name: p.read_bytes() for p in rules.glob("*.toml")}


def test_text_patterns_skip_comment_lines_and_python_strings(tmp_path):
    """A comment or a docstring that names a package documents it; only code and
    install lines are places to report."""
    from driftaudit.match.pack_findings import PackMatcher

    consumer = write_tree(
        tmp_path,
        {
            "Dockerfile": "# flash-mla built above\n  # flash_mla\nRUN pip install flash-mla\n",
            "app.py": (
                'def dump(tool):\n    """Round-trip through ``Tool.model_dump()``."""\n'
                '    help = "see x.model_dump()"\n'
                "    return tool.model_dump()\n"
            ),
        },
    )
    matcher = PackMatcher(None, None, None, consumer)
    docker = matcher._text_matches({"kind": "text", "regex": "flash[-_]mla", "glob": "Dock*"})
    assert docker == [("Dockerfile", 3, 17)]
    python = matcher._text_matches({"kind": "text", "regex": r"\.model_dump\(", "glob": "*.py"})
    assert python == [("app.py", 4, 16)]


@pytest.mark.parametrize(
    ("regex", "needed"),
    [
        (r"\.model_dump(?:_json)?\(", ".model_dump"),
        (r"(?<![/\w.-])tilelang(?![/\w.-])", "tilelang"),
        (r"flash[-_]mla", "flash"),
        (r"(?i)sglang", None),  # any case: no plain text is required
        (r"serve|launch", None),  # either word: neither is required
        (r"[", None),  # does not compile: no hint
    ],
)
def test_a_text_pattern_names_the_text_every_match_contains(regex, needed):
    from driftaudit.regexes import required_text

    assert required_text(regex) == needed


def test_a_bytes_pattern_names_the_bytes_every_match_contains():
    import re

    from driftaudit.regexes import required_bytes

    assert required_bytes(re.compile(rb"= *Env[A-Z]\w*\(")) == b"Env"
    assert required_bytes(re.compile(rb"SGL(?:ANG)?_[A-Z0-9_]+")) == b"SGL"
    assert required_bytes(re.compile(rb"meta_info", re.I)) is None
