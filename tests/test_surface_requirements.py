"""Requires-Dist of the wheel METADATA, and their changes between releases."""

from __future__ import annotations

import pytest

from driftaudit.snapshot.surfaces.requires_dist import (
    Requirement,
    diff_requirements,
    parse_requires_dist,
    read_requirements,
)

from .conftest import write_tree

OLD = """\
Metadata-Version: 2.4
Name: sglang
Version: 0.5.22
Requires-Dist: aiohttp
Requires-Dist: flashinfer_python[cu13]==0.7.1
Requires-Dist: sglang-kernel==0.4.9
Requires-Dist: kernels>=0.14.1,<0.15
Requires-Dist: uvicorn
Requires-Dist: tokenspeed_mla==0.1.8
Requires-Dist: av==16.1.0; sys_platform == "linux"
Requires-Dist: sgl-eval==0.1.2; extra == "test"
Requires-Dist: only-old-extra==1.0; extra == "dev"
Provides-Extra: test

The long description. Requires-Dist: not-a-header==1.0
"""

NEW = """\
Metadata-Version: 2.4
Name: sglang
Version: 0.5.23
Requires-Dist: aiohttp
Requires-Dist: flashinfer_python[cu13]==0.7.2
Requires-Dist: sglang-kernel==0.4.10
Requires-Dist: kernels<0.15, >=0.14.1
Requires-Dist: uvicorn>=0.51
Requires-Dist: sgl-flash-mla==1.0.0
Requires-Dist: av==16.1.0; sys_platform == "linux" and platform_machine == "aarch64"
Requires-Dist: sgl-eval==0.1.3; extra == "test"
Requires-Dist: only-new-extra==1.0; extra == "dev"
"""


def _release(tmp_path, version, metadata):
    return write_tree(
        tmp_path / version,
        {"sglang/__init__.py": "", f"sglang-{version}.dist-info/METADATA": metadata},
    )


def test_parse_requirement_forms():
    flashinfer = parse_requires_dist("flashinfer_python[cu13]==0.7.2")
    assert (flashinfer.name, flashinfer.specifier, flashinfer.package_extras) == (
        "flashinfer-python",
        "==0.7.2",
        ["cu13"],
    )
    assert flashinfer.marker is None and flashinfer.extra is None
    paren = parse_requires_dist('Foo.Bar (>=1.0, <2) ; python_version < "3.11"')
    assert (paren.name, paren.specifier, paren.marker) == (
        "foo-bar",
        "<2,>=1.0",
        'python_version < "3.11"',
    )
    url = parse_requires_dist('pkg @ https://example.com/pkg.whl ; extra == "Dev_Tools"')
    assert (url.specifier, url.extra, url.marker) == (
        "@ https://example.com/pkg.whl",
        "dev-tools",
        None,
    )
    mixed = parse_requires_dist(
        'st_attn==0.0.7; (platform_machine != "aarch64") and extra == "diffusion"'
    )
    assert (mixed.name, mixed.extra, mixed.marker) == (
        "st-attn",
        "diffusion",
        'platform_machine != "aarch64"',
    )
    bare = parse_requires_dist("IPython")
    assert (bare.name, bare.specifier, bare.raw) == ("ipython", "", "IPython")
    assert parse_requires_dist("[not a requirement") is None


def test_read_requirements(tmp_path):
    requirements = read_requirements(_release(tmp_path, "0.5.22", OLD))
    assert [r.name for r in requirements][:3] == ["aiohttp", "flashinfer-python", "sglang-kernel"]
    assert len(requirements) == 9  # the body's "Requires-Dist:" is not a header
    assert requirements[3].specifier == "<0.15,>=0.14.1"
    assert requirements[-1].extra == "dev"
    assert [Requirement.from_json(r.to_json()) for r in requirements] == requirements


def test_tree_without_metadata(tmp_path):
    assert read_requirements(write_tree(tmp_path, {"sglang/__init__.py": ""})) == []


def test_diff_requirements(tmp_path):
    old = read_requirements(_release(tmp_path, "0.5.22", OLD))
    new = read_requirements(_release(tmp_path, "0.5.23", NEW))
    diff = diff_requirements(old, new)
    by_name = {(d["name"], d["extra"]): d for d in diff}
    assert by_name["flashinfer-python", None]["change"] == "changed"
    assert (
        by_name["flashinfer-python", None]["old"],
        by_name["flashinfer-python", None]["new"],
    ) == (
        "==0.7.1",
        "==0.7.2",
    )
    assert (by_name["sglang-kernel", None]["old"], by_name["sglang-kernel", None]["new"]) == (
        "==0.4.9",
        "==0.4.10",
    )
    assert by_name["uvicorn", None]["old"] == "" and by_name["uvicorn", None]["new"] == ">=0.51"
    assert by_name["sgl-flash-mla", None]["change"] == "added"
    assert by_name["tokenspeed-mla", None]["change"] == "removed"
    assert by_name["tokenspeed-mla", None]["new"] is None
    marker = by_name["av", None]
    assert marker["change"] == "changed" and marker["old"] == marker["new"] == "==16.1.0"
    assert marker["new_marker"].endswith('platform_machine == "aarch64"')
    # an extra's requirement: reported when both have it, never added/removed alone
    assert by_name["sgl-eval", "test"]["change"] == "changed"
    assert ("only-old-extra", "dev") not in by_name and ("only-new-extra", "dev") not in by_name
    # unchanged (order of specifier parts does not matter)
    assert ("aiohttp", None) not in by_name and ("kernels", None) not in by_name
    assert diff_requirements(old, old) == []


# ---------------------------------------------------------------- real releases


def _requirements(version, release_cache):
    from driftaudit.sources import resolve_spec

    return read_requirements(resolve_spec(version, release_cache).root)


@pytest.mark.integration
def test_real_requirements_0_5_22_to_0_5_23(release_cache):
    old = _requirements("0.5.22", release_cache)
    new = _requirements("0.5.23", release_cache)
    assert len(old) >= 130 and len(new) >= 130
    changes = {(d["name"], d["extra"]): d for d in diff_requirements(old, new)}
    flashinfer = changes["flashinfer-python", None]
    assert (flashinfer["change"], flashinfer["old"], flashinfer["new"]) == (
        "changed",
        "==0.7.1",
        "==0.7.2",
    )
    kernel = changes["sglang-kernel", None]
    assert (kernel["old"], kernel["new"]) == ("==0.4.9", "==0.4.10")
    assert changes["sgl-flash-mla", None]["change"] == "added"  # FlashMLA moved to a wheel
    assert changes["sgl-deep-gemm", None]["new"] == "==0.2.3.post2"
    assert changes["tokenspeed-mla", None]["change"] == "removed"
    assert changes["sgl-eval", "test"]["new"] == "==0.1.3"
    # torch and transformers carry over
    assert ("torch", None) not in changes and ("transformers", None) not in changes
    torch = next(r for r in new if r.name == "torch" and r.extra is None)
    assert torch.specifier == "==2.14.1"


@pytest.mark.integration
def test_real_requirements_0_5_9_to_0_5_14(release_cache):
    old = _requirements("0.5.9", release_cache)
    new = _requirements("0.5.14", release_cache)
    changes = {(d["name"], d["extra"]): d for d in diff_requirements(old, new)}
    flashinfer = changes["flashinfer-python", None]
    assert (flashinfer["old"], flashinfer["new"]) == ("==0.6.3", "==0.6.12")
    assert flashinfer["new_raw"] == "flashinfer_python[cu13]==0.6.12"
    assert (changes["cuda-python", None]["old"], changes["cuda-python", None]["new"]) == (
        "==12.9",
        ">=13.0",
    )
    assert changes["hf-transfer", None]["change"] == "removed"
    assert changes["flash-attn-4", None]["change"] == "added"
    assert ("ipython", None) not in changes  # moved in the file, not changed
    assert all(d["change"] in ("added", "removed", "changed") for d in changes.values())
    assert all(d["extra"] is None or d["change"] == "changed" for d in changes.values())
