"""The ServerArgs field model: hand-made trees of each layout, then real releases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from driftaudit.drift.serverarg_changes import ServerArgsDrift
from driftaudit.snapshot.surfaces.serverargs import (
    ServerArgField,
    ServerArgsModel,
    extract_server_args,
)

from .conftest import write_tree

SERVER_ARGS = "sglang/srt/server_args.py"

# --- the dataclass layout with every flag registered by hand (0.5.2 .. 0.5.9) --------

OLD_STYLE = """\
import argparse
import dataclasses
from typing import ClassVar, List, Optional


@dataclasses.dataclass
class ServerArgs:
    model_path: str
    tp_size: int = 1
    dp_size: int = 1
    skip_tokenizer_init: bool = False
    fp8_gemm_runner_backend: str = "auto"
    enable_ep_moe: bool = False
    python_only: Optional[int] = None
    buckets: List[str] = dataclasses.field(default_factory=list)
    MAX: ClassVar[int] = 3

    def __post_init__(self):
        self.derived = 1

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        parser.add_argument("--model-path", "--model", type=str, required=True)
        parser.add_argument(
            "--tensor-parallel-size", "--tp-size", type=int, default=ServerArgs.tp_size
        )
        parser.add_argument(
            "--data-parallel-size", "--dp-size", type=int, default=ServerArgs.dp_size
        )
        parser.add_argument("--skip-tokenizer-init", action="store_true")
        parser.add_argument(
            "--fp8-gemm-backend",
            type=str,
            default=ServerArgs.fp8_gemm_runner_backend,
            dest="fp8_gemm_runner_backend",
            help="NOTE: This replaces the deprecated environment variable X.",
        )
        parser.add_argument(
            "--enable-ep-moe",
            action="store_true",
            help="(Deprecated) Enabling expert parallelism for moe.",
        )
        parser.add_argument(
            "--hybrid-kvcache-ratio",
            action=DeprecatedAction,
            help="Note: --hybrid-kvcache-ratio is deprecated now. "
            "Please use --swa-full-tokens-ratio instead.",
        )
        parser.add_argument("--buckets", nargs="+", default=ServerArgs.buckets)
        parser.add_argument("--config", type=str, help="A YAML file.")

    @classmethod
    def from_cli_args(cls, args: argparse.Namespace):
        args.tp_size = args.tensor_parallel_size
        attrs = [attr.name for attr in dataclasses.fields(cls)]
        return cls(**{attr: getattr(args, attr) for attr in attrs})


class DeprecatedAction(argparse.Action):
    pass
"""


@pytest.fixture
def old_style(tmp_path: Path) -> ServerArgsModel:
    write_tree(tmp_path, {SERVER_ARGS: OLD_STYLE})
    model = extract_server_args(tmp_path)
    assert model is not None
    return model


def test_old_style_fields_types_defaults(old_style):
    assert old_style.layout == "dataclass"
    assert list(old_style.fields) == [
        "model_path",
        "tp_size",
        "dp_size",
        "skip_tokenizer_init",
        "fp8_gemm_runner_backend",
        "enable_ep_moe",
        "python_only",
        "buckets",
    ]  # no ClassVar, no `self.x` of __post_init__
    f = old_style.fields
    assert (f["model_path"].annotation, f["model_path"].default) == ("str", None)
    assert (f["tp_size"].annotation, f["tp_size"].default) == ("int", "1")
    assert f["fp8_gemm_runner_backend"].default == "'auto'"
    assert f["python_only"].annotation == "Optional[int]"
    assert f["buckets"].default == "list()"
    assert f["tp_size"].file == SERVER_ARGS
    assert f["tp_size"].line == 9


def test_old_style_flags(old_style):
    f = old_style.fields
    # argparse stores --tensor-parallel-size as tensor_parallel_size; from_cli_args renames
    assert f["tp_size"].flag == "--tp-size"
    assert f["tp_size"].aliases == ["--tensor-parallel-size"]
    # no rename in from_cli_args: the field read by default=ServerArgs.dp_size
    assert f["dp_size"].flag == "--dp-size"
    assert f["dp_size"].aliases == ["--data-parallel-size"]
    assert f["model_path"].flag == "--model-path"
    assert f["model_path"].aliases == ["--model"]
    assert f["skip_tokenizer_init"].flag == "--skip-tokenizer-init"
    assert f["fp8_gemm_runner_backend"].flag == "--fp8-gemm-backend"  # dest=
    assert f["buckets"].cli
    assert (f["python_only"].cli, f["python_only"].flag, f["python_only"].aliases) == (
        False,
        None,
        [],
    )
    assert old_style.flags["--tensor-parallel-size"] == "tp_size"
    assert old_style.flags["--model"] == "model_path"
    assert old_style.flags["--fp8-gemm-backend"] == "fp8_gemm_runner_backend"
    assert "--fp8-gemm-runner-backend" not in old_style.flags
    assert "--config" not in old_style.flags  # not a field


def test_old_style_dests_are_argparse_dests(old_style):
    dests = old_style.dests
    # the first long option names the dest; from_cli_args renames it afterwards
    assert dests["--tensor-parallel-size"] == dests["--tp-size"] == "tensor_parallel_size"
    assert dests["--dp-size"] == "data_parallel_size"
    assert dests["--fp8-gemm-backend"] == "fp8_gemm_runner_backend"  # dest=
    assert dests["--config"] == "config"  # no field, still a dest
    assert dests["--model"] == "model_path"


def test_old_style_deprecation(old_style):
    f = old_style.fields
    assert f["enable_ep_moe"].deprecated and f["enable_ep_moe"].cli
    assert old_style.flags["--enable-ep-moe"] == "enable_ep_moe"
    assert old_style.deprecated_flags["--enable-ep-moe"].startswith("(Deprecated)")
    # registered by hand as deprecated, mapped to no field
    assert "--hybrid-kvcache-ratio" not in old_style.flags
    assert "swa-full-tokens-ratio" in old_style.deprecated_flags["--hybrid-kvcache-ratio"]
    # "replaces the deprecated environment variable" is not a deprecated flag
    assert not f["fp8_gemm_runner_backend"].deprecated
    assert set(old_style.deprecated_flags) == {"--enable-ep-moe", "--hybrid-kvcache-ratio"}
    assert not any(x.deprecated for x in f.values() if x.name != "enable_ep_moe")


# --- the dataclass layout with Annotated[T, Arg(...)] metadata (0.5.14 .. 0.5.16) -----

ANNOTATED_STYLE = """\
import argparse
import dataclasses
from typing import Optional

from sglang.srt.arg_groups.arg_utils import A, Arg, add_cli_args_from_dataclass
from sglang.srt.arg_groups.argparse_actions import (
    DeprecatedAction,
    DeprecatedAliasStoreAction,
    DeprecatedStoreTrueAction,
)

CHOICES = ["a", "b"]


@dataclasses.dataclass
class ServerArgs:
    model_path: A[str, Arg(help="The model.", aliases=["--model"])]
    tp_size: A[int, Arg(help="TP.", aliases=["--tensor-parallel-size"])] = 1
    host: A[str, "The host " "of the server."] = "127.0.0.1"
    fp8_gemm_runner_backend: A[
        str, Arg(help="Backend.", cli_name="--fp8-gemm-backend", choices=CHOICES)
    ] = "auto"
    enable_tf32: A[
        Optional[bool], Arg(help="TF32.", action=argparse.BooleanOptionalAction)
    ] = None
    disable_cuda_graph: A[bool, Arg(no_cli=True)] = False
    python_only: A[bool, Arg(no_cli=True)] = False
    reasoning_parser: Optional[str] = None
    stat_loggers: Optional[dict] = None
    cuda_graph_max_bs_decode: A[Optional[int], "Max batch size of decode graphs."] = None
    grpc_mode: A[bool, "(Deprecated, use --smg-grpc-mode) Legacy gRPC."] = False

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument(
            "--reasoning-parser",
            type=str,
            default=ServerArgs.reasoning_parser,
            help=f"Options: {CHOICES}.",
        )
        parser.add_argument("--config", type=str, help="A YAML file.")
        parser.add_argument(
            "--disable-cuda-graph",
            action=DeprecatedStoreTrueAction,
            help="Deprecated. Use --cuda-graph-backend=disabled instead.",
        )
        parser.add_argument(
            "--cuda-graph-max-bs",
            type=int,
            action=DeprecatedAliasStoreAction,
            new_flag="--cuda-graph-max-bs-decode",
            dest="cuda_graph_max_bs_decode",
            help=argparse.SUPPRESS,
        )
        parser.add_argument(
            "--prefill-round-robin-balance",
            action=DeprecatedAction,
            help="Note: --prefill-round-robin-balance is deprecated now.",
        )
"""


@pytest.fixture
def annotated_style(tmp_path: Path) -> ServerArgsModel:
    write_tree(tmp_path, {SERVER_ARGS: ANNOTATED_STYLE})
    model = extract_server_args(tmp_path)
    assert model is not None
    return model


def test_annotated_fields_unwrap_the_metadata(annotated_style):
    f = annotated_style.fields
    assert annotated_style.layout == "dataclass"
    assert len(f) == 11
    assert (f["tp_size"].annotation, f["tp_size"].default) == ("int", "1")
    assert f["enable_tf32"].annotation == "Optional[bool]"
    assert f["host"].default == "'127.0.0.1'"
    assert f["model_path"].default is None


def test_annotated_flags_derive_like_sglang(annotated_style):
    f = annotated_style.fields
    flags = annotated_style.flags
    assert (f["tp_size"].flag, f["tp_size"].aliases) == ("--tp-size", ["--tensor-parallel-size"])
    assert flags["--tp-size"] == flags["--tensor-parallel-size"] == "tp_size"
    assert (f["model_path"].flag, f["model_path"].aliases) == ("--model-path", ["--model"])
    assert f["host"].flag == "--host"  # a bare help string is Arg(help=...)
    assert f["fp8_gemm_runner_backend"].flag == "--fp8-gemm-backend"  # cli_name
    assert "--fp8-gemm-runner-backend" not in flags
    assert f["enable_tf32"].aliases == ["--no-enable-tf32"]  # BooleanOptionalAction
    assert flags["--no-enable-tf32"] == "enable_tf32"
    # no metadata: registered by hand, or not at all
    assert f["reasoning_parser"].flag == "--reasoning-parser"
    assert not f["stat_loggers"].cli and f["stat_loggers"].flag is None
    # no_cli: no flag unless one is registered by hand
    assert not f["python_only"].cli
    assert "--python-only" not in flags
    assert "--config" not in flags


def test_annotated_dests_are_the_fields(annotated_style):
    dests = annotated_style.dests
    # add_cli_args_from_dataclass anchors dest to the field, whatever the flag
    assert dests["--tensor-parallel-size"] == dests["--tp-size"] == "tp_size"
    assert dests["--fp8-gemm-backend"] == "fp8_gemm_runner_backend"
    assert dests["--no-enable-tf32"] == "enable_tf32"
    assert dests["--cuda-graph-max-bs"] == "cuda_graph_max_bs_decode"  # by hand, dest=
    assert dests["--reasoning-parser"] == "reasoning_parser"


def test_dest_changes_between_layouts(old_style, annotated_style):
    drift = ServerArgsDrift(old_style, annotated_style)
    moved = drift.by_dest["tensor_parallel_size"]
    assert (moved.new_dest, moved.flags) == ("tp_size", ("--tensor-parallel-size", "--tp-size"))
    assert moved.code.code == "DA407"
    assert "model_path" not in drift.by_dest  # the same dest in both
    # `data_parallel_size`: dp_size was removed in the annotated tree, a DA401 matter
    assert "data_parallel_size" not in drift.by_dest


def test_annotated_deprecated_flags(annotated_style):
    f = annotated_style.fields
    dep = annotated_style.deprecated_flags
    # a no_cli field whose only spelling is a deprecated hand-registered flag
    assert f["disable_cuda_graph"].cli and f["disable_cuda_graph"].deprecated
    assert f["disable_cuda_graph"].flag == "--disable-cuda-graph"
    # a deprecated alias of a live field: the field stays live, the alias is listed
    g = f["cuda_graph_max_bs_decode"]
    assert (g.flag, g.aliases, g.deprecated) == (
        "--cuda-graph-max-bs-decode",
        ["--cuda-graph-max-bs"],
        False,
    )
    assert annotated_style.flags["--cuda-graph-max-bs"] == "cuda_graph_max_bs_decode"
    assert "--cuda-graph-max-bs-decode" in dep["--cuda-graph-max-bs"]  # from new_flag=
    # deprecated through its Arg help
    assert f["grpc_mode"].deprecated and "--grpc-mode" in dep
    # deprecated and mapped to no field
    assert "--prefill-round-robin-balance" in dep
    assert "--prefill-round-robin-balance" not in annotated_style.flags
    assert not f["tp_size"].deprecated and "--tp-size" not in dep


# --- the namespace layout (0.5.22 and newer) -------------------------------------------

NAMESPACE_TREE = {
    "sglang/__init__.py": "",
    "sglang/srt/arg_groups/__init__.py": "",
    "sglang/srt/arg_groups/field_order.py": (
        'POSITIONAL_FIELD_ORDER = (\n    "model_path",\n    "tp_size",\n    "gone",\n)\n'
    ),
    "sglang/srt/arg_groups/fields/__init__.py": (
        "def collect_input_fields(sources):\n    return {}, {}, {}\n"
    ),
    "sglang/srt/arg_groups/fields/base.py": """\
import msgspec
from sglang.srt.arg_groups.arg_utils import A


class ModelBase(msgspec.Struct):
    revision: A[str, "The revision."] = "main"
""",
    "sglang/srt/arg_groups/fields/model.py": """\
from typing import List

import msgspec

from sglang.srt.arg_groups.arg_utils import A, Arg, Derived

from .base import ModelBase


class Model(ModelBase):
    _NS_PATH = "model"

    is_loaded = Derived(doc="Set at run time.")

    model_path: A[str, Arg(help="The model.", aliases=["--model"])]
    items: A[List[str], "Items."] = msgspec.field(default_factory=list)
    _explicitly_set: A[bool, Arg(no_cli=True)] = False
""",
    "sglang/srt/arg_groups/fields/parallel.py": """\
import argparse
from typing import Optional

import msgspec

from sglang.srt.arg_groups.arg_utils import A, Arg, Derived


class Parallel(msgspec.Struct):
    _NS_PATH = "parallel"

    nnodes: A[int, "The number of nodes."] = 1
    tp_size: A[int, Arg(help="TP.", aliases=["--tensor-parallel-size"], resolvable=True)] = 1
    enable_dp_attention: A[bool, Arg(no_cli=True)] = False
    dcp_replicate: A[
        Optional[bool], Arg(help="Replicate.", action=argparse.BooleanOptionalAction)
    ] = None
    tp_rank = Derived(doc="This process's place in the TP group.")
""",
    SERVER_ARGS: """\
import argparse

import msgspec

from sglang.srt.arg_groups.arg_utils import add_cli_args_from_dataclass
from sglang.srt.arg_groups.argparse_actions import DeprecatedStoreTrueAction
from sglang.srt.arg_groups.fields import collect_input_fields
from sglang.srt.arg_groups.fields.model import (
    Model,
)
from sglang.srt.arg_groups.fields.parallel import Parallel


class ServerArgs:
    LANGUAGE_MODEL_ONLY = ("A",)

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument(
            "--enable-dp-attention",
            action=DeprecatedStoreTrueAction,
            new_flag="--attn-dp-size <dp-size>",
            help="Deprecated. Use --attn-dp-size <dp-size> instead.",
        )
        parser.add_argument("--config", type=str)


_INPUT_NAMESPACES = [
    Parallel,
    Model,
]

_annotations, _defaults, _namespaces = collect_input_fields(_INPUT_NAMESPACES)
ServerArgs.__annotations__ = {**_annotations, **ServerArgs.__annotations__}
ServerArgs = msgspec.defstruct(
    "ServerArgs",
    [(n, a) for n, a in ServerArgs.__annotations__.items()],
    namespace=dict(vars(ServerArgs)),
)
""",
}


@pytest.fixture
def namespaces(tmp_path: Path) -> ServerArgsModel:
    write_tree(tmp_path, NAMESPACE_TREE)
    model = extract_server_args(tmp_path)
    assert model is not None
    return model


def test_namespace_fields_in_constructor_order(namespaces):
    assert namespaces.layout == "namespaces"
    # POSITIONAL_FIELD_ORDER first, then the rest in namespace and declaration order;
    # base class fields before the subclass's; no Derived, no _NS_PATH
    assert list(namespaces.fields) == [
        "model_path",
        "tp_size",
        "nnodes",
        "enable_dp_attention",
        "dcp_replicate",
        "revision",
        "items",
        "_explicitly_set",
    ]
    f = namespaces.fields
    assert f["tp_size"].file == "sglang/srt/arg_groups/fields/parallel.py"
    assert f["tp_size"].line == 13
    assert f["revision"].file == "sglang/srt/arg_groups/fields/base.py"
    assert f["model_path"].file == "sglang/srt/arg_groups/fields/model.py"
    assert f["items"].default == "list()"
    assert (f["dcp_replicate"].annotation, f["dcp_replicate"].default) == (
        "Optional[bool]",
        "None",
    )


def test_namespace_flags(namespaces):
    f = namespaces.fields
    assert (f["tp_size"].flag, f["tp_size"].aliases) == ("--tp-size", ["--tensor-parallel-size"])
    assert namespaces.flags["--model"] == "model_path"
    assert namespaces.flags["--no-dcp-replicate"] == "dcp_replicate"
    assert not f["_explicitly_set"].cli
    # no_cli field reached only through a deprecated hand-registered flag
    dp = f["enable_dp_attention"]
    assert (dp.cli, dp.deprecated, dp.flag) == (True, True, "--enable-dp-attention")
    assert set(namespaces.deprecated_flags) == {"--enable-dp-attention"}
    assert "--config" not in namespaces.flags


def test_json_round_trip(namespaces, annotated_style):
    for model in (namespaces, annotated_style):
        data = json.loads(json.dumps(model.to_json()))
        again = ServerArgsModel.from_json(data)
        assert again == model
        assert list(again.fields) == list(model.fields)
        assert isinstance(again.fields["tp_size"], ServerArgField)


def test_no_server_args(tmp_path: Path):
    assert extract_server_args(tmp_path) is None
    write_tree(tmp_path, {SERVER_ARGS: "class PortArgs:\n    x: int = 1\n"})
    assert extract_server_args(tmp_path) is None
    write_tree(tmp_path, {SERVER_ARGS: "class ServerArgs(:\n"})
    assert extract_server_args(tmp_path) is None


# --- real releases ---------------------------------------------------------------------

RELEASES = ["0.5.2", "0.5.9", "0.5.14", "0.5.22", "0.5.23"]


@pytest.fixture(scope="module")
def releases(release_cache):
    from driftaudit.sources import resolve_spec

    models: dict[str, ServerArgsModel] = {}

    def get(version: str) -> ServerArgsModel:
        if version not in models:
            tree = resolve_spec(version, release_cache)
            model = extract_server_args(tree.root)  # its speed: benchmarks/, not a test
            assert model is not None
            models[version] = model
        return models[version]

    return get


@pytest.mark.integration
@pytest.mark.parametrize("version", RELEASES)
def test_release_basics(releases, version):
    model = releases(version)
    expected = "namespaces" if version in ("0.5.22", "0.5.23") else "dataclass"
    assert model.layout == expected
    assert 200 <= len(model.fields) <= 1500
    assert sum(f.cli for f in model.fields.values()) >= 200
    tp = model.fields["tp_size"]
    assert (tp.flag, tp.annotation, tp.default) == ("--tp-size", "int", "1")
    assert "--tensor-parallel-size" in tp.aliases
    assert model.flags["--tp-size"] == model.flags["--tensor-parallel-size"] == "tp_size"
    assert model.fields["model_path"].default is None
    assert "--model" in model.fields["model_path"].aliases
    # every flag names a field of the model, and every field flag is in `flags`
    assert set(model.flags.values()) <= set(model.fields)
    for f in model.fields.values():
        for flag in [f.flag, *f.aliases] if f.cli else []:
            assert model.flags[flag] == f.name
    assert ServerArgsModel.from_json(json.loads(json.dumps(model.to_json()))) == model


@pytest.mark.integration
def test_release_0_5_2_deprecated_moe_flags(releases):
    model = releases("0.5.2")
    ep = model.fields["enable_ep_moe"]
    assert (ep.flag, ep.deprecated, ep.annotation) == ("--enable-ep-moe", True, "bool")
    assert "--enable-ep-moe" in model.deprecated_flags
    assert not model.fields["ep_size"].deprecated
    assert model.fields["ep_size"].aliases == ["--expert-parallel-size", "--ep"]


@pytest.mark.integration
def test_release_0_5_9_piecewise_fields_and_hand_flags(releases):
    model = releases("0.5.9")
    for name in (
        "enable_piecewise_cuda_graph",
        "piecewise_cuda_graph_max_tokens",
        "piecewise_cuda_graph_tokens",
    ):
        assert model.fields[name].flag == "--" + name.replace("_", "-")
    assert model.flags["--fp8-gemm-backend"] == "fp8_gemm_runner_backend"  # dest=
    assert "--hybrid-kvcache-ratio" in model.deprecated_flags
    assert "--hybrid-kvcache-ratio" not in model.flags
    assert model.flags["--dp-size"] == model.flags["--data-parallel-size"] == "dp_size"


@pytest.mark.integration
def test_release_0_5_14_replaces_piecewise_fields(releases):
    model = releases("0.5.14")
    for name in (
        "enable_piecewise_cuda_graph",
        "piecewise_cuda_graph_max_tokens",
        "piecewise_cuda_graph_tokens",
    ):
        assert name not in model.fields
    assert "--enable-piecewise-cuda-graph" not in model.flags
    # the old flags are deprecated aliases of the per-phase cuda graph fields
    assert model.flags["--piecewise-cuda-graph-max-tokens"] == "cuda_graph_max_bs_prefill"
    assert model.flags["--piecewise-cuda-graph-tokens"] == "cuda_graph_bs_prefill"
    assert model.flags["--disable-piecewise-cuda-graph"] == "cuda_graph_backend_prefill"
    for flag in ("--piecewise-cuda-graph-max-tokens", "--piecewise-cuda-graph-tokens"):
        assert flag in model.deprecated_flags
    prefill = model.fields["cuda_graph_max_bs_prefill"]
    assert (prefill.flag, prefill.deprecated) == ("--cuda-graph-max-bs-prefill", False)
    assert model.fields["fp8_gemm_runner_backend"].flag == "--fp8-gemm-backend"  # cli_name
    assert model.fields["disable_cuda_graph"].deprecated  # no_cli + deprecated hand flag
    assert not model.fields["stat_loggers"].cli
    assert model.fields["tp_size"].file == SERVER_ARGS


@pytest.mark.integration
def test_release_dests_moved_in_0_5_14(releases):
    """0.5.14 derives flags from the field dataclass: the long spellings registered first
    by hand before (--data-parallel-size, ...) became aliases, their dest the field."""
    drift = ServerArgsDrift(releases("0.5.9"), releases("0.5.14"))
    moved = {dest: change.new_dest for dest, change in drift.by_dest.items()}
    assert moved == {
        "tensor_parallel_size": "tp_size",
        "pipeline_parallel_size": "pp_size",
        "data_parallel_size": "dp_size",
        "expert_parallel_size": "ep_size",
        "attention_context_parallel_size": "attn_cp_size",
        "moe_data_parallel_size": "moe_dp_size",
    }
    for old, new in (("0.5.14", "0.5.22"), ("0.5.22", "0.5.23")):
        assert ServerArgsDrift(releases(old), releases(new)).by_dest == {}


@pytest.mark.integration
def test_release_0_5_22_to_0_5_23(releases):
    old, new = releases("0.5.22"), releases("0.5.23")
    assert "speculative_skip_dp_mlp_sync" in old.fields
    assert "speculative_skip_dp_mlp_sync" not in new.fields
    before = old.fields["enable_decoder_swa_bounded_replay"]
    after = new.fields["enable_decoder_swa_bounded_replay"]
    assert (before.annotation, before.default) == ("bool", "False")
    assert (after.annotation, after.default) == ("Optional[bool]", "None")
    assert after.aliases == ["--no-enable-decoder-swa-bounded-replay"]
    assert new.flags["--monokernel-backend"] == "enable_amd_monokernel"
    assert "--monokernel-backend" in new.deprecated_flags
    assert "--monokernel-backend" not in old.flags
    for model in (old, new):
        assert model.fields["tp_size"].file == "sglang/srt/arg_groups/fields/parallel.py"
        assert list(model.fields)[0] == "model_path"  # POSITIONAL_FIELD_ORDER
        dp = model.fields["enable_dp_attention"]
        assert (dp.cli, dp.deprecated) == (True, True)
        assert not model.fields["_radix_eviction_policy_explicitly_set"].cli
