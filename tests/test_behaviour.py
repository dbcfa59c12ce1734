"""Behaviour found from code: value types vs annotations (DA704/DA705), objects built
without `__init__` (DA703), ServerArgs replacements and redirects (DA401/DA404/DA406)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from driftaudit.drift.annotations import accepts, widens
from driftaudit.drift.replacements import Replacements, _named_setting, _words
from driftaudit.snapshot.surfaces.serverarg_redirects import Redirect, extract_redirects
from driftaudit.snapshot.surfaces.serverargs import ServerArgField, ServerArgsModel
from driftaudit.usage.bypass_uses import StandInUsage, collect_bypasses
from driftaudit.usage.files import ConsumerFiles
from driftaudit.usage.valuetypes import arguments, value_type

# ---- value types of consumer expressions ---------------------------------------------


def _type(source: str, sglang: dict[str, str] | None = None) -> str | None:
    node = ast.parse(source, mode="eval").body
    sglang = sglang or {}

    def resolve(expr):
        return sglang.get(ast.unparse(expr))

    def external(expr):
        text = ast.unparse(expr)
        return {"tensor": "torch.tensor", "arr": "array.array"}.get(text, text)

    return value_type(node, resolve, external)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("[1, 2]", "list"),
        ("[x for x in y]", "list"),
        ("{1: 2}", "dict"),
        ("{k: v for k, v in y}", "dict"),
        ("{1}", "set"),
        ("(1, 2)", "tuple"),
        ("f'{x}'", "str"),
        ("'x'", "str"),
        ("3", "int"),
        ("3.0", "float"),
        ("True", "bool"),
        ("None", "None"),
        ("ids.view(-1).tolist()", "list"),
        ("list(ids)", "list"),
        ("sorted(ids)", "list"),
        ("tensor([1])", "torch.Tensor"),
        ("arr('q', ids)", "array.array"),
        ("Req(rid='x')", "sglang-call:sglang.Req"),
        ("ids", None),
        ("ids.tolist(1)", None),
        ("make()", None),
        ("a + b", None),
    ],
)
def test_value_type(source, expected):
    assert _type(source, {"Req": "sglang.Req"}) == expected


def test_arguments_by_position_and_keyword_stop_at_star_args():
    call = ast.parse("f([1], x, 'a', *rest, 2, k={}, **kw)", mode="eval").body
    found = arguments(call, lambda n: value_type(n, lambda _: None, lambda _: None))
    assert found == {"0": "list", "2": "str", "k": "dict"}


# ---- what an annotation accepts --------------------------------------------------------

ALIASES = {"array": "array.array", "Mode": "sglang.Mode", "IntMode": "sglang.IntMode"}
CLASSES = {"sglang.Mode": (True, ["enum.Enum"]), "sglang.IntMode": (True, ["int", "enum.Enum"])}


def _accepts(annotation: str, value: str):
    return accepts(annotation, value, ALIASES.get, CLASSES.get)


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        ("List[int]", "list", True),
        ("array[int]", "list", False),
        ("array[int]", "array.array", True),
        ("Optional[array[int]]", "None", True),
        ("Optional[array[int]]", "list", False),
        ("Union[List[int], array]", "list", True),
        ("list[int] | None", "tuple", False),
        ("'List[int]'", "list", True),
        ("Sequence[int]", "list", True),
        ("Sequence[int]", "dict", False),
        ("Iterable[int]", "set", True),
        ("Iterable[int]", "int", False),
        ("float", "int", True),
        ("int", "bool", True),
        ("int", "float", False),
        ("str", "list", False),
        ("Mode", "str", False),
        ("Mode", "sglang.Mode", True),
        ("IntMode", "int", None),  # an int enum: a plain int often still compares equal
        ("Optional[Mode]", "str", False),
        ("Literal['a', 'b']", "str", None),  # the type fits; the value is not known
        ("Literal['a', 'b']", "int", False),
        ("Any", "list", True),
        ("SomeAlias", "list", None),  # not known: never a finding
        ("torch.Tensor", "list", False),  # written out: torch's Tensor
        ("Optional[torch.Tensor]", "int", False),
        ("Optional[np.ndarray]", "list", None),  # `np` not known in this module
        ("Req", "sglang.Other", None),
        (None, "list", None),
        ("List[", "list", None),
    ],
)
def test_accepts(annotation, value, expected):
    assert _accepts(annotation, value) is expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("int", "Optional[int]", True),
        ("int", "int | float", True),
        ("List[int]", "Sequence[int]", True),
        ("Dict[str, int]", "Mapping[str,int]", True),
        ("Optional[str]", "str | None", True),
        ("Config", "Optional[Config]", True),
        ("List[int]", "Sequence[str]", False),  # other type arguments
        ("Optional[int]", "int", False),  # None no longer fits
        ("float", "int", False),
        ("Config", "OtherConfig", False),  # classes are not compared
        ("str", 'Literal["a"]', False),
        ("Any", "int", False),
    ],
)
def test_widens(old, new, expected):
    assert widens(old, new) is expected


def test_accepts_names_as_the_declaring_module_imports_them():
    resolve = {"np.ndarray": "numpy.ndarray", "T": "torch.Tensor"}.get
    assert accepts("Optional[np.ndarray]", "list", resolve, CLASSES.get) is False
    assert accepts("T", "torch.Tensor", resolve, CLASSES.get) is True


# ---- objects built without __init__ --------------------------------------------------


def test_bypasses_follow_the_helper_that_returns_the_object(tmp_path: Path):
    (tmp_path / "t.py").write_text(
        "from sglang.srt.x import Serving as S\n"
        "import sglang.srt.y as y\n"
        "def make():\n"
        "    s = object.__new__(S)\n"
        "    s.a = 1\n"
        "    setattr(s, 'b', 2)\n"
        "    return s\n"
        "def use():\n"
        "    t = make()\n"
        "    t.c = 3\n"
        "    return t.run(), t.stop()\n"
        "def other():\n"
        "    u = y.Engine.__new__(y.Engine)\n"
        "    return u\n"
        "def mismatch():\n"
        "    v = y.Engine.__new__(S)\n"
        "class Own: pass\n"
        "w = object.__new__(Own)\n"
    )
    (tmp_path / "no_sglang.py").write_text("class A: pass\nx = object.__new__(A)\nx.run()\n")
    found = {(u.line, u.symbol): u for u in collect_bypasses(ConsumerFiles(tmp_path))}
    assert set(found) == {(4, "sglang.srt.x.Serving"), (13, "sglang.srt.y.Engine")}
    made = found[(4, "sglang.srt.x.Serving")]
    assert made.variable == "s" and sorted(made.attributes) == ["a", "b", "c"]
    assert sorted(c[0] for c in made.calls) == ["run", "stop"]
    assert found[(13, "sglang.srt.y.Engine")].calls == []


# ---- ServerArgs redirects and replacements -------------------------------------------

SERVER_ARGS = """
import logging
logger = logging.getLogger(__name__)

class ServerArgs:
    def __post_init__(self):
        if self.enable_x and self.x_backend is None:
            logger.warning("--enable-x is deprecated, use --x-backend=auto")
            self.x_backend = "auto"
        if self.enable_y:
            self.y_mode = "on"  # no deprecation: plain logic, not a redirect

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument(
            "--disable-z", action=DeprecatedStoreConstAction, dest="z_backend",
            const_value=Backend.DISABLED, new_flag="--z-backend=disabled",
        )
        parser.add_argument("--w", dest="w_size", action="store_true")

def hook(server_args):
    if server_args.old_knob:
        warnings.warn("old_knob is deprecated")
        server_args.new_knob = server_args.old_knob
"""


def test_extract_redirects(tmp_path: Path):
    path = tmp_path / "sglang" / "srt" / "server_args.py"
    path.parent.mkdir(parents=True)
    path.write_text(SERVER_ARGS)
    found = {(r.source, r.setting, r.new_flag) for r in extract_redirects(tmp_path)}
    assert found == {
        ("enable_x", "x_backend = 'auto'", None),
        ("--disable-z", "z_backend = Backend.DISABLED", "--z-backend=disabled"),
        ("old_knob", "new_knob = server_args.old_knob", None),
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use --y=disabled instead", ("--y", "disabled")),
        ("[Deprecated] Alias for --join-mode recover.", ("--join-mode", "recover")),
        ("Deprecated. Use --cp-strategy instead.", ("--cp-strategy", None)),
        ("Use --attn-dp-size <dp-size> instead", ("--attn-dp-size", None)),
        ("Deprecated.", None),
    ],
)
def test_named_setting(text, expected):
    assert _named_setting(text) == expected


def test_words_and_polarity():
    assert _words("--enable-piecewise-cuda-graph") == ("on", ["piecewise", "cuda", "graph"])
    assert _words("--enforce-piecewise-cuda-graph") == ("on", ["piecewise", "cuda", "graph"])
    assert _words("disable_radix_cache") == ("off", ["radix", "cache"])


def _field(name, help_text=None, flag=None) -> ServerArgField:
    flag = flag or "--" + name.replace("_", "-")
    return ServerArgField(name, "bool", "False", flag, [], True, False, "s.py", 1, help_text)


def _model(*fields: ServerArgField) -> ServerArgsModel:
    return ServerArgsModel({f.name: f for f in fields}, {f.flag: f.name for f in fields}, {}, "x")


def test_replacement_needs_the_same_polarity():
    old = _model(_field("enable_fast_path"))
    new = _model(_field("fast_backend"))
    redirect = Redirect("--disable-fast-path", "fast_backend", "'off'", None, "s.py", 9)
    assert Replacements(old, new, [], [redirect]).suggest(old.fields["enable_fast_path"]) is None
    redirect = Redirect("--use-fast-path", "fast_backend", "'on'", "--fast-backend=on", "s.py", 9)
    suggestion = Replacements(old, new, [], [redirect]).suggest(old.fields["enable_fast_path"])
    assert suggestion.setting == "fast_backend = 'on'" and suggestion.flag == "--fast-backend=on"


def test_similar_new_field_needs_words_and_help_and_one_clear_winner():
    help_text = "Enable the replay kernel for speculative verify of linear attention models."
    old = _model(_field("enable_gdn_replay_spec", help_text))
    alike = _field("enable_linear_replay_spec", help_text + " GDN or KDA.")
    unrelated = _field("enable_replay_logging", "Log every request to a file.")
    found = Replacements(old, _model(alike, unrelated)).suggest(
        old.fields["enable_gdn_replay_spec"]
    )
    assert found.field == "enable_linear_replay_spec" and found.value is None
    twin = _field("enable_kda_replay_spec", help_text + " GDN or KDA.")
    tie = Replacements(old, _model(alike, twin)).suggest(old.fields["enable_gdn_replay_spec"])
    assert tie is None
    silent = _field("enable_linear_replay_spec", "Something else entirely, about logging.")
    quiet = Replacements(old, _model(silent)).suggest(old.fields["enable_gdn_replay_spec"])
    assert quiet is None


def test_redirect_only_when_new():
    old_model = new_model = _model(_field("enable_x"), _field("x_backend"))
    redirect = Redirect("enable_x", "x_backend", "'auto'", None, "s.py", 5)
    fresh = Replacements(old_model, new_model, [], [redirect])
    assert fresh.redirected("S.enable_x", "enable_x", "enable_x", "s.py:1").target == (
        "x_backend = 'auto'"
    )
    known = Replacements(old_model, new_model, [redirect], [redirect])
    assert known.redirected("S.enable_x", "enable_x", "enable_x", "s.py:1") is None


def test_stand_ins_are_namespaces_handed_to_sglang_calls(tmp_path: Path):
    (tmp_path / "t.py").write_text(
        "import types\n"
        "from types import SimpleNamespace\n"
        "from sglang.srt.layers import buffers\n"
        "def f(kw):\n"
        "    ns = SimpleNamespace(a=1)\n"
        "    ns.b = 2\n"
        "    buffers.allocate(ns, cfg=types.SimpleNamespace(c=3))\n"
        "    buffers.allocate(SimpleNamespace(**kw))\n"
        "    print(ns)\n"
    )
    found = sorted(
        (u.line, u.symbol, u.argument, tuple(u.attributes))
        for u in collect_bypasses(ConsumerFiles(tmp_path))
        if isinstance(u, StandInUsage)
    )
    assert found == [
        (7, "sglang.srt.layers.buffers.allocate", "0", ("a", "b")),
        (7, "sglang.srt.layers.buffers.allocate", "cfg", ("c",)),
    ]


def test_stand_ins_beyond_namespaces(tmp_path: Path):
    """Mocks count with a spec only; a namespace's keyword that is a stand-in is kept;
    a stand-in put in an attribute of an object built without `__init__` is recorded."""
    (tmp_path / "t.py").write_text(
        "from unittest import mock\n"
        "from types import SimpleNamespace\n"
        "from sglang.srt.managers.scheduler import Scheduler\n"
        "from sglang.srt.server_args import ServerArgs\n"
        "class Fake:\n"
        "    def __init__(self):\n"
        "        self.size = 1\n"
        "def f():\n"
        "    Scheduler(mock.MagicMock(), mock.Mock(spec=ServerArgs, tp_size=1))\n"
        "    Scheduler(mock.create_autospec(Fake), mock.NonCallableMock(spec_set=[]))\n"
        "    Scheduler.get_load(SimpleNamespace(tree_cache=Fake(), queue=[]))\n"
        "    s = object.__new__(Scheduler)\n"
        "    s.tree_cache = Fake()\n"
        "    s.get_load()\n"
    )
    usages = collect_bypasses(ConsumerFiles(tmp_path))
    found = sorted(
        (u.line, u.argument, u.kind, u.spec, tuple(u.attributes), tuple(u.members))
        for u in usages
        if isinstance(u, StandInUsage)
    )
    spec = "sglang.srt.server_args.ServerArgs"
    assert found == [
        (9, "1", "a Mock(spec=`ServerArgs`)", spec, ("tp_size",), ()),
        (10, "0", "a create_autospec(`Fake`)", "", ("__init__", "size"), ()),
        (11, "0", "a SimpleNamespace", "", ("tree_cache", "queue"), ("tree_cache",)),
    ]
    (bypass,) = [u for u in usages if not isinstance(u, StandInUsage)]
    held = bypass.stand_ins["tree_cache"]
    assert (held.kind, held.attributes, held.at) == (
        "an instance of `Fake`",
        ["__init__", "size"],
        (13, 7, 13, 17),
    )
