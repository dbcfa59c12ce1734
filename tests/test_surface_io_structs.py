"""Request structs of io_struct and the meta_info keys of responses."""

from __future__ import annotations

import pytest

from driftaudit.snapshot.surfaces.io_structs import (
    Struct,
    extract_meta_info_keys,
    extract_request_structs,
)

from .conftest import write_tree

IO_STRUCT = """\
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar, List, Optional

import msgspec


@dataclass
class BaseReq:
    rid: Optional[str] = None


@dataclass
class TimingMixin:
    received_time: Optional[float] = None


@dataclass
class GenerateReqInput(BaseReq, TimingMixin):
    text: Optional[str] = None
    input_ids: Optional[List[int]] = None
    sampling_params: Optional[dict] = None
    return_logprob: bool = False
    rid: Optional[str] = "override"
    custom: List[int] = field(default_factory=list)
    KIND: ClassVar[str] = "generate"

    def normalize(self):
        self.not_a_field: int = 1


class MsgBase(msgspec.Struct, tag=True, kw_only=True):
    rid: Optional[str] = None


class UpdateWeightsFromTensorReqInput(MsgBase, kw_only=True):
    serialized_named_tensors: List[bytes]
    flush_cache: bool = True


class Mode(Enum):
    A = 1


class Plain:
    x: int = 1
"""

TOKENIZER_MANAGER = """\
class TokenizerManager:
    def _handle_batch_output(self, recv_obj, i):
        meta_info = {
            "id": rid,
            "finish_reason": recv_obj.finished_reasons[i],
            "prompt_tokens": recv_obj.prompt_tokens[i],
        }
        meta_info.update({"completion_tokens": 1, "cached_tokens": 0})
        meta_info["e2e_latency"] = 0.5
        meta_info.setdefault("hidden_states", [])
        meta_info.update(dynamic_fields)
        meta_info[f"{name}_ts"] = 1.0
        out = {"text": "x", "meta_info": {"weight_version": "v1"}}
        unrelated = {"not_meta": 1}
        unrelated["also_not"] = 2
        return meta_info["prompt_tokens"]
"""

TIME_STATS = """\
class ReqTimeStats:
    def convert_to_output_meta_info(self):
        meta_data = {}
        meta_data["queue_time"] = 1.0
        return meta_data


def extract_routed_experts_from_meta_info(data):
    result = {}
    result["not_written_to_meta_info"] = data["meta_info"]["routed_experts"]
    return result
"""

BEAM = """\
beam_meta_info = {}
beam_meta_info["sequence_score"] = 1
beam_meta_info["prompt_tokens"] = 2
"""


def _line(text, prefix):
    """1-based line of the first line of `text` starting with `prefix`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(prefix))


def _tree(tmp_path):
    return write_tree(
        tmp_path,
        {
            "sglang/__init__.py": "",
            "sglang/srt/managers/io_struct.py": IO_STRUCT,
            "sglang/srt/managers/tokenizer_manager.py": TOKENIZER_MANAGER,
            "sglang/srt/beam_search/output.py": BEAM,
            "sglang/srt/observability/req_time_stats.py": TIME_STATS,
            # client side, not the server
            "sglang/lang/backend/openai.py": 'meta_info = {"client_only": 1}\n',
        },
    )


def test_dataclass_fields_with_inheritance(tmp_path):
    structs = extract_request_structs(_tree(tmp_path))
    generate = structs["GenerateReqInput"]
    assert (generate.kind, generate.file, generate.line) == (
        "dataclass",
        "sglang/srt/managers/io_struct.py",
        _line(IO_STRUCT, "class GenerateReqInput("),
    )
    assert generate.bases == ["BaseReq", "TimingMixin"]
    # dataclass order: the last base first, an override moves to the subclass
    assert list(generate.fields) == [
        "received_time",
        "text",
        "input_ids",
        "sampling_params",
        "return_logprob",
        "rid",
        "custom",
    ]
    assert generate.fields["received_time"].inherited_from == "TimingMixin"
    assert generate.fields["rid"].inherited_from is None
    assert generate.fields["rid"].default == "'override'"
    assert generate.fields["text"].annotation == "Optional[str]"
    assert generate.fields["custom"].default == "field(default_factory=list)"
    assert generate.fields["return_logprob"].line == _line(IO_STRUCT, "    return_logprob:")
    assert "KIND" not in generate.fields and "not_a_field" not in generate.fields


def test_msgspec_structs(tmp_path):
    structs = extract_request_structs(_tree(tmp_path))
    update = structs["UpdateWeightsFromTensorReqInput"]
    assert update.kind == "msgspec"
    assert list(update.fields) == ["rid", "serialized_named_tensors", "flush_cache"]
    assert update.fields["rid"].inherited_from == "MsgBase"
    assert update.fields["serialized_named_tensors"].required
    assert not update.fields["flush_cache"].required
    assert structs["MsgBase"].kind == "msgspec"


def test_what_is_not_a_struct(tmp_path):
    structs = extract_request_structs(_tree(tmp_path))
    assert "Mode" not in structs and "Plain" not in structs
    assert extract_request_structs(write_tree(tmp_path / "empty", {"sglang/x.py": ""})) == {}


def test_struct_round_trip(tmp_path):
    structs = extract_request_structs(_tree(tmp_path))
    assert {k: Struct.from_json(v.to_json()) for k, v in structs.items()} == structs


def test_meta_info_keys(tmp_path):
    keys = extract_meta_info_keys(_tree(tmp_path))
    manager = "sglang/srt/managers/tokenizer_manager.py"
    assert keys["id"] == f"{manager}:4"
    assert keys["prompt_tokens"] == f"{manager}:6"  # tokenizer_manager wins over beam_search
    for key in ("finish_reason", "completion_tokens", "cached_tokens", "e2e_latency"):
        assert keys[key].startswith(manager), key
    assert keys["hidden_states"] == f"{manager}:{_line(TOKENIZER_MANAGER, '        meta_info.set')}"
    # a {"meta_info": {...}} literal
    assert keys["weight_version"] == f"{manager}:{_line(TOKENIZER_MANAGER, '        out = ')}"
    assert keys["sequence_score"] == "sglang/srt/beam_search/output.py:2"
    assert keys["queue_time"] == "sglang/srt/observability/req_time_stats.py:4"
    for key in ("not_meta", "also_not", "not_written_to_meta_info", "client_only"):
        assert key not in keys, key
    assert list(keys) == sorted(keys)


# ---------------------------------------------------------------- real releases


def _root(version, release_cache):
    from driftaudit.sources import resolve_spec

    return resolve_spec(version, release_cache).root


@pytest.mark.integration
def test_real_0_5_23_structs(release_cache):
    structs = extract_request_structs(_root("0.5.23", release_cache))
    generate = structs["GenerateReqInput"]
    assert generate.kind == "dataclass"
    for name in ("text", "input_ids", "sampling_params", "return_logprob", "stream", "rid"):
        assert name in generate.fields, name
    assert generate.fields["return_logprob"].default == "None"
    update = structs["UpdateWeightsFromTensorReqInput"]
    assert update.kind == "msgspec"
    assert update.fields["rid"].inherited_from == "BaseReq"
    assert {"serialized_named_tensors", "load_format", "flush_cache", "weight_version"} <= set(
        update.fields
    )
    assert len(structs) >= 100


@pytest.mark.integration
def test_real_struct_layout_change(release_cache):
    old = extract_request_structs(_root("0.5.14", release_cache))
    new = extract_request_structs(_root("0.5.22", release_cache))
    assert old["UpdateWeightsFromTensorReqInput"].kind == "dataclass"
    assert new["UpdateWeightsFromTensorReqInput"].kind == "msgspec"  # moved to msgspec
    assert "selector" not in old["UpdateWeightsFromTensorReqInput"].fields
    assert (
        "selector"
        in extract_request_structs(_root("0.5.23", release_cache))[
            "UpdateWeightsFromTensorReqInput"
        ].fields
    )


@pytest.mark.integration
def test_real_meta_info_keys(release_cache):
    keys = extract_meta_info_keys(_root("0.5.23", release_cache))
    manager = "sglang/srt/managers/tokenizer_manager.py:"
    for key in ("prompt_tokens", "completion_tokens", "finish_reason", "cached_tokens", "id"):
        assert keys[key].startswith(manager), key
    assert "spec_accept_length" in keys and "weight_version" in keys
    old = extract_meta_info_keys(_root("0.5.9", release_cache))
    new = extract_meta_info_keys(_root("0.5.14", release_cache))
    assert "spec_accept_token_num" in old and "spec_accept_token_num" not in new
    assert "reasoning_tokens" not in old and "reasoning_tokens" in new
