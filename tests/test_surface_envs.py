"""Env vars: the Envs registry and direct reads, on hand-made trees, then real releases."""

from __future__ import annotations

import pytest

from driftaudit.snapshot.surfaces.envs import EnvVar, extract_env_vars

from .conftest import write_tree

ENVIRON = """\
import os


class EnvField:
    def __init__(self, default):
        self.default = default


class EnvBool(EnvField):
    pass


class EnvBoolWithAlias(EnvField):
    pass


class Envs:
    # fmt: off
    SGLANG_ENABLE_TORCH_COMPILE = EnvBool(False)
    SGLANG_QUEUED_TIMEOUT = EnvInt(
        30,
    )
    SGLANG_CACHE_DIR = EnvStr(lambda: os.path.expanduser("~/.cache"))
    IS_H200 = EnvBool(False)
    SGLANG_NEW_NAME = EnvBoolWithAlias(True, deprecated_name="SGLANG_OLD_NAME")
    SGLANG_REMOVED_SOON = EnvBool(False)
    not_an_env = 3
    helper = staticmethod(len)


envs = Envs()

_DEPRECATED_ENVS = {
    "SGLANG_GONE": _DeprecatedEnv(note="removed"),
    "SGLANG_RENAMED": _DeprecatedEnv("SGLANG_NEW_NAME"),
    "SGLANG_REMOVED_SOON": _DeprecatedEnv(),
    "SGLANG_INVERTED": _DeprecatedEnv("SGLANG_NOT_INVERTED", transform=lambda v: str(1 - int(v))),
}


def _convert():
    _print_deprecated_env("SGLANG_LOG_GC", "SGLANG_GC_LOG")
"""

READS = """\
import os
from os import environ

from sglang.srt.environ import envs
from sglang.srt.utils import get_bool_env_var, get_int_env_var

PREFILL_ENV = "SGLANG_PREFILL_FLAG"
_DIAG_ENVS = ("SGLANG_DIAG_A", "SGLANG_DIAG_B")
MESSAGE_KEY = "SGLANG_NOT_READ"  # not said to be an env var name


class Worker:
    def __init__(self):
        self.a = os.environ.get("SGLANG_A", "1")
        self.b = os.getenv("SGLANG_B")
        self.c = os.environ["SGLANG_C"]
        if "SGL_LEGACY" in os.environ:
            pass
        self.d = get_bool_env_var("SGLANG_D", "false")
        self.e = get_int_env_var(
            "SGLANG_E",
            8,
        )
        self.f = environ.get("SGLANG_F")
        self.g = os.environ.setdefault("SGLANG_G", "x")
        self.compile = envs.SGLANG_ENABLE_TORCH_COMPILE.get()
        self.h = os.environ.get("CUDA_VISIBLE_DEVICES")  # not sglang's


def launch(env):
    os.environ["SGLANG_WRITTEN"] = "1"  # a write, not a read
    env.setdefault("SGLANG_CHILD_ONLY", "1")  # a child's env dict
    logger.info("SGLANG_LOGGED is set")
    monkeypatch.setenv("SGLANG_SET", "1")
    return os.environ.get("SGLANG_ENABLE_TORCH_COMPILE")
"""

LAZY = """\
environment_variables = {
    "SGLANG_DIFFUSION_ROOT": _lazy_path("SGLANG_DIFFUSION_ROOT", lambda: "/tmp"),
    "SGLANG_DIFFUSION_FLAG": _lazy_bool("SGLANG_DIFFUSION_FLAG"),
}
"""


def _tree(tmp_path):
    return write_tree(
        tmp_path,
        {
            "sglang/__init__.py": "",
            "sglang/srt/environ.py": ENVIRON,
            "sglang/srt/managers/worker.py": READS,
            "sglang/multimodal_gen/envs.py": LAZY,
            "sglang/test/test_utils.py": 'import os\nos.environ.get("SGLANG_ONLY_IN_TESTS")\n',
            "sglang/srt/broken.py": 'os.environ.get("SGLANG_BROKEN"\n',
        },
    )


def test_registry(tmp_path):
    found = extract_env_vars(_tree(tmp_path))
    compile_ = found["SGLANG_ENABLE_TORCH_COMPILE"]
    assert (compile_.kind, compile_.type, compile_.default) == ("registry", "EnvBool", "False")
    assert compile_.location == "sglang/srt/environ.py:19"  # the registry wins over a read
    assert found["SGLANG_QUEUED_TIMEOUT"].type == "EnvInt"
    assert found["SGLANG_QUEUED_TIMEOUT"].default == "30"
    assert found["SGLANG_CACHE_DIR"].default == "lambda: os.path.expanduser('~/.cache')"
    assert found["IS_H200"].kind == "registry"  # the registry's names, whatever the prefix
    assert "not_an_env" not in found and "helper" not in found


def test_deprecations(tmp_path):
    found = extract_env_vars(_tree(tmp_path))
    old = found["SGLANG_OLD_NAME"]
    assert (old.kind, old.deprecated) == ("read", "alias of SGLANG_NEW_NAME")
    assert found["SGLANG_GONE"].deprecated == "deprecated"
    assert found["SGLANG_RENAMED"].deprecated == "SGLANG_NEW_NAME"
    assert found["SGLANG_INVERTED"].deprecated == "deprecated"  # a transformed value
    # in the registry and in the deprecation table: still the registry entry, marked
    soon = found["SGLANG_REMOVED_SOON"]
    assert (soon.kind, soon.deprecated) == ("registry", "deprecated")
    # forwarded to the second name, which is not deprecated itself
    assert found["SGLANG_LOG_GC"].deprecated == "SGLANG_GC_LOG"
    gc_log = found["SGLANG_GC_LOG"]
    assert (gc_log.kind, gc_log.deprecated) == ("read", None)


def test_direct_reads(tmp_path):
    found = extract_env_vars(_tree(tmp_path))
    worker = "sglang/srt/managers/worker.py"
    a = found["SGLANG_A"]
    assert (a.kind, a.type, a.default, a.file) == ("read", "str", "'1'", worker)
    assert found["SGLANG_B"].default is None
    assert found["SGLANG_C"].type == "str"
    assert found["SGL_LEGACY"].kind == "read"
    assert (found["SGLANG_D"].type, found["SGLANG_D"].default) == ("bool", "'false'")
    assert (found["SGLANG_E"].type, found["SGLANG_E"].default) == ("int", "8")
    assert (
        found["SGLANG_E"].line == READS.splitlines().index("        self.e = get_int_env_var(") + 1
    )
    assert "SGLANG_F" in found and "SGLANG_G" in found
    assert found["SGLANG_PREFILL_FLAG"].kind == "read"  # through a named constant
    assert {"SGLANG_DIAG_A", "SGLANG_DIAG_B"} <= set(found)
    assert found["SGLANG_DIFFUSION_FLAG"].type == "bool"  # multimodal_gen's _lazy_bool
    assert found["SGLANG_DIFFUSION_ROOT"].default == "lambda: '/tmp'"


def test_what_is_not_a_read(tmp_path):
    found = extract_env_vars(_tree(tmp_path))
    for name in (
        "CUDA_VISIBLE_DEVICES",
        "SGLANG_NOT_READ",
        "SGLANG_WRITTEN",
        "SGLANG_CHILD_ONLY",
        "SGLANG_LOGGED",
        "SGLANG_SET",
        "SGLANG_ONLY_IN_TESTS",
        "SGLANG_BROKEN",
    ):
        assert name not in found, name


def test_sorted_and_round_trip(tmp_path):
    found = extract_env_vars(_tree(tmp_path))
    assert list(found) == sorted(found)
    assert {k: EnvVar.from_json(v.to_json()) for k, v in found.items()} == found


def test_no_registry_release(tmp_path):
    # 0.5.2 had no environ.py: reads only
    root = write_tree(
        tmp_path,
        {
            "sglang/__init__.py": "",
            "sglang/srt/utils.py": 'x = get_bool_env_var("SGLANG_IS_IN_CI")\n',
        },
    )
    found = extract_env_vars(root)
    assert list(found) == ["SGLANG_IS_IN_CI"]
    assert found["SGLANG_IS_IN_CI"].location == "sglang/srt/utils.py:1"


RETIRED = {
    "sglang/__init__.py": "",
    "sglang/srt/environ.py": """\
class Envs:
    SGLANG_USED = EnvBool(False)
    SGLANG_UNUSED = EnvBool(False)
    SGLANG_TWIN = EnvBool(False)
    SGLANG_NOTICED = EnvBool(False)
    SGLANG_NATIVE = EnvBool(False)
    SGLANG_PROSE = EnvBool(False)  # SGLANG_PROSE: a comment is no use


_DEPRECATED_ENVS = {
    "SGLANG_DROPPED": _DeprecatedEnv(note="always on now"),
    "SGLANG_FORWARDED": _DeprecatedEnv("SGLANG_USED"),
}
""",
    "sglang/srt/hooks.py": """\
import os

x = envs.SGLANG_USED.get()
y = os.getenv("SGL_TWIN")


def check():
    if os.getenv("SGLANG_SPEC_V1") is not None:
        logger.warning(
            "SGLANG_SPEC_V1 has been removed: "
            "the V2 worker always runs."
        )
    if "SGLANG_NOTICED" in os.environ:
        raise ValueError(f"SGLANG_NOTICED is no longer supported")
    if get_bool_env_var("SGLANG_CHATTY"):
        logger.info("SGLANG_CHATTY is on")
    if os.getenv("SGLANG_HALF") is not None:
        logger.warning("SGLANG_HALF is deprecated")
    return os.environ.get("SGLANG_HALF")


def advise():
    raise ValueError("set SGLANG_PROSE=1 to keep the old path")
""",
    "sglang/jit/include/log.h": 'const char* level = std::getenv("SGLANG_NATIVE");\n',
}


def test_retired_env_vars(tmp_path):
    """Setting a variable already did nothing when only its registry entry or a removal
    notice names it (0.5.16's SGLANG_ENABLE_SPEC_V2)."""
    found = extract_env_vars(write_tree(tmp_path, RETIRED))
    retired = {name: env.retired for name, env in found.items() if env.retired}
    assert retired == {
        "SGLANG_UNUSED": "registered but never read",
        "SGLANG_PROSE": "registered but never read",  # named only in a comment and a message
        "SGLANG_SPEC_V1": "only a removal notice reads it, at sglang/srt/hooks.py:8",
        "SGLANG_NOTICED": "only a removal notice reads it, at sglang/srt/hooks.py:13",
        "SGLANG_DROPPED": "only a removal notice reads it, at sglang/srt/environ.py:11",
    }
    # read elsewhere, through its legacy twin, forwarded, logged without a removal, or by
    # a C++ header of the wheel
    live = {"SGLANG_USED", "SGLANG_TWIN", "SGLANG_FORWARDED", "SGLANG_CHATTY", "SGLANG_NATIVE"}
    assert live <= set(found)
    assert found["SGLANG_HALF"].retired is None  # deprecated, but its value is still read
    assert EnvVar.from_json(found["SGLANG_DROPPED"].to_json()) == found["SGLANG_DROPPED"]


def _by_name_equals_whole(root, batches) -> None:
    """Each batch of names read alone (`names`, with and without the tree's index) gives
    the entries the whole surface has for them and for the other spelling of their
    prefix, and no other."""
    from driftaudit.snapshot.surfaces.envs import env_index, scope_of

    whole = extract_env_vars(root)
    index = env_index(root)
    for names in batches:
        want = {k: v.to_json() for k, v in whole.items() if k in scope_of(names)}
        for by_index in (None, index):
            got = extract_env_vars(root, names, by_index)
            assert {k: v.to_json() for k, v in got.items()} == want, names


def test_env_vars_read_by_name_are_the_whole_surfaces(tmp_path):
    for files in (RETIRED, None):
        root = write_tree(tmp_path / str(bool(files)), files) if files else _tree(tmp_path)
        names = sorted(extract_env_vars(root))
        _by_name_equals_whole(root, [[n] for n in names] + [names, ["SGLANG_ABSENT"]])


def test_a_run_reads_the_env_vars_it_names(tmp_path, monkeypatch):
    """`Snapshot.env_vars` reads the files that spell the names asked for, keeps each
    entry under a key of its own, and a second snapshot of the tree reads none."""
    from driftaudit.snapshot import Snapshot
    from driftaudit.snapshot.surfaces import envs
    from driftaudit.sources.tree import tree_from_root
    from driftaudit.store.db import BlobStore

    store = BlobStore(tmp_path / "cache.sqlite")
    root = write_tree(tmp_path / "tree", RETIRED)
    snapshot = Snapshot(tree_from_root("t", "directory", root), store)
    read = []
    real = envs.read_bytes
    monkeypatch.setattr(envs, "read_bytes", lambda p: read.append(str(p)) or real(p))
    found = snapshot.env_vars({"SGLANG_TWIN", "SGLANG_ABSENT"})
    assert set(found) == {"SGLANG_TWIN", "SGL_TWIN"}  # the other spelling comes along
    assert sorted(r.rsplit("/", 1)[-1] for r in read) == ["environ.py", "hooks.py"]
    assert snapshot.env_names_in("sglang/srt/hooks.py")[:2] == ["SGLANG_CHATTY", "SGLANG_HALF"]
    read.clear()
    again = Snapshot(tree_from_root("t", "directory", root), store)
    assert again.env_vars({"SGLANG_TWIN", "SGLANG_ABSENT"}) == found
    assert read == []


# ---------------------------------------------------------------- real releases


def _envs(version, release_cache):
    from driftaudit.sources import resolve_spec

    return extract_env_vars(resolve_spec(version, release_cache).root)


@pytest.mark.integration
def test_real_0_5_23_env_vars(release_cache):
    found = _envs("0.5.23", release_cache)
    registry = [v for v in found.values() if v.kind == "registry"]
    assert len(registry) >= 700
    assert all(v.file == "sglang/srt/environ.py" for v in registry)
    compile_ = found["SGLANG_ENABLE_TORCH_COMPILE"]
    assert (compile_.kind, compile_.type) == ("registry", "EnvBool")
    assert found["SGLANG_IS_IN_CI"].kind == "registry"
    assert found["SGLANG_OPT_SWA_RELEASE_LEAF_LOCK_AFTER_WINDOW"].deprecated == (
        "alias of SGLANG_OPT_RELEASE_PREFILL_SWA"
    )
    assert found["SGLANG_ENABLE_CP_V2"].deprecated == "deprecated"
    # direct reads outside the registry
    chat_route = found["SGLANG_OLLAMA_CHAT_ROUTE"]
    assert (chat_route.kind, chat_route.default) == ("read", "'/api/chat'")
    assert chat_route.file == "sglang/srt/entrypoints/http_server.py"
    assert found["SGLANG_DIFFUSION_CACHE_ROOT"].file == "sglang/multimodal_gen/envs.py"


@pytest.mark.integration
def test_real_env_vars_removed_in_0_5_23(release_cache):
    old = _envs("0.5.22", release_cache)
    new = _envs("0.5.23", release_cache)
    removed = set(old) - set(new)
    assert {"SGLANG_ENABLE_UNIFIED_RADIX_TREE", "SGL_DG_USE_NVRTC"} <= removed
    assert len(set(new) - set(old)) > 50


@pytest.mark.integration
def test_real_0_5_16_retired_env_vars(release_cache):
    found = _envs("0.5.16", release_cache)
    assert found["SGLANG_ENABLE_SPEC_V2"].retired == (
        "only a removal notice reads it, at sglang/srt/arg_groups/speculative_hook.py:85"
    )
    assert found["SGLANG_OPT_USE_COMPRESSOR_V2"].retired == "registered but never read"
    assert found["SGLANG_ENABLE_UNIFIED_RADIX_TREE"].retired is None  # still read


@pytest.mark.integration
def test_real_0_5_9_registry(release_cache):
    found = _envs("0.5.9", release_cache)
    assert sum(v.kind == "registry" for v in found.values()) >= 200
    assert found["IS_BLACKWELL"].type == "EnvBool"
    assert "SGL_DISABLE_TP_MEMORY_INBALANCE_CHECK" in found


@pytest.mark.integration
def test_real_env_vars_by_name_are_the_whole_surfaces(release_cache):
    """Names read alone give the whole surface's entries, on real releases; and what the
    env-var check reads of both trees for the names a consumer sets gives the changes the
    whole surfaces give (renames by alias, by prefix, of the opposite sense)."""
    import random

    from driftaudit.drift.surface_changes import env_tables, env_var_unused
    from driftaudit.snapshot import Snapshot
    from driftaudit.sources import resolve_spec
    from driftaudit.store.db import BlobStore

    trees = [resolve_spec(v, release_cache) for v in ("0.5.22", "0.5.23")]
    random.seed(7)
    whole = [extract_env_vars(t.root) for t in trees]
    names = sorted(whole[0])
    _by_name_equals_whole(trees[1].root, [random.sample(names, 12) for _ in range(12)])
    store = BlobStore(release_cache / "snapshots-env-by-name.sqlite")
    old, new = (Snapshot(t, store) for t in trees)
    unused = {n: env_var_unused(n, *whole) for n in names}
    asked = [n for n, change in unused.items() if change is not None]
    assert any(unused[n].replacement for n in asked)  # renames are among them
    for batch in [asked, *[random.sample(names, 10) for _ in range(6)]]:
        tables = env_tables(old, new, set(batch))
        for name in batch:
            assert env_var_unused(name, *tables) == unused[name], name
