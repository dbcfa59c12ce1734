"""The modules of a tree, from a verified release's manifest or by a walk: the same
modules, folders and order either way; the manifest's digests need no hashing."""

from __future__ import annotations

import json

from driftaudit.snapshot import listing
from driftaudit.sources import index
from driftaudit.sources.tree import Manifest, tree_from_root
from driftaudit.store import Store
from driftaudit.store.db import BlobStore

from .conftest import write_tree

FILES = {
    "sglang/__init__.py": "",
    "sglang/version.py": "__version__ = '1.0'\n",
    "sglang/srt/__init__.py": "",
    "sglang/srt/z_last.py": "x = 1\n",
    "sglang/srt/a/__init__.py": "",
    "sglang/srt/a/mod.py": "y = 2\n",
    "sglang/srt/templates/chat.json": "{}",  # a folder without Python: still a package
    "sglang/srt/__pycache__/mod.cpython-311.py": "",  # never listed
    "sglang/srt/v1.2/old.py": "",  # a dotted folder: not importable
    "sglang/srt/not-a-module.py": "",  # not an identifier
    "sglang-1.0.dist-info/METADATA": "Name: sglang\nVersion: 1.0\n",
}


def test_the_manifest_lists_what_a_walk_lists(tmp_path):
    root = write_tree(tmp_path / "release", FILES)
    index.write_manifest(root)
    manifest = root / index.MANIFEST  # listed backwards: the order comes from the listing
    entries = json.loads(manifest.read_text())
    manifest.write_text(json.dumps(dict(reversed(list(entries.items())))))
    manifest = index.check_manifest(root)
    assert isinstance(manifest, Manifest)
    store = Store(BlobStore(tmp_path / "cache.sqlite"))
    told = []
    tree = tree_from_root("1.0", "index", root, manifest)
    from_manifest = listing.list_tree(tree, store, "v", lambda *a: told.append(a))
    walked = listing.list_tree(tree_from_root("1.0", "index", root), store, "v",
                               lambda *a: told.append(a))  # fmt: skip
    assert (
        list(from_manifest.files.items())
        == list(walked.files.items())
        == [
            ("sglang", "sglang/__init__.py"),
            ("sglang.version", "sglang/version.py"),
            ("sglang.srt", "sglang/srt/__init__.py"),
            ("sglang.srt.z_last", "sglang/srt/z_last.py"),
            ("sglang.srt.a", "sglang/srt/a/__init__.py"),
            ("sglang.srt.a.mod", "sglang/srt/a/mod.py"),
        ]
    )
    assert from_manifest.packages == walked.packages
    assert "sglang.srt.templates" in walked.packages
    assert "sglang.srt.__pycache__" not in walked.packages
    assert from_manifest.digests["sglang.srt.a.mod"] == manifest.files["sglang/srt/a/mod.py"][2]
    assert from_manifest.digest and walked.digest and not told
