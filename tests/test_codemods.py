"""Before/after tests for every codemod primitive (bump-pydantic style), with the
cases each must leave alone."""

from __future__ import annotations

import textwrap

from driftaudit.fix.apply import rewrite
from driftaudit.fix.edits import Edit


def run(source: str, *edits: tuple) -> str:
    source = textwrap.dedent(source)
    change = rewrite(
        "m.py", source, [Edit("m.py", line, col, kind, params) for line, col, kind, params in edits]
    )
    return change.after


def check(before: str, after: str, *edits: tuple) -> None:
    result = run(before, *edits)
    assert result == textwrap.dedent(after)
    assert run(result, *edits) == result, "a second run changes nothing"


def test_move_import_whole_statement():
    check(
        "from sglang.old import f  # why\n",
        "from sglang.new import f  # why\n",
        (1, 24, "move-import", {"name": "f", "new_module": "sglang.new"}),
    )


def test_move_import_of_a_renamed_class_keeps_the_consumers_name():
    renamed = {"name": "State", "new_module": "sglang.new", "new_name": "NewState"}
    check(
        "from sglang.old import State, other\n",
        "from sglang.old import other\nfrom sglang.new import NewState as State\n",
        (1, 24, "move-import", renamed),
    )
    check(  # an alias the consumer chose stays its name
        "from sglang.old import State as S\n",
        "from sglang.new import NewState as S\n",
        (1, 24, "move-import", renamed),
    )


def test_move_import_of_a_function_that_became_a_method_binds_it_again():
    edit = {"name": "prepare", "new_module": "sglang.new", "new_name": "DP.prepare"}
    check(
        "def f():\n    from sglang.old import prepare\n    return prepare(1)\n",
        "def f():\n    from sglang.new import DP\n"
        "    prepare = DP.prepare\n    return prepare(1)\n",
        (2, 28, "move-import", edit),
    )
    # idempotent: once moved, the statement no longer imports the old name
    after = "from sglang.new import DP\nprepare = DP.prepare\n"
    assert run(after, (1, 24, "move-import", edit)) == after


def test_move_import_splits_and_keeps_the_block():
    check(
        """\
        try:
            from sglang.old import (
                a,
                b,  # stays
            )
        except ImportError:
            a = None
        """,
        """\
        try:
            from sglang.old import (
                b,  # stays
            )
            from sglang.new import a
        except ImportError:
            a = None
        """,
        (3, 9, "move-import", {"name": "a", "new_module": "sglang.new"}),
    )


def test_guard_import_whole_statement_keeps_its_comments():
    check(
        "import os\n\n# the kernels\nfrom sglang.old import f  # why\nf(1)\n",
        "import os\n\n# the kernels\ntry:\n    from sglang.new import f\n"
        "except ImportError:\n    from sglang.old import f  # why\nf(1)\n",
        (4, 24, "guard-import", {"name": "f", "new_module": "sglang.new"}),
    )


def test_guard_import_splits_one_name_out_and_keeps_aliases():
    renamed = {"name": "State", "new_module": "sglang.new", "new_name": "NewState"}
    check(
        """\
        def load():
            from sglang.old import (
                State as S,
                other,  # stays
            )
            return S, other
        """,
        """\
        def load():
            from sglang.old import (
                other,  # stays
            )
            try:
                from sglang.new import NewState as S
            except ImportError:
                from sglang.old import State as S
            return S, other
        """,
        (3, 9, "guard-import", renamed),
    )


def test_guard_import_can_keep_the_written_import_first():
    edit = {"name": "f", "new_module": "sglang.old", "keep_first": True}
    check(
        "from sglang.new import f  # why\n",
        "try:\n    from sglang.new import f  # why\nexcept ImportError:\n"
        "    from sglang.old import f\n",
        (1, 24, "guard-import", edit),
    )


def test_guard_import_needs_room_for_a_try():
    # a one-line suite cannot hold a compound statement: nothing is written
    source = "if True: from sglang.old import f\n"
    change = rewrite(
        "m.py", source, [Edit("m.py", 1, 33, "guard-import", {"name": "f", "new_module": "x"})]
    )
    assert change.after == source and not change.applied and change.skipped


def test_drop_keyword():
    check(
        "f(1, stream=True, name='x')\nf(1, name='y', stream=False)\n",
        "f(1, name='x')\nf(1, name='y')\n",
        (1, 1, "drop-keyword", {"keyword": "stream"}),
        (2, 1, "drop-keyword", {"keyword": "stream"}),
    )


def test_drop_keyword_multiline_keeps_trailing_comma():
    check(
        "f(\n    a,\n    stream=True,\n)\n",
        "f(\n    a,\n)\n",
        (1, 1, "drop-keyword", {"keyword": "stream"}),
    )


def test_rename_keyword_only_that_keyword():
    check(
        "f(img_data=1, img=2)\n",
        "f(mm_data=1, img=2)\n",
        (1, 1, "rename-keyword", {"old": "img_data", "new": "mm_data"}),
    )


def test_pad_unpack_follows_the_new_return_statement():
    check(
        "a, b, c = f()\n(\n    x,\n    y,\n) = g()\n",
        "a, b, c, _ = f()\n(\n    _,\n    x,\n    y,\n) = g()\n",
        (1, 1, "pad-unpack", {"slots": [0, 1, 2, None]}),
        (2, 1, "pad-unpack", {"slots": [None, 0, 1]}),
    )


def test_pad_unpack_leaves_starred_targets():
    source = "a, *rest = f()\n"
    assert run(source, (1, 1, "pad-unpack", {"slots": [0, 1, None]})) == source


def test_rename_attribute_at_one_place():
    check(
        "x.old\ny.old\n",
        "x.new\ny.old\n",
        (1, 1, "rename-attribute", {"old": "old", "new": "new"}),
    )


def test_rename_import_keeps_call_sites():
    check(
        "from m import old_name\nold_name()\n",
        "from m import new_name as old_name\nold_name()\n",
        (1, 15, "rename-import", {"old": "old_name", "new": "new_name"}),
    )


FILL = {
    "old": "fill_ids",
    "member": "full_untruncated_fill_ids",
    "value": 'array("q", {value})',
    "after": ["{receiver}.fill_len = len({receiver}.full_untruncated_fill_ids)"],
    "imports": [["array", "array"]],
}


def test_rewrite_assignment_adds_statements_and_import():
    check(
        '"""doc"""\nimport os\n\n\ndef f(req):\n    req.fill_ids = req.origin  # keep\n',
        '"""doc"""\nimport os\nfrom array import array\n\n\ndef f(req):\n'
        '    req.full_untruncated_fill_ids = array("q", req.origin)  # keep\n'
        "    req.fill_len = len(req.full_untruncated_fill_ids)\n",
        (6, 5, "rewrite-assignment", FILL),
    )


def test_rewrite_assignment_leaves_other_assignments():
    source = "fill_ids = []\nreq.other = 1\n"
    assert (
        run(source, (1, 1, "rewrite-assignment", FILL), (2, 1, "rewrite-assignment", FILL))
        == source
    )


def test_replace_len_of_member():
    check(
        "n = len(req.fill_ids) - 1\nm = len(fill_ids)\n",
        "n = req.fill_len - 1\nm = len(fill_ids)\n",
        (1, 9, "replace-len-of-member", {"member": "fill_ids", "template": "{receiver}.fill_len"}),
        (2, 9, "replace-len-of-member", {"member": "fill_ids", "template": "{receiver}.fill_len"}),
    )


def test_replace_len_of_member_needs_len():
    source = "ids = req.fill_ids\n"
    params = {"member": "fill_ids", "template": "{receiver}.fill_len"}
    change = rewrite("m.py", source, [Edit("m.py", 1, 7, "replace-len-of-member", params)])
    assert change.after == source and change.skipped


def test_replace_with_receiver():
    check(
        "mwb = batch.get_model_worker_batch()\nother = batch.other()\n",
        "mwb = batch\nother = batch.other()\n",
        (1, 7, "replace-with-receiver", {"method": "get_model_worker_batch"}),
        (2, 9, "replace-with-receiver", {"method": "get_model_worker_batch"}),
    )


def test_replace_callee_imports_the_function():
    check(
        "from s import Scheduler\n\nScheduler.raw(batch, dp_size=1)\n",
        "from s import Scheduler\nfrom s.dp import raw\n\nraw(batch, dp_size=1)\n",
        (3, 1, "replace-callee", {"module": "s.dp", "name": "raw"}),
    )


def test_add_import_once():
    check(
        "import os\n",
        "import os\nfrom array import array\n",
        (1, 1, "add-import", {"module": "array", "name": "array"}),
    )


def test_output_that_would_not_parse_is_not_produced():
    source = "req.fill_ids = ids\n"
    broken = dict(FILL, value="array((")
    change = rewrite("m.py", source, [Edit("m.py", 1, 1, "rewrite-assignment", broken)])
    assert change.after == source and change.skipped


def test_an_edit_with_bad_parameters_is_skipped_with_the_reason():
    """Checked against the primitive's declared parameters: never an exception."""
    edits = [
        Edit("m.py", 1, 1, "drop-keyword", {}),
        Edit("m.py", 1, 1, "drop-keyword", {"keyword": "not a name"}),
        Edit("m.py", 1, 1, "teleport", {}),
        Edit("m.py", 1, 1, "drop-keyword", {"keyword": "k"}),
    ]
    change = rewrite("m.py", "f(k=1)\n", edits)
    assert change.after == "f()\n" and change.applied == edits[3:]
    reasons = [why for _, why in change.skipped]
    assert reasons == [
        "drop-keyword: missing parameter(s) keyword",
        "drop-keyword: parameter `keyword` must be a Python identifier, not 'not a name'",
        "unknown codemod primitive 'teleport'",
    ]
    text = rewrite("run.sh", "x --a\n", [Edit("run.sh", 1, 3, "replace-text", {"old": "--a"})])
    assert text.after == "x --a\n" and "missing parameter(s) new" in text.skipped[0][1]


def test_rewrite_assignment_in_a_one_line_suite_adds_every_statement():
    change = rewrite(
        "m.py",
        "if c: req.fill_ids = ids  # why\n",
        [Edit("m.py", 1, 7, "rewrite-assignment", FILL)],
    )
    assert change.after == (
        "from array import array\n"
        'if c: req.full_untruncated_fill_ids = array("q", ids); '
        "req.fill_len = len(req.full_untruncated_fill_ids)  # why\n"
    )
    assert change.applied and not change.skipped


def test_rewrite_assignment_respells_a_taken_name():
    check(
        "from numpy import array\n\nreq.fill_ids = array(ids)\n",
        "from numpy import array\nfrom array import array as _array\n\n"
        'req.full_untruncated_fill_ids = _array("q", array(ids))\n'
        "req.fill_len = len(req.full_untruncated_fill_ids)\n",
        (3, 1, "rewrite-assignment", FILL),
    )


def test_rewrite_assignment_reuses_import_module():
    check(
        "import array\n\nreq.fill_ids = ids\n",
        'import array\n\nreq.full_untruncated_fill_ids = array.array("q", ids)\n'
        "req.fill_len = len(req.full_untruncated_fill_ids)\n",
        (3, 1, "rewrite-assignment", FILL),
    )


def test_replace_callee_under_a_free_name():
    check(
        "from s import Scheduler\n\ndef f(raw):\n    Scheduler.raw(raw)\n",
        "from s import Scheduler\nfrom s.dp import raw as _raw\n\ndef f(raw):\n    _raw(raw)\n",
        (4, 5, "replace-callee", {"module": "s.dp", "name": "raw"}),
    )


def test_edit_columns_are_characters():
    source = "s = 'ééé'; n = len(req.fill_ids) + len(o.fill_ids)\n"
    params = {"member": "fill_ids", "template": "{receiver}.fill_len"}
    column = source.index("req.fill_ids") + 1
    change = rewrite("m.py", source, [Edit("m.py", 1, column, "replace-len-of-member", params)])
    assert change.after == "s = 'ééé'; n = req.fill_len + len(o.fill_ids)\n"
