"""`Snapshot`: the API model of one sglang tree, read lazily through the store.

Every `.py` file under `sglang/` is a module, including those in folders without
`__init__.py` (sglang/srt is a namespace folder): the tree is walked here, not
imported and not left to griffe's package finder. A module is parsed on first use; what
is kept of the tree is declared in `entries.py` and asked of the store, so a warm run
(or another release with the same file) never parses it again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from driftaudit.snapshot import entries
from driftaudit.snapshot.api_model import (
    ASSEMBLED,
    EXTRACTOR_VERSION,
    Alias,
    Attribute,
    Class,
    Module,
)
from driftaudit.snapshot.listing import UNREADABLE as _UNREADABLE
from driftaudit.snapshot.listing import list_tree
from driftaudit.snapshot.resolution import Resolved, Resolver
from driftaudit.snapshot.surfaces import envs
from driftaudit.snapshot.surfaces._files import TreeScan
from driftaudit.snapshot.surfaces.envs import EnvVar
from driftaudit.snapshot.surfaces.registry import SURFACES
from driftaudit.snapshot.surfaces.serverargs import ServerArgsModel
from driftaudit.sources.tree import SourceTree
from driftaudit.store import Entry, Json, Store
from driftaudit.store.db import BlobStore
from driftaudit.store.store import collector_paused

SERVER_ARGS_MODULE = "sglang.srt.server_args"
T = TypeVar("T")


def _extract_job(job: tuple[str, str, str]) -> tuple[str, bytes]:
    """(name, encoded model) of one module, for a pool of processes (`load_all`)."""
    name, relpath, root = job
    found = entries.extract_module_entries(name, relpath, Path(root))
    return name, entries.module_codec(name, relpath).encode(found.value)


class Snapshot:
    """`side`: module -> what else the parse of its model serves ("calls", "prints": see
    `entries.module_entry`), for the modules the consumer imports."""

    def __init__(
        self,
        tree: SourceTree,
        store: Store | BlobStore,
        side: Mapping[str, tuple[str, ...]] | None = None,
    ):
        self.tree = tree
        self.store = store if isinstance(store, Store) else Store(store)
        self.unreadable: list[str] = []  # files listed in the tree that cannot be read
        # the modules (from the release's manifest, else by a walk that hashes only the
        # files changed since the last run: `listing.py`)
        listing = list_tree(tree, self.store, EXTRACTOR_VERSION, self._unreadable)
        self.files = listing.files  # module name -> path relative to tree.root
        self.packages = listing.packages  # every folder, with or without __init__.py
        self._digests = listing.digests  # module name -> its file's content digest
        self.digest = listing.digest  # of the whole tree
        self._side = dict(side or {})
        self._modules: dict[str, Module] = {}
        self._resolver = Resolver(self)
        self._scan = TreeScan(tree.root)  # the surfaces' one read of the tree, when cold

    # ---- the tree -------------------------------------------------------------

    def kept(
        self, key: str, compute: Callable[[], Any], load: Callable[[Any], T] = lambda v: v
    ) -> T:
        """An answer that depends on this tree alone (`key` says on what: the tree's or a
        file's digest, and the question), kept in the store as JSON; `load` builds the
        value from the data (and raises on a wrong shape: computed again)."""
        return self.store.get(Entry(key, compute, Json(load)))

    def _unreadable(self, posix: str, exc: OSError) -> None:
        """A module that cannot be read stays a module (opaque), with a warning."""
        self.unreadable.append(posix)
        print(
            f"driftaudit: warning: cannot read {posix} in sglang {self.tree.spec}: "
            f"{exc.strerror}; its names are treated as unknown",
            file=sys.stderr,
        )

    def file_digest(self, name: str) -> str | None:
        """The content digest of module `name`'s file: a cache key for per-module indexes
        (None for a module that cannot be read: nothing to key by)."""
        digest = self._digests.get(name)
        return None if digest is None or digest.startswith(_UNREADABLE) else digest

    def source(self, name: str) -> str | None:
        """The text of module `name`'s file (None when it cannot be read: warned about)."""
        relpath = self.files.get(name)
        if relpath is None:
            return None
        try:
            return (self.tree.root / relpath).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def is_module(self, name: str) -> bool:
        return name in self.files or name in self.packages

    # ---- entries --------------------------------------------------------------------

    def module_entry(self, name: str) -> Entry[Module] | None:
        """The store entry of module `name`'s model (None: not a readable file)."""
        digest = self.file_digest(name)
        if name not in self.files or digest is None:
            return None

        def side() -> tuple[str, ...]:  # asked when computed: in a child too
            keys = {"calls": entries.calls_key, "prints": entries.prints_key}
            wanted = self._side.get(name, ())
            return tuple(k for k in wanted if not self.store.has(keys[k](name, digest)))

        return entries.module_entry(name, self.files[name], self.tree.root, digest, side)

    def tree_entries(self, env_names: Iterable[str] = ()) -> list[Entry]:
        """Every entry built from the whole tree, not from what the consumer uses, in the
        order a run first asks for them (what a child builds ahead on a cold run); the
        env-var surface is asked for by name: the tree's index of the names, then a
        batch reading the entries of `env_names` (`env_vars`)."""
        found: list[Entry] = [
            entries.server_args_entry(self._scan, self.digest),
            entries.names_entry(self._scan, self.files, self.digest),
        ]
        for name in SURFACES:  # declared in the order matching reads them
            if name == "env_vars":
                found.append(entries.env_index_entry(self._scan, self.digest))
                batch = self.env_batch(env_names)
                if batch is not None:
                    found.append(batch)
            else:
                found.append(entries.surface_entry(name, self._scan, self.digest))
        return found

    # ---- modules ----------------------------------------------------------------

    def module(self, name: str) -> Module | None:
        """The model of module `name`; a namespace folder gives an empty module."""
        if name in self._modules:
            return self._modules[name]
        if name not in self.files:
            if name in self.packages:
                self._modules[name] = Module(name, name.replace(".", "/") + "/")
                return self._modules[name]
            return None
        entry = self.module_entry(name)
        if entry is None:  # unreadable: nothing to key an entry by
            relpath = self.files[name]
            found = entries.extract_module_entries(name, relpath, self.tree.root)
            codec = entries.module_codec(name, relpath)  # as a kept model would read
            module = codec.decode(codec.encode(found.value))
        else:
            module = self.store.get(entry)
        self._modules[name] = self._with_surfaces(module)
        return self._modules[name]

    def load_all(self, workers: int | None = None) -> list[Module]:
        """Every module of the tree, parsing the ones not kept in parallel (`diff`)."""
        wanted = {n: e for n in self.files if (e := self.module_entry(n)) is not None}
        found = self.store.found_many(list(wanted.values()))
        missing = [n for n, e in wanted.items() if e.key not in found]
        if missing:
            root = str(self.tree.root)
            jobs = [(n, self.files[n], root) for n in missing]
            workers = workers or min(len(jobs), os.cpu_count() or 1)
            if workers > 1 and len(jobs) > 8:
                from concurrent.futures import ProcessPoolExecutor  # `diff` only: not warm

                with ProcessPoolExecutor(workers) as pool:
                    built = list(pool.map(_extract_job, jobs, chunksize=16))
            else:
                built = [_extract_job(job) for job in jobs]
            for name, data in built:
                self.store.put_encoded(wanted[name], data)
            found = self.store.found_many(list(wanted.values()))
        for model in found.values():
            self._modules.setdefault(model.name, self._with_surfaces(model))
        return [mod for n in self.files if (mod := self.module(n)) is not None]

    def server_args(self) -> ServerArgsModel | None:
        """The ServerArgs field model."""
        return self.store.get(entries.server_args_entry(self._scan, self.digest))

    def surface(self, name: str):
        """Routes, env vars, parsers, request structs, meta_info keys or requirements
        of the tree (see surfaces/registry.py), extracted once and kept."""
        return self.store.get(entries.surface_entry(name, self._scan, self.digest))

    def _with_surfaces(self, module: Module) -> Module:
        """ServerArgs gets its fields as members, whatever the layout that declares them
        (recent releases assemble it from namespace classes at import time)."""
        if module.name != SERVER_ARGS_MODULE:
            return module
        cls = module.members.get("ServerArgs")
        model = self.server_args() if isinstance(cls, Class) else None
        if model is None or not isinstance(cls, Class):
            return module
        if "__init__" not in cls.members and "dataclass" not in cls.labels:
            cls.labels.append("dataclass")  # assembled from fields: a keyword constructor
            cls.labels.append(ASSEMBLED)  # but not one `dataclasses.fields` accepts
        for name, arg in model.fields.items():
            if name not in cls.members:
                cls.members[name] = Attribute(
                    name,
                    arg.line,
                    arg.annotation,
                    arg.default,
                    ["instance-attribute", "server-arg"],
                    file=arg.file,
                )
        return module

    # ---- environment variables, by name -----------------------------------------------

    def env_vars(self, names: Iterable[str]) -> dict[str, EnvVar]:
        """The entries of the env-var surface for `names` (and the other spelling of
        their legacy prefix), as the whole surface has them, without reading the whole
        surface: each name is read from the files that spell it (`envs.EnvIndex`) and
        kept under a key of its own. A name the tree does not read has no entry."""
        scope = sorted(envs.scope_of(names))
        found = self._env_batch(scope)
        return {n: e for n in scope if (e := found[n]) is not None}

    def _env_batch(self, scope: list[str]) -> dict[str, EnvVar | None]:
        wanted = {n: entries.env_entry(self.digest, n) for n in scope}
        found = self.store.found_many(list(wanted.values()))
        result = {n: found[e.key] for n, e in wanted.items() if e.key in found}
        unread = [n for n in scope if n not in result]
        if unread:
            read = self._read_env_vars(unread)
            for name in unread:
                result[name] = read.get(name)
                self.store.put(wanted[name], result[name])
        return result

    def env_batch(self, names: Iterable[str]) -> Entry | None:
        """The child's job reading the entries of `names` ahead (None: all kept already)."""
        scope = sorted(envs.scope_of(names))
        if all(self.store.has(entries.env_entry(self.digest, n).key) for n in scope):
            return None

        def read() -> Any:
            from driftaudit.store import Yield

            self._env_batch(scope)
            return Yield(b"")

        return entries.env_batch_entry(self.digest, scope, read)

    def env_names_in(self, rel: str) -> list[str]:
        """The variable names file `rel` of the tree spells (the candidates of a rename)."""
        index = self.env_index()
        position = index.files.index(rel) if rel in index.files else None
        return sorted(n for n, files in index.names.items() if position in files)

    def _read_env_vars(self, names: list[str]) -> dict[str, EnvVar]:
        whole = entries.surface_entry("env_vars", self._scan, self.digest)
        if self.store.has(whole.key):
            return self.store.get(whole)  # the whole surface is there already
        with collector_paused():
            return envs.extract_env_vars(self.tree.root, names, self.env_index())

    def env_index(self) -> envs.EnvIndex:
        """Which files of the tree spell each variable name."""
        return self.store.get(entries.env_index_entry(self._scan, self.digest))

    # ---- names --------------------------------------------------------------------

    def name_index(self) -> dict[str, list[str]]:
        """Top-level name -> modules that define it (by a fast text scan)."""
        return self.store.get(entries.names_entry(self._scan, self.files, self.digest))

    def definers(self, names: Iterable[str]) -> dict[str, list[str]]:
        """name -> the modules that define it at top level (the name index's answer for
        each of `names`, each kept on its own)."""
        names = list(names)
        unique = list(dict.fromkeys(names))
        found = self.store.get_many(
            [entries.definers_entry(self.digest, n, self.name_index) for n in unique]
        )
        answers = dict(zip(unique, found, strict=True))
        return {name: answers[name] for name in names}

    def definitions(self, name: str) -> Iterator[Resolved]:
        """Every top-level definition (not import) of `name` in the tree."""
        for module_name in self.definers([name])[name]:
            module = self.module(module_name)
            obj = module.members.get(name) if module else None
            if obj is not None and not isinstance(obj, Alias):
                yield Resolved(f"{module_name}.{name}", obj, module, f"{module_name}.{name}")

    # ---- resolution ----------------------------------------------------------------

    def resolve(self, path: str) -> Resolved | None:
        """What `path` names, following re-exports, star imports and base classes."""
        found, consumed = self.resolve_longest(path)
        return found if consumed == len(path.split(".")) or (found and found.opaque) else None

    def resolve_longest(self, path: str) -> tuple[Resolved | None, int]:
        """The longest prefix of `path` that resolves, and how many segments it has (see
        `resolution.Resolver`)."""
        return self._resolver.resolve_longest(path)
