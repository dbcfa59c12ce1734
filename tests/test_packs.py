"""Rule packs: validation names the file and the entry; ranges select entries."""

from __future__ import annotations

import pytest

from driftaudit.errors import DriftauditError
from driftaudit.packs import load_pack, load_packs, rules_dirs

GOOD_ENTRY = """
[[entry]]
id = "one"
introduced = "0.5.13"
message = "m"
evidence = "e"
pattern = { kind = "call", symbol = "sglang.x.f" }
"""


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
        (GOOD_ENTRY + '[[entry.codemod]]\nprimitive = "teleport"\n', "unknown codemod primitive"),
        (GOOD_ENTRY + '[[entry.codemod]]\nprimitive = "drop-keyword"\n', "missing parameter"),
        (
            GOOD_ENTRY.replace('"sglang.x.f" }', '"sglang.x.f", keyword = 3, extra = 1 }'),
            "does not take",
        ),
    ],
)
def test_invalid_entries_name_file_and_entry(tmp_path, body, problem):
    path = _pack(tmp_path, body)
    with pytest.raises(DriftauditError) as error:
        load_pack(path)
    assert "pack.toml" in str(error.value) and problem in str(error.value)
    assert "entry" in str(error.value)


def test_invalid_header_and_toml(tmp_path):
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
    directories = rules_dirs()
    assert directories, "the rules/ folder is found"
    early = {e.id for e in load_packs(directories, "0.5.9", "0.5.14")}
    late = {e.id for e in load_packs(directories, "0.5.22", "0.5.23")}
    assert {"req-fill-ids-assigned", "schedule-batch-model-worker-batch-removed"} <= early
    assert {"deepseek-v4-encoders-deleted", "flashmla-package-moved"} <= late
    assert not early & late


def test_missing_rules_directory_is_an_error(tmp_path):
    with pytest.raises(DriftauditError, match="does not exist"):
        rules_dirs([tmp_path / "nope"])
