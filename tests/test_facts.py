"""One fact, one finding: a change x the consumer statement (or patch file) it reaches,
its places listed under it."""

from driftaudit.codes import CODES
from driftaudit.findings import Finding, facts_summary, group_facts


def _at(code, path, line, column, symbol, message, anchor=None):
    return Finding(CODES[code], path, line, column, symbol, message, anchor=anchor)


def test_a_patch_file_is_one_fact_naming_its_hunks():
    hunks = [
        _at("DA601", "p.patch", n, 1, "sglang/x.py", f"hunk @@ -{n} does not apply")
        for n in (3, 40, 90)
    ]
    other = _at("DA601", "q.patch", 3, 1, "sglang/x.py", "hunk @@ -7 does not apply")
    facts = group_facts([*hunks, other])
    assert [len(g) for g in facts] == [3, 1]
    assert facts_summary([*hunks, other]).startswith("2 facts at 4 places")


def test_a_call_is_one_fact_however_many_arguments_shift():
    args = [
        _at(
            "DA204", "a.py", 5, c, "m.f", f"positional argument {i} now binds to ...", anchor=(5, 1)
        )
        for i, c in enumerate((8, 11, 14))
    ]
    other_call = _at(
        "DA204", "a.py", 9, 8, "m.f", "positional argument 2 now binds to ...", anchor=(9, 1)
    )
    assert [len(g) for g in group_facts([*args, other_call])] == [3, 1]


def test_a_flag_is_one_fact_with_its_places_and_two_flags_are_two():
    msg = "`--old-flag` is deprecated"
    places = [_at("DA405", f"s{i}.sh", 2, 10, "ServerArgs.old_flag", msg) for i in range(4)]
    other = _at("DA405", "s0.sh", 2, 30, "ServerArgs.other_flag", "`--other-flag` is deprecated")
    facts = group_facts([*places, other])
    assert [len(g) for g in facts] == [4, 1]
    assert facts[0][0].path == "s0.sh"


def test_different_changes_on_one_line_stay_apart():
    a = _at("DA201", "a.py", 3, 5, "m.f", "passes keyword `x`", anchor=(3, 1))
    b = _at("DA201", "a.py", 3, 20, "m.g", "passes keyword `x`", anchor=(3, 15))
    assert len(group_facts([a, b])) == 2
