"""drift/effective.py: the value a callable ends up using for a parameter left out, and
the conditions its reads run under (issue 27, effective values)."""

import pytest

from driftaudit.drift.effective import effective_default
from driftaudit.drift.gates import never_runs, read_conditions

SOURCE = """\
import sys

DEFAULT = 42


def f(a, x=None, y=None, z=None, w=None, v=None):
    x = x or {}
    if y is None:
        y = DEFAULT
    z = 7 if z is None else z
    if cond():
        w = 3
    return x, y, z, w, v


class C:
    def __init__(self, seed=None, t=None, lora=False, backend="x", mode=False):
        self.seed = seed
        self.t = t
        self.lora = lora
        self.backend = backend
        self.mode = mode

    def use(self):
        return self.seed if self.seed is not None else 42, self.t

    def start(self):
        if self.lora:
            return self.backend
        if self.mode:
            return self.backend
        with ctx(self.t):
            pass

    def switch(self):
        self.mode = True


def g(prompt, temperature=1.0, seed=None, limit=None):
    if temperature == 0:
        return prompt
    if limit is not None and len(prompt) > limit:
        prompt = prompt[:limit]
    return prompt, seed
"""


def _line(name: str) -> int:
    return next(
        i
        for i, text in enumerate(SOURCE.splitlines(), 1)
        if text.lstrip().startswith((f"def {name}(", f"class {name}"))
    )


@pytest.mark.parametrize(
    ("name", "param", "default", "expected"),
    [
        ("f", "x", "None", "{}"),  # x or {}
        ("f", "x", "{'a': 1}", "{'a': 1}"),  # truthy: kept
        ("f", "y", "None", "DEFAULT"),  # if y is None: y = DEFAULT
        ("f", "y", "5", "5"),
        ("f", "z", "None", "7"),  # 7 if z is None else z
        ("f", "w", "None", None),  # written under a test this cannot judge
        ("f", "v", "None", "None"),  # untouched
        ("C", "seed", "None", "42"),  # every read falls back to 42
        ("C", "t", "None", "None"),  # read as is
    ],
)
def test_effective_default(name, param, default, expected):
    assert effective_default(SOURCE, _line(name), name, param, default) == expected


def test_a_read_elsewhere_in_the_tree_counts():
    reads = {("c", "seed"): ["r.c.seed"]}  # a plain read through a name spelling `C`
    found = effective_default(SOURCE, _line("C"), "C", "seed", "None", lambda h, a: reads[h, a])
    assert found == "None"


@pytest.mark.parametrize(
    ("name", "param", "values", "expected"),
    [
        ("g", "seed", {"temperature": "0"}, True),  # greedy: returns before the read
        ("g", "seed", {"temperature": "0.7"}, False),
        ("g", "seed", {}, False),  # temperature not known
        ("g", "limit", {"limit": "None"}, True),  # None switches the limit off
        ("C", "backend", {"lora": "False"}, False),  # `self.mode` is set again in switch()
        ("C", "backend", {"lora": "False", "mode": "False"}, False),
        ("C", "backend", {"lora": "True"}, False),
        ("C", "seed", {}, False),  # no read in the class: nothing to judge
    ],
)
def test_reads_under_conditions(name, param, values, expected):
    reads = read_conditions(SOURCE, _line(name), name, param)
    assert never_runs(reads, values) is expected


def test_a_read_this_cannot_place_is_unknown():
    assert read_conditions(SOURCE, _line("C"), "C", "t") is None  # in a `with`


def test_a_feature_setting_read_only_when_the_feature_is_on():
    source = """\
class Engine:
    def __init__(self, enable_lora=False, lora_backend="csgmv"):
        self.enable_lora = enable_lora
        self.lora_backend = lora_backend

    def start(self):
        if not self.enable_lora:
            return None
        return self.lora_backend
"""
    reads = read_conditions(source, 1, "Engine", "lora_backend")
    assert never_runs(reads, {"enable_lora": "False"})
    assert not never_runs(reads, {"enable_lora": "True"})
    assert not never_runs(reads, {})
    # a method the caller may call to switch it at run time leaves it the setting
    switch = "\n    def configure(self, request):\n        self.enable_lora = request.lora\n"
    reads = read_conditions(source + switch, 1, "Engine", "lora_backend")
    assert never_runs(reads, {"enable_lora": "False"})
    # sglang's own code turning it on: the attribute stands for nothing
    reads = read_conditions(
        source + switch.replace("request.lora", "probe()"), 1, "Engine", "lora_backend"
    )
    assert not never_runs(reads, {"enable_lora": "False"})


CONFIG = """\
import dataclasses


@dataclasses.dataclass
class Config:
    trace: bool = False
    level: int = 0
    mode: str = "a"

    def __post_init__(self):
        if self.mode == "b":
            print(self.level)
"""

MANAGER = """\
class Manager:
    def __init__(self, config):
        self.trace = config.trace
        self.level = config.level
        self.limit = config.limit
        self.limited = config.limited

    def describe(self):
        if self.trace:
            return self.level
        return None

    def reconfigure(self, request):
        if request.trace is not None:
            self.trace = request.trace  # the caller's run-time switch

    def warm_up(self):
        self.limited = True

    async def run(self):
        if not self.limited:
            return None
        return self.limit
"""


def _gates(tmp_path, manager=MANAGER):
    from driftaudit.drift.gates import tree_conditions

    (tmp_path / "sglang").mkdir(exist_ok=True)
    (tmp_path / "sglang" / "config.py").write_text(CONFIG)
    (tmp_path / "sglang" / "manager.py").write_text(manager)
    return lambda holder, attr: tree_conditions(tmp_path, holder, attr)


def test_a_setting_copied_onto_another_object_keeps_its_gate(tmp_path):
    gates = _gates(tmp_path)
    assert gates("config", "level") == [["trace"]]
    reads = read_conditions(CONFIG, 5, "Config", "level", gates)
    assert reads == [["mode == 'b'"], ["trace"]]  # the dataclass's own read, then the copy's
    assert never_runs(reads, {"trace": "False", "mode": "'a'"})
    assert not never_runs(reads, {"trace": "True", "mode": "'a'"})
    assert not never_runs(reads, {"trace": "False", "mode": "'b'"})
    assert not never_runs(reads, {"mode": "'a'"})  # trace not known


def test_a_gate_sglang_sets_itself_is_no_setting(tmp_path):
    assert _gates(tmp_path)("config", "limit") == [[]]  # warm_up() sets `self.limited`
    manager = MANAGER.replace("self.limited = True", "pass")
    assert _gates(tmp_path, manager)("config", "limit") == [["not (not limited)"]]


def test_a_gate_set_again_from_elsewhere_stands_for_nothing(tmp_path):
    manager = MANAGER.replace("self.trace = request.trace", "self.trace = compute()")
    assert _gates(tmp_path, manager)("config", "level") == [[]]


def test_a_written_setting_is_not_followed(tmp_path):
    manager = MANAGER + "\n\ndef reset(config):\n    config.level = 0\n"
    assert _gates(tmp_path, manager)("config", "level") is None


def test_a_gate_the_configuration_sets_itself_is_not_known(tmp_path):
    config = CONFIG + "        if self.mode == 'c':\n            self.trace = True\n"
    reads = read_conditions(config, 5, "Config", "level", _gates(tmp_path))
    assert reads == [["mode == 'b'"], []]  # `trace` may be turned on by __post_init__
    assert not never_runs(reads, {"trace": "False", "mode": "'a'"})


def test_a_gate_computed_again_where_it_is_copied_is_not_known(tmp_path):
    manager = MANAGER.replace(
        "        self.level = config.level\n",
        "        self.level = config.level\n        self.trace = config.trace or config.debug\n",
    )
    assert _gates(tmp_path, manager)("config", "level") == [[]]
