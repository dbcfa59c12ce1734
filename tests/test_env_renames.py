"""Env vars sglang renamed: which replacement DA504 names (sglang's own mapping, the legacy
prefix, one similar new name at the same place, never two), and the fix that renames the
variable where the consumer sets or reads it (script, YAML, Python string), leaving
comments and log texts alone; a second fix changes nothing."""

from __future__ import annotations

import shutil

import pytest

from driftaudit.drift.env_renames import find_replacement, similar
from driftaudit.pipeline import run_compare, run_fix
from driftaudit.snapshot.surfaces.envs import EnvVar

from .conftest import FIXTURES

CASE = FIXTURES / "codes" / "DA504-renamed"


def env(name, type_="EnvBool", default="False", file="sglang/srt/environ.py", note=None):
    return EnvVar(name, "registry", type_, default, file, 1, note)


def table(*envs: EnvVar) -> dict[str, EnvVar]:
    return {e.name: e for e in envs}


def test_the_old_sglang_mapping_is_a_safe_alias():
    old = table(env("SGLANG_NSA_X", note="alias of SGLANG_DSA_X"), env("SGLANG_DSA_X"))
    found = find_replacement("SGLANG_NSA_X", old, table(env("SGLANG_DSA_X")))
    assert (found.name, found.how, found.safe) == ("SGLANG_DSA_X", "alias", True)
    # a mapping onto a name the new tree does not read either: nothing
    assert find_replacement("SGLANG_NSA_X", old, table(env("SGLANG_OTHER"))) is None


def test_forwarding_to_the_opposite_sense_is_no_rename():
    old = table(env("SGL_DISABLE_CHECK", note="SGLANG_ENABLE_CHECK"), env("SGLANG_ENABLE_CHECK"))
    found = find_replacement("SGL_DISABLE_CHECK", old, table(env("SGLANG_ENABLE_CHECK")))
    assert found.inverted and not found.safe


def test_legacy_prefix():
    found = find_replacement("SGL_X_Y", table(env("SGL_X_Y")), table(env("SGLANG_X_Y")))
    assert (found.name, found.how, found.safe) == ("SGLANG_X_Y", "prefix", False)


@pytest.mark.parametrize(
    "new, expected",
    [
        ([env("SGLANG_FAST_PATH_ENABLED")], "SGLANG_FAST_PATH_ENABLED"),
        ([env("SGLANG_FAST_PATH_ENABLED", default="True")], None),  # another default
        ([env("SGLANG_FAST_PATH_ENABLED", type_="EnvInt")], None),  # another type
        ([env("SGLANG_FAST_PATH_ENABLED", file="sglang/srt/other.py")], None),  # elsewhere
        ([env("SGLANG_SLOW_MODE")], None),  # not similar
        ([env("SGLANG_FAST_PATH_ENABLED"), env("SGLANG_FAST_PATH_ON")], None),  # two
    ],
)
def test_similar_new_name_at_the_same_place_only_when_alone(new, expected):
    old = table(env("SGLANG_ENABLE_FAST_PATH"))
    found = find_replacement("SGLANG_ENABLE_FAST_PATH", old, table(*new))
    assert (found.name if found else None) == expected
    if found:
        assert (found.how, found.safe) == ("similar", False)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("SGLANG_ENABLE_FAST_PATH", "SGLANG_FAST_PATH_ENABLED", True),  # reordered
        ("SGLANG_OPT_USE_FAST_PATH", "SGLANG_FAST_PATH", True),  # filler words dropped
        ("SGLANG_NVTX_TRACE", "SGLANG_NVTX_TRACE_SCHEDULER", True),  # one word more
        ("SGLANG_NSA_FUSE_TOPK", "SGLANG_DSA_FUSE_TOPK", True),  # one word respelled
        # real near misses from sglang 0.5.14 -> 0.5.23
        (
            "SGLANG_DIFFUSION_ATTENTION_BACKEND",
            "SGLANG_DIFFUSION_COSMOS3_MULTIVIEW_ATTENTION_BACKEND",
            False,
        ),
        ("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "SGLANG_OPT_DEEPGEMM_MEGA_GATE", False),
        ("SGLANG_OPT_USE_JIT_NORM", "SGLANG_OPT_USE_GATE_TOPK_JIT", False),
        ("SGLANG_ENABLE_X_CHECK", "SGLANG_DISABLE_X_CHECK", False),  # the opposite
        ("SGLANG_FOO", "SGLANG_FOO_BAR", False),  # one shared word is too little
    ],
)
def test_similar_names(a, b, expected):
    assert similar(a, b) is expected
    assert similar(b, a) is expected


# ---- end to end: compare -> fix --apply -> compare --------------------------------


@pytest.mark.parametrize("unsafe", [False, True])
def test_fix_renames_env_vars_where_the_consumer_sets_and_reads_them(tmp_path, cache_dir, unsafe):
    consumer = tmp_path / "consumer"
    shutil.copytree(CASE / "consumer", consumer)
    old, new = str(CASE / "old"), str(CASE / "new")
    run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=unsafe)
    script = (consumer / "scripts/launch.sh").read_text()
    # sglang's alias: safe
    assert "export SGLANG_DSA_FUSE_TOPK=0  # expect" in script
    assert 'echo "SGLANG_NSA_FUSE_TOPK is set"' in script  # an echoed text: not a use
    assert "# SGLANG_RETIRED_KNOB is not needed" in script  # a comment
    assert "export SGLANG_CHUNK_SIZE=8" in script  # two candidates: none
    assert "export SGL_DISABLE_TP_CHECK=1" in script  # the opposite sense: no edit
    # a similar new name: unsafe
    fast = "SGLANG_FAST_PATH_ENABLED=1 python -m sglang.launch_server" in script
    assert fast == unsafe
    pod = (consumer / "deploy/pod.yaml").read_text()
    assert "- name: SGLANG_DSA_FUSE_TOPK  # expect" in pod
    assert "- name: SGLANG_LOG_GC  # expect" in pod
    code = (consumer / "app.py").read_text()
    assert 'os.environ["SGLANG_DSA_FUSE_TOPK"] = "0"' in code
    assert 'logging.info("SGLANG_NSA_FUSE_TOPK is on")' in code  # a log text
    assert '# os.environ["SGLANG_RETIRED_KNOB"] = "1"' in code
    assert ('os.getenv("SGLANG_FAST_PATH_ENABLED")' in code) == unsafe
    assert ('{"SGLANG_FAST_PATH_ENABLED": "1"' in code) == unsafe
    after = run_compare(consumer, old, new, cache_dir).findings
    left = sorted({f.symbol for f in after})
    expected = ["SGLANG_CHUNK_SIZE", "SGL_DISABLE_TP_CHECK"]
    assert left == (expected if unsafe else sorted(["SGLANG_ENABLE_FAST_PATH", *expected]))
    again = run_fix(consumer, old, new, cache_dir, apply=True, unsafe_fixes=unsafe)
    assert not any(c.changed for c in again.changes)
