"""The store entries of one sglang tree: each answer a `Snapshot` gives that is worth
keeping, declared once (key, computation, codec; see driftaudit/store). A module's
entries are keyed by its file's content digest (releases that share a file share the
entry); the tree-wide ones (ServerArgs model, name index, surfaces, env vars) by the
tree's digest. Nothing here reads the store: the snapshot asks it, and the pipeline
hands the tree-wide ones to a child to build ahead (store/ahead.py)."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from stat import S_ISREG
from typing import cast

from driftaudit.pysource import read_bytes
from driftaudit.snapshot.api_model import EXTRACTOR_VERSION, Module
from driftaudit.snapshot.surfaces import envs, serverargs
from driftaudit.snapshot.surfaces._files import TreeScan
from driftaudit.snapshot.surfaces.registry import SURFACES, SURFACES_VERSION
from driftaudit.snapshot.surfaces.serverargs import ServerArgsModel
from driftaudit.store import Entry, Json, Raw, Yield, key
from driftaudit.store.codecs import optional, strings, table_of_strings

NAMES_VERSION = "1"
# led by the newline, not `^` with re.M: re then jumps from newline to newline instead of
# trying every offset (3x faster on a release); the text is scanned with a "\n" in front
_TOP_LEVEL_DEF_RE = re.compile(
    rb"\n(?:(?:async[ \t]+def|def|class)[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=(?!=))"
)


# ---- one module -------------------------------------------------------------------------


def module_key(name: str, digest: str) -> str:
    return key("module", EXTRACTOR_VERSION, name, digest)


def calls_key(name: str, digest: str) -> str:
    """A module's call data (snapshot/callgraph.py)."""
    from driftaudit.snapshot.callgraph import CALLGRAPH_VERSION

    return key("callgraph", CALLGRAPH_VERSION, name, digest)


def prints_key(name: str, digest: str) -> str:
    """A module's function fingerprints (snapshot/fingerprints.py)."""
    from driftaudit.snapshot.fingerprints import FINGERPRINTS_VERSION

    return key("fingerprints", FINGERPRINTS_VERSION, name, digest)


def module_codec(name: str, relpath: str) -> Json:
    """Module.from_json, refusing an entry that holds another module."""

    def load(data) -> Module:
        module = Module.from_json(data)
        if module.name != name or module.file != relpath:
            raise ValueError(f"the cache entry of {name} holds {module.name}")
        return module

    return Json(load, Module.to_json)


def module_entry(
    name: str, relpath: str, root: Path, digest: str, side: Callable[[], tuple[str, ...]]
) -> Entry[Module]:
    """The model of module `name`; the same parse also yields what `side()` asks for
    ("calls", "prints": the modules the consumer imports, which the behaviour checks
    read too): one parse where three readers need the module."""
    return Entry(
        module_key(name, digest),
        lambda: extract_module_entries(name, relpath, root, digest, side()),
        module_codec(name, relpath),
    )


def extract_module_entries(
    name: str, relpath: str, root: Path, digest: str = "", side: tuple[str, ...] = ()
) -> Yield:
    """The module's model, and (key, bytes) of its `side` entries from the same tree."""
    try:
        path = Path(root) / relpath
        if not S_ISREG(path.stat().st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        code = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:  # dangling link, no permission: known to exist, not what it holds
        return Yield(Module(name, relpath, parse_error=f"unreadable: {exc.strerror}"))
    from driftaudit.snapshot.extract import extract_module  # griffe: only when extracting

    trees: list = []
    module = extract_module(name, relpath, code, trees if side else None)
    also = []
    tree = trees[0] if trees else None
    if tree is not None and "calls" in side:
        from driftaudit.snapshot.callgraph import CALLS_CODEC, calls_of_tree

        data = calls_of_tree(name, tree, relpath.endswith("__init__.py"))
        also.append((calls_key(name, digest), CALLS_CODEC.encode(data)))
    if tree is not None and "prints" in side:
        from driftaudit.snapshot.fingerprints import prints_codec, prints_of_tree

        prints = prints_of_tree(name, tree)
        also.append((prints_key(name, digest), prints_codec(name).encode(prints)))
    return Yield(module, also)


# ---- the whole tree ----------------------------------------------------------------------


def server_args_entry(scan: TreeScan, digest: str) -> Entry[ServerArgsModel | None]:
    return Entry(
        key("serverargs", serverargs.EXTRACTOR_VERSION, digest),
        lambda: serverargs.extract_server_args(_root(scan)),
        Json(optional(ServerArgsModel.from_json), lambda m: m.to_json() if m else None),
    )


def names_entry(scan: TreeScan, files: dict[str, str], digest: str) -> Entry[dict]:
    """Top-level name -> the modules that define it, by a fast text scan."""

    def compute() -> dict[str, list[str]]:
        index: dict[str, list[str]] = {}
        for name, relpath in files.items():
            try:
                data = read_bytes(scan.root / relpath)
            except OSError:
                continue  # warned about by the listing
            for match in _TOP_LEVEL_DEF_RE.finditer(b"\n" + data):
                symbol = (match.group(1) or match.group(2)).decode()
                modules = index.setdefault(symbol, [])
                if not modules or modules[-1] != name:
                    modules.append(name)
        return index

    return Entry(key("names", NAMES_VERSION, digest), compute, Json(table_of_strings))


def definers_entry(digest: str, name: str, index: Callable[[], dict]) -> Entry[list[str]]:
    """The modules defining `name`, kept on its own: a later run asking the same names
    reads a few small entries, not the whole index (2 MB of JSON for a recent release)."""
    return Entry(
        key("definers", NAMES_VERSION, digest, name),
        lambda: index().get(name, []),
        Json(strings),
    )


def surface_entry(name: str, scan: TreeScan, digest: str) -> Entry:
    """One surface of the tree (surfaces/registry.py), read through the tree's one scan."""
    surface = SURFACES[name]
    return Entry(
        key("surface", SURFACES_VERSION, name, digest),
        lambda: surface.extract(_root(scan)),
        Json(surface.load, surface.dump),
    )


def env_index_entry(scan: TreeScan, digest: str) -> Entry[envs.EnvIndex]:
    """Which files of the tree spell each variable name."""
    return Entry(
        key("envindex", SURFACES_VERSION, digest),
        lambda: envs.env_index(_root(scan)),
        Json(envs.EnvIndex.from_json, envs.EnvIndex.to_json),
    )


def env_entry(digest: str, name: str) -> Entry[envs.EnvVar | None]:
    """The env-var surface's entry for `name` (None: the tree does not read it). Read in
    batches (`Snapshot.env_vars`): its computation is the batch's."""
    return Entry(
        key("env", SURFACES_VERSION, digest, name),
        _batched,
        Json(optional(envs.EnvVar.from_json), lambda e: e.to_json() if e else None),
    )


def env_batch_entry(digest: str, names: Iterable[str], read: Callable[[], list]) -> Entry:
    """A child's job reading the entries of `names` at once (`read` stores them)."""
    from driftaudit.store.keys import question

    names = sorted(names)
    provides = tuple(env_entry(digest, n).key for n in names)
    return Entry(key("envnames", SURFACES_VERSION, digest, question(*names)), read, _DONE, provides)


def _root(scan: TreeScan) -> Path:
    """The scan as the extractors' root: it is one (`os.fspath`, `/`), and their reads of
    the tree go through it (`surfaces/_files.py::iter_sources`)."""
    return cast(Path, scan)


def _batched():
    raise AssertionError("env entries are computed in batches (Snapshot.env_vars)")


_DONE = Raw()
