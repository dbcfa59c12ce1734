"""What changed in an sglang function a consumer copied: the diff to port, followed to
another module when the function moved."""

from __future__ import annotations

import ast

from driftaudit.drift.copy_changes import body_change
from driftaudit.drift.refactors import asserted, unread
from driftaudit.snapshot import Snapshot
from driftaudit.snapshot.fingerprints import extract_prints
from driftaudit.sources.tree import tree_from_root
from driftaudit.store.db import BlobStore

from .conftest import write_tree

BODY = """
def prepare(batch, config):
    ids = [r.input_ids for r in batch.reqs]
    lens = [len(i) for i in ids]
    total = sum(lens)
    if config.chunked_prefill_size and total > config.chunked_prefill_size:
        raise ValueError("batch too large")
    out = batch.model_runner.forward(ids, lens, capture=config.capture_hidden)
    batch.output_ids = out.next_token_ids
    batch.hidden = out.hidden_states if config.capture_hidden else None
    return out.logits, out.hidden_states, total
"""


def snapshots(tmp_path, new_files: dict):
    store = BlobStore(tmp_path / "cache.sqlite")
    old = {"sglang/__init__.py": "", "sglang/srt/bench.py": BODY}
    trees = []
    for name, files in (("old", old), ("new", {"sglang/__init__.py": "", **new_files})):
        root = write_tree(tmp_path / name, files)
        trees.append(Snapshot(tree_from_root(name, "directory", root), store))
    return trees


def original(old: Snapshot):
    code = old.source("sglang.srt.bench")
    (found,) = [p for p in extract_prints("sglang.srt.bench", code, 0) if p.qualname == "prepare"]
    return found


def test_a_code_change_gives_the_diff_with_real_line_numbers(tmp_path) -> None:
    changed = BODY.replace("batch.output_ids = ", "batch.output_ids_cpu = ")
    old, new = snapshots(tmp_path, {"sglang/srt/bench.py": "\n\n" + changed})
    change = body_change(old, new, original(old))
    assert change.old_location == "sglang/srt/bench.py:2"
    assert change.new_location == "sglang/srt/bench.py:4"  # two lines further down
    assert "@@ -6,6 +8,6 @@" in change.diff
    assert "-    batch.output_ids = out.next_token_ids" in change.diff
    assert change.changed_lines == {9} and (change.added, change.removed) == (1, 1)


def test_comments_and_formatting_are_not_a_change(tmp_path) -> None:
    reworded = BODY.replace(
        "    total = sum(lens)\n", "    # the total\n    total = sum(\n lens)\n"
    )
    old, new = snapshots(tmp_path, {"sglang/srt/bench.py": reworded})
    assert body_change(old, new, original(old)) is None


def test_a_moved_function_is_followed_to_its_new_module(tmp_path) -> None:
    changed = BODY.replace("capture=config.capture_hidden", "capture=config.capture_mode")
    files = {
        "sglang/benchmark/one_batch.py": changed,
        "sglang/srt/other.py": "def prepare():\n    return None\n",
    }
    old, new = snapshots(tmp_path, files)
    change = body_change(old, new, original(old))
    assert change.moved_to == "sglang.benchmark.one_batch"
    assert "+++ b/sglang/benchmark/one_batch.py" in change.diff
    unchanged = snapshots(tmp_path / "same", {"sglang/benchmark/one_batch.py": BODY})
    assert body_change(*unchanged, original(unchanged[0])) is None  # moved, same code


def test_a_function_gone_everywhere_is_reported_gone(tmp_path) -> None:
    old, new = snapshots(tmp_path, {"sglang/srt/bench.py": "X = 1\n"})
    change = body_change(old, new, original(old))
    assert change.gone and change.diff == ""


def test_a_change_in_new_modes_only_is_nothing_to_port(tmp_path) -> None:
    # a block under a flag the old code never read, and a value that differs only under
    # a new helper: a copy of the old code runs neither
    changed = BODY.replace(
        "    out = batch.model_runner",
        "    if config.enable_overlap and total > 1:\n        batch.overlap = True\n"
        "    mode = 'cp' if prefill_cp_enabled() else config.capture_hidden\n"
        "    out = batch.model_runner",
    ).replace("capture=config.capture_hidden)", "capture=mode)")
    old, new = snapshots(tmp_path, {"sglang/srt/bench.py": changed})
    assert body_change(old, new, original(old)) is None


def test_a_new_branch_on_old_data_is_a_change(tmp_path) -> None:
    # the condition reads what the old code read (a local, a known attribute): no new mode
    changed = BODY.replace(
        "    out = batch.model_runner",
        "    if total > 1 and not config.chunked_prefill_size:\n        lens = lens[:1]\n"
        "    out = batch.model_runner",
    )
    old, new = snapshots(tmp_path, {"sglang/srt/bench.py": changed})
    change = body_change(old, new, original(old))
    assert change is not None and change.changed_lines == {7}
    # a new attribute of the function's own data is no new mode either
    changed = BODY.replace(
        "    out = batch.model_runner",
        "    if ids.is_chunked:\n        lens = lens[:1]\n    out = batch.model_runner",
    )
    old, new = snapshots(tmp_path / "data", {"sglang/srt/bench.py": changed})
    assert body_change(old, new, original(old)) is not None


def test_a_branch_on_a_setting_on_by_default_is_a_change(tmp_path) -> None:
    # the new flag is a ServerArgs field whose default is True: the new code runs it unasked
    changed = BODY.replace(
        "    out = batch.model_runner",
        "    if config.enable_overlap and total > 1:\n        batch.overlap = True\n"
        "    out = batch.model_runner",
    )
    server_args = (
        "import dataclasses\n\n\n@dataclasses.dataclass\nclass ServerArgs:\n"
        "    enable_overlap: bool = {}\n"
    )
    for default, changes in (("True", True), ("False", False)):
        files = {
            "sglang/srt/bench.py": changed,
            "sglang/srt/server_args.py": server_args.format(default),
        }
        old, new = snapshots(tmp_path / default, files)
        assert (body_change(old, new, original(old)) is not None) is changes


def test_a_copy_keeps_only_the_arm_its_constants_pin(tmp_path) -> None:
    from driftaudit.match.copies import consumer_functions

    body = "".join(f"    x{i} = batch.step_{i}(config.value_{i}, total)\n" for i in range(12))
    source = (
        "USE_SPLIT = False\nTOGGLED = False\n\n\ndef toggle():\n    global TOGGLED\n"
        "    TOGGLED = True\n\n\n"
        "def pinned(batch, config, total):\n" + body + "    if USE_SPLIT:\n"
        "        batch.split(total)\n    return x0\n\n\n"
        "def toggled(batch, config, total):\n" + body + "    if TOGGLED:\n"
        "        batch.split(total)\n    return x0\n"
    )
    found = {f.qualname: f for f in consumer_functions({"ours.py": (source, ast.parse(source))})}
    assert found["pinned"].live is not None and ".split" not in found["pinned"].live
    assert ".split" in found["pinned"].tokens
    assert found["toggled"].live is None  # rebound by `global` elsewhere: not pinned


def test_a_new_parameter_passed_on_is_plumbing_for_a_new_mode(tmp_path) -> None:
    # `quant_config=None` is new: a caller of the old code leaves it off, so passing it on
    # and the branch on it are nothing a copy of the old code runs
    changed = (
        BODY.replace(
            "def prepare(batch, config):", "def prepare(batch, config, quant_config=None):"
        )
        .replace(
            "capture=config.capture_hidden)", "capture=config.capture_hidden, quant=quant_config)"
        )
        .replace(
            "    batch.output_ids = ",
            "    if quant_config is not None:\n        out = quant_config.wrap(out)\n"
            "    batch.output_ids = ",
        )
    )
    old, new = snapshots(tmp_path, {"sglang/srt/bench.py": changed})
    assert body_change(old, new, original(old)) is None
    required = changed.replace("quant_config=None", "quant_config")  # every caller passes it
    old, new = snapshots(tmp_path / "required", {"sglang/srt/bench.py": required})
    assert body_change(old, new, original(old)) is not None


CHAIN = """
def make(device, size, timeout):
    sizes = [size // (index + 1) for index in range(size)]
    total = sum(sizes) + len(device or "") + (timeout or 0)
    if total < 0:
        raise ValueError(f"bad size {size} for {device}")
    if device == "cuda":
        backend = "nccl"
    elif device == "xpu":
        backend = "xccl"
    else:
        backend = "gloo"
    logits = project(sizes, backend)
    captured = [row for row in sizes if row]
    if not logprob:
        return logits, captured
    return logits, captured, [normalize(row) for row in logits]
"""


def refactored(tmp_path, new_code: str, pins=frozenset(), new_files=None, unread=frozenset()):
    store = BlobStore(tmp_path / "cache.sqlite")
    trees = []
    for name, code in (("old", CHAIN), ("new", new_code)):
        files = {"sglang/__init__.py": "", "sglang/srt/bench.py": code}
        if name == "new":
            files |= new_files or {}
        root = write_tree(tmp_path / name, files)
        trees.append(Snapshot(tree_from_root(name, "directory", root), store))
    old, new = trees
    prints = extract_prints("sglang.srt.bench", old.source("sglang.srt.bench"), 0)
    (found,) = [p for p in prints if p.qualname == "make"]
    return body_change(old, new, found, pins, unread)


HELPER = """
def backend_for(device):
    if device == "cuda":
        return "nccl"
    elif device == "xpu":
        return "xccl"
    else:
        return "gloo"
"""

CHAIN_CALL = CHAIN.replace(
    CHAIN[CHAIN.index('    if device == "cuda"') : CHAIN.index("    logits = ")],
    "    backend = backend_for(device)\n",
)


def test_an_extracted_function_with_the_same_body_is_nothing_to_port(tmp_path) -> None:
    assert refactored(tmp_path, HELPER + CHAIN_CALL) is None


def test_an_extracted_function_with_early_returns_is_nothing_to_port(tmp_path) -> None:
    # `if c: return a` then `return b` reads as `if c: ... else: ...`
    early = HELPER.replace("    elif", "    if").replace("    else:\n        return", "    return")
    assert "else" not in early
    assert refactored(tmp_path, early + CHAIN_CALL) is None
    changed = early.replace('return "gloo"', 'return "ccl"')
    assert refactored(tmp_path / "changed", changed + CHAIN_CALL) is not None


def test_an_extracted_function_imported_through_a_reexport_is_inlined(tmp_path) -> None:
    files = {
        "sglang/srt/__init__.py": "",
        "sglang/srt/comm/__init__.py": "from sglang.srt.comm.backends import backend_for\n",
        "sglang/srt/comm/backends.py": HELPER,
    }
    call = "from sglang.srt.comm import backend_for\n" + CHAIN_CALL
    assert refactored(tmp_path, call, new_files=files) is None
    files["sglang/srt/comm/backends.py"] = HELPER.replace('"xccl"', '"ccl"')
    assert refactored(tmp_path / "changed", call, new_files=files) is not None


def test_an_extracted_function_whose_body_differs_is_reported(tmp_path) -> None:
    change = refactored(tmp_path, HELPER.replace('"xccl"', '"ccl"') + CHAIN_CALL)
    assert change is not None and {9, 10} & change.changed_lines


def test_a_branch_the_copy_asserts_away_is_nothing_to_port(tmp_path) -> None:
    moved = CHAIN.replace("    logits = project(sizes, backend)\n", "").replace(
        "    if not logprob:\n", "    if not logprob:\n        logits = project(sizes, backend)\n"
    )
    changed = moved.replace("[normalize(row) for row in logits]", "[normalize(row, 1.0)]")
    assert refactored(tmp_path, changed, frozenset({("logprob", False)})) is None
    reported = refactored(tmp_path, changed)  # without the assert: its live path changed
    assert reported is not None and 17 in reported.changed_lines


def test_a_statement_moved_past_independent_ones_only_is_nothing_to_port(tmp_path) -> None:
    def moved(crossed: str) -> str:
        return CHAIN.replace("    logits = project(sizes, backend)\n", "").replace(
            "    captured = [row for row in sizes if row]\n",
            f"    captured = [row for row in sizes if row]\n{crossed}"
            "    logits = project(sizes, backend)\n",
        )

    assert refactored(tmp_path / "plain", moved("")) is None
    # `logits` now reads the `sizes` a statement it moved past binds
    change = refactored(tmp_path / "bound", moved("    sizes = captured\n"))
    assert change is not None and change.changed_lines


def test_asserted_reads_the_conditions_a_function_asserts() -> None:
    (fn,) = ast.parse("def f(a, c):\n    assert not a.b and c, 'no'\n    return a\n").body
    assert asserted(fn) == {("a.b", False), ("c", True)}


GROUPS = """
def make_group(size, backend="nccl", symm=False, retries=0, mode=None):
    return (size, backend, symm, retries, mode)
"""

SETUP = """
from sglang.srt.groups import make_group


def setup(server_args, size, ranks):
    ranks = [rank for rank in ranks if rank < size]
    group = make_group(size, backend="nccl")
    if server_args.verbose:
        print(group, ranks)
    return group, ranks, len(ranks)
"""

SERVER_ARGS = (
    "import dataclasses\n\n\n@dataclasses.dataclass\nclass ServerArgs:\n"
    "    enable_symm: bool = False\n    enable_other: bool = True\n    mode: str = 'none'\n"
)


def passed(tmp_path, keyword: str):
    """What a copy of SETUP has to port when the new code passes one more keyword."""
    store = BlobStore(tmp_path / "cache.sqlite")
    trees = []
    for name, code in (("old", SETUP), ("new", SETUP.replace('"nccl")', f'"nccl", {keyword})'))):
        files = {
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/groups.py": GROUPS,
            "sglang/srt/bench.py": code,
            "sglang/srt/server_args.py": SERVER_ARGS,
        }
        root = write_tree(tmp_path / name, files)
        trees.append(Snapshot(tree_from_root(name, "directory", root), store))
    old, new = trees
    prints = extract_prints("sglang.srt.bench", old.source("sglang.srt.bench"), 0)
    (found,) = [p for p in prints if p.qualname == "setup"]
    return body_change(old, new, found)


def test_a_keyword_passing_the_callees_default_is_nothing_to_port(tmp_path) -> None:
    # what the callee uses when it is left out: a copy that leaves it out gets the same
    for keyword in ("symm=server_args.enable_symm", "retries=0", "mode=None"):
        assert passed(tmp_path / keyword, keyword) is None, keyword


def test_a_keyword_passing_another_value_is_a_change(tmp_path) -> None:
    # a setting on by default, another literal, another type, a ServerArgs default
    # spelled differently ('none' is not None), a value not known
    for keyword in (
        "symm=server_args.enable_other",
        "retries=3",
        "retries=False",
        "mode=server_args.mode",
        "symm=size > 1",
    ):
        change = passed(tmp_path / keyword, keyword)
        assert change is not None and change.changed_lines == {7}, keyword


def test_the_text_a_debug_fstring_spells_is_no_change(tmp_path) -> None:
    renamed = BODY.replace("total", "grand_total").replace(
        'raise ValueError("batch too large")', 'raise ValueError(f"{grand_total=} too large")'
    )
    debug = BODY.replace(
        'raise ValueError("batch too large")', 'raise ValueError(f"{total=} too large")'
    )
    store = BlobStore(tmp_path / "cache.sqlite")
    trees = []
    for name, code in (("old", debug), ("new", renamed)):
        root = write_tree(tmp_path / name, {"sglang/__init__.py": "", "sglang/srt/bench.py": code})
        trees.append(Snapshot(tree_from_root(name, "directory", root), store))
    old, new = trees
    (found,) = [p for p in extract_prints("sglang.srt.bench", debug, 0) if p.qualname == "prepare"]
    assert body_change(old, new, found) is None
    # the same text without `=` is a message of its own: the wording stays compared
    reworded = renamed.replace("{grand_total=}", "{grand_total} is")
    root = write_tree(
        tmp_path / "reworded", {"sglang/__init__.py": "", "sglang/srt/bench.py": reworded}
    )
    changed = Snapshot(tree_from_root("reworded", "directory", root), store)
    assert body_change(old, changed, found) is not None


def test_unread_is_what_a_function_binds_and_never_reads() -> None:
    code = "def f(a):\n    x = a\n    y = 1\n    z = [y for _ in a]\n    return a\n"
    (fn,) = ast.parse(code).body
    assert unread(fn) == {"x", "z", "_"}
    for reads_by_name in ("    print(locals())\n", "    global x\n"):
        (fn,) = ast.parse(code.replace("    return", reads_by_name + "    return")).body
        assert unread(fn) == frozenset()


def test_a_value_the_copy_never_reads_is_nothing_to_port(tmp_path) -> None:
    # upstream computes `logits` another way; a copy that binds it and never reads it
    # (it passes its own value on) has nothing to port
    changed = CHAIN.replace(
        "logits = project(sizes, backend)", "logits = project(sizes, backend, 2)"
    )
    assert refactored(tmp_path / "unread", changed, unread=frozenset({"logits"})) is None
    change = refactored(tmp_path / "read", changed)
    assert change is not None and change.changed_lines == {13}
    # a binding upstream never reads is there for what its call does: still compared
    kept = CHAIN.replace("    captured = ", "    _ = setup(sizes)\n    captured = ")
    dropped = CHAIN.replace("    captured = ", "    _ = setup(sizes, 2)\n    captured = ")
    store = BlobStore(tmp_path / "throwaway" / "cache.sqlite")
    trees = []
    for name, code in (("old", kept), ("new", dropped)):
        files = {"sglang/__init__.py": "", "sglang/srt/bench.py": code}
        root = write_tree(tmp_path / "throwaway" / name, files)
        trees.append(Snapshot(tree_from_root(name, "directory", root), store))
    prints = extract_prints("sglang.srt.bench", kept, 0)
    (found,) = [p for p in prints if p.qualname == "make"]
    assert body_change(*trees, found, unread=frozenset({"_"})) is not None
