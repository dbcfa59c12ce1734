"""`Snapshot`: the API model of one sglang tree, read lazily and cached by content.

Every `.py` file under `sglang/` is a module, including those in folders without
`__init__.py` (sglang/srt is a namespace folder): the tree is walked here, not
imported and not left to griffe's package finder. A module is parsed on first use;
its model is stored in the cache keyed by the file's content, so a warm run (or
another release with the same file) never parses it again.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from stat import S_ISREG
from typing import Any, TypeVar

from driftaudit.cache import BlobStore
from driftaudit.pysource import read_bytes
from driftaudit.snapshot.gcpause import gc_paused
from driftaudit.snapshot.listing import UNREADABLE as _UNREADABLE
from driftaudit.snapshot.listing import list_tree
from driftaudit.snapshot.model import EXTRACTOR_VERSION, Alias, Attribute, Class, Module, Obj
from driftaudit.snapshot.prefetch import Prefetch
from driftaudit.snapshot.surfaces import envs, serverargs
from driftaudit.snapshot.surfaces._files import TreeScan, shared_reads
from driftaudit.snapshot.surfaces.envs import EnvVar
from driftaudit.snapshot.surfaces.registry import SURFACES, SURFACES_VERSION
from driftaudit.snapshot.surfaces.serverargs import ServerArgsModel
from driftaudit.sources.tree import SourceTree

# led by the newline, not `^` with re.M: re then jumps from newline to newline instead of
# trying every offset (3x faster on a release); the text is scanned with a "\n" in front
_TOP_LEVEL_DEF_RE = re.compile(
    rb"\n(?:(?:async[ \t]+def|def|class)[ \t]+(\w+)|(\w+)[ \t]*(?::[^=\n]*)?=(?!=))"
)
_MAX_DEPTH = 25
SERVER_ARGS_MODULE = "sglang.srt.server_args"
# what loading a corrupt or outdated cache entry raises: the value is computed again
_CORRUPT = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError)
T = TypeVar("T")


@dataclass
class Resolved:
    """What a dotted path names in a snapshot."""

    path: str  # the dotted path as asked (or the prefix of it that resolved)
    obj: Obj | Module  # the object found: a Module, or a model object
    module: Module | None  # the module that defines it (for file:line)
    canonical: str  # where it is defined: sglang.srt.x.Class.meth
    opaque: bool = False  # outside sglang, or not knowable statically: stop here

    @property
    def location(self) -> str | None:
        if self.module is None:
            return None
        lineno = getattr(self.obj, "lineno", None)
        file = getattr(self.obj, "file", None) or self.module.file
        return f"{file}:{lineno}" if lineno else file


def _name_index_of(data: Any) -> dict[str, list[str]]:
    """A cached name index, checked for shape (a wrong one is computed again)."""
    if not isinstance(data, dict) or not all(
        isinstance(v, list) and all(isinstance(m, str) for m in v) for v in data.values()
    ):
        raise TypeError("not a name index")
    return data


def _encode(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


def _extract_job(job: tuple[str, str, str]) -> tuple[str, bytes]:
    name, relpath, root = job
    return name, _extract_entries(name, relpath, root)[0][1]


def _side_key(kind: str, name: str, digest: str) -> str:
    """The store key of what `kind` ("calls", "prints") keeps of module `name`."""
    if kind == "calls":
        from driftaudit.snapshot.callgraph import data_key

        return data_key(name, digest)
    from driftaudit.snapshot.fingerprints import prints_key

    return prints_key(name, digest)


def _extract_entries(
    name: str, relpath: str, root: str, digest: str = "", side: tuple[str, ...] = ()
) -> list[tuple[str, bytes]]:
    """(key, value) of the module's model, first, then of what `side` asks for, read from
    the same syntax tree: "calls" (its call data, callgraph.py), "prints" (its function
    fingerprints, fingerprints.py): one parse where three readers need the module. The
    model's key is left empty: the caller knows it."""
    try:
        path = Path(root) / relpath
        if not S_ISREG(path.stat().st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        code = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:  # dangling link, no permission: known to exist, not what it holds
        module = Module(name, relpath, parse_error=f"unreadable: {exc.strerror}")
        return [("", _encode(module.to_json()))]
    from driftaudit.snapshot.extract import extract_module  # griffe: only when extracting

    trees: list = []
    module = extract_module(name, relpath, code, trees if side else None)
    entries = [("", _encode(module.to_json()))]
    tree = trees[0] if trees else None
    if tree is not None and "calls" in side:
        from driftaudit.snapshot.callgraph import calls_of_tree

        data = calls_of_tree(name, tree, relpath.endswith("__init__.py"))
        entries.append((_side_key("calls", name, digest), _encode(data)))
    if tree is not None and "prints" in side:
        from driftaudit.snapshot.fingerprints import encode_prints, prints_of_tree

        prints = encode_prints(prints_of_tree(name, tree))
        entries.append((_side_key("prints", name, digest), prints))
    return entries


class Snapshot:
    def __init__(self, tree: SourceTree, store: BlobStore):
        self.tree = tree
        self.store = store
        self.unreadable: list[str] = []  # files listed in the tree that cannot be read
        # the modules (from the release's manifest, else by a walk that hashes only the
        # files changed since the last run: `listing.py`)
        listing = list_tree(tree, store, EXTRACTOR_VERSION, self._unreadable)
        self.files = listing.files  # module name -> path relative to tree.root
        self.packages = listing.packages  # every folder, with or without __init__.py
        self._digests = listing.digests  # module name -> its file's content digest
        self.digest = listing.digest  # of the whole tree
        self._modules: dict[str, Module] = {}
        self._name_index: dict[str, list[str]] | None = None
        self._definers: dict[str, list[str]] = {}  # answers of `definers` so far
        self._server_args: ServerArgsModel | bool | None = None
        self._resolved: dict[str, tuple[Resolved | None, int]] = {}
        self._surfaces: dict[str, object] = {}
        self._env: dict[str, EnvVar | None] = {}  # the env-var entries read by name so far
        self._env_index: envs.EnvIndex | None = None
        self._env_job: tuple[str, set[str]] | None = None  # (key, names) read ahead
        self._reads = TreeScan(tree.root)  # the surfaces' one read of the tree, when cold
        self.prefetch: Prefetch | None = None  # a child building the tree-wide entries
        # module -> what other readers of it the extraction of its model also serves, from
        # the same parse ("calls", "prints": see `_extract_entries`): set for the modules
        # the consumer imports, which the behaviour checks read too
        self.side: dict[str, tuple[str, ...]] = {}

    # ---- the tree -------------------------------------------------------------

    def kept(
        self, key: str, compute: Callable[[], Any], load: Callable[[Any], T] = lambda v: v
    ) -> T:
        """An answer that depends on this tree alone (`key` says on what: the tree's or a
        file's digest, and the question), computed once as JSON-ready data and kept in
        the store; `load` turns the data back into the value."""
        return self._get_or_compute(key, lambda: _encode(compute()), load)

    def _get_or_compute(
        self, key: str, compute: Callable[[], bytes], load: Callable[[Any], T]
    ) -> T:
        """The value stored under `key`; else `compute()` (its JSON encoding) is stored.
        Either way the value is loaded from the JSON, so a cold run sees what a warm run
        will; a corrupt entry is computed again."""
        if self.prefetch is not None and key in self.prefetch.keys:
            # a surface is left to the child, which has read the tree for all of them
            # (`TreeScan`): taken over, it would cost this process a read of its own
            surface = key.startswith("surface:")
            self.prefetch.wait(key, block=not key.startswith("module:"), take=not surface)
        data = self.store.get(key)
        if data is not None:
            try:
                return load(json.loads(data))
            except _CORRUPT:
                pass
        with gc_paused():
            data = compute()
        self.store.put(key, data)
        return load(json.loads(data))

    def _unreadable(self, posix: str, exc: OSError) -> None:
        """A module that cannot be read stays a module (opaque), with a warning."""
        self.unreadable.append(posix)
        print(
            f"driftaudit: warning: cannot read {posix} in sglang {self.tree.spec}: "
            f"{exc.strerror}; its names are treated as unknown",
            file=sys.stderr,
        )

    def _key(self, name: str) -> str:
        return f"module:{EXTRACTOR_VERSION}:{name}:{self._digests[name]}"

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

    # ---- modules ----------------------------------------------------------------

    def module(self, name: str) -> Module | None:
        """The model of module `name`; a namespace folder gives an empty module."""
        if name in self._modules:
            return self._modules[name]
        if name not in self.files:
            if name in self.packages:
                folder = name.replace(".", "/")
                self._modules[name] = Module(name, folder + "/")
                return self._modules[name]
            return None
        job = (name, self.files[name], str(self.tree.root))
        if self._digests[name].startswith(_UNREADABLE):  # nothing to key a cache entry by
            with gc_paused():
                module = Module.from_json(json.loads(_extract_job(job)[1]))
        else:
            ((key, compute),) = self.module_entry(name).items()

            def model() -> bytes:  # what the same parse gave the other readers is kept too
                entries = compute()
                self.store.put_many(entries[1:])
                return entries[0][1]

            module = self._get_or_compute(key, model, self._module_loader(name))
        self._modules[name] = self._with_surfaces(module)
        return module

    def module_entry(self, name: str) -> dict[str, Callable[[], list[tuple[str, bytes]]]]:
        """key -> compute of the cached model of module `name` (none: not a readable file):
        its (key, value) entries, the model's first, then what `self.side` asks of the
        module from the same parse (see `_extract_entries`)."""
        if name not in self.files or self._digests[name].startswith(_UNREADABLE):
            return {}
        key, relpath, digest = self._key(name), self.files[name], self._digests[name]
        root, side = str(self.tree.root), self.side.get(name, ())

        def compute() -> list[tuple[str, bytes]]:
            wanted = tuple(k for k in side if _side_key(k, name, digest) not in self.store)
            entries = _extract_entries(name, relpath, root, digest, wanted)
            return [(key, entries[0][1]), *entries[1:]]

        return {key: compute}

    def _module_loader(self, name: str) -> Callable[[Any], Module]:
        """Module.from_json, refusing an entry that holds another module."""

        def load(data: Any) -> Module:
            module = Module.from_json(data)
            if module.name != name or module.file != self.files[name]:
                raise ValueError(f"the cache entry of {name} holds {module.name}")
            return module

        return load

    # ---- sglang surfaces ------------------------------------------------------------

    def tree_entries(self, env_names: Iterable[str] = ()) -> dict[str, Callable[[], Any]]:
        """key -> compute of every cached entry built from the whole tree, not from what
        the consumer uses (built ahead by snapshot/prefetch.py on a cold run), in the
        order a run first asks for them; the env-var surface is asked for by name: the
        tree's index of the names, then the entries of `env_names` (`env_entry`)."""
        entries = {self._server_args_key(): self._extract_server_args}
        entries[self._names_key()] = self._scan_names
        for name in SURFACES:  # declared in the order matching reads them
            if name == "env_vars":
                entries[self._env_index_key()] = self._build_env_index
                entries.update(self.env_entry(env_names))
            else:
                entries[self._surface_key(name)] = partial(self._extract_surface, name)
        return entries

    def server_args(self) -> ServerArgsModel | None:
        """The ServerArgs field model (cached with the tree's digest)."""
        if self._server_args is not None:
            return self._server_args or None
        model = self._get_or_compute(
            self._server_args_key(),
            self._extract_server_args,
            lambda data: ServerArgsModel.from_json(data) if data else None,
        )
        self._server_args = model or False
        return model

    def _server_args_key(self) -> str:
        return f"serverargs:{serverargs.EXTRACTOR_VERSION}:{self.digest}"

    def _extract_server_args(self) -> bytes:
        model = serverargs.extract_server_args(self.tree.root)
        return _encode(model.to_json() if model else None)

    def surface(self, name: str):
        """Routes, env vars, parsers, request structs, meta_info keys or requirements
        of the tree (see surfaces/registry.py), extracted once and cached."""
        if name in self._surfaces:
            return self._surfaces[name]
        value = self._get_or_compute(
            self._surface_key(name), partial(self._extract_surface, name), SURFACES[name].load
        )
        self._surfaces[name] = value
        return value

    def _surface_key(self, name: str) -> str:
        return f"surface:{name}:{SURFACES_VERSION}:{self.digest}"

    def _extract_surface(self, name: str) -> bytes:
        surface = SURFACES[name]
        with shared_reads(self._reads):  # the surfaces of a cold run read the tree once
            return _encode(surface.dump(surface.extract(self.tree.root)))

    # ---- environment variables, by name -----------------------------------------------

    def env_vars(self, names: Iterable[str]) -> dict[str, EnvVar]:
        """The entries of the env-var surface for `names` (and the other spelling of
        their legacy prefix), as the whole surface has them, without reading the whole
        surface: each name is read from the files that spell it (`envs.EnvIndex`) and
        kept under a key of its own. A name the tree does not read has no entry."""
        scope = envs.scope_of(names)
        job = self._env_job
        if job is not None and self.prefetch is not None and scope <= job[1]:
            self.prefetch.wait(job[0], take=False)  # the child reads them for the run
        found, read = self._load_env([n for n in sorted(scope) if n not in self._env])
        self._env.update(found)
        self.store.put_many(read)
        return {n: e for n in sorted(scope) if (e := self._env[n]) is not None}

    def _load_env(
        self, names: list[str]
    ) -> tuple[dict[str, EnvVar | None], list[tuple[str, bytes]]]:
        """name -> its entry (None: the tree does not read it) for `names`, from the store
        or else read now; and the (key, value) of those read now, to store."""
        keys = {n: self._env_key(n) for n in names}
        stored = self.store.get_many(list(keys.values())) if names else {}
        found: dict[str, EnvVar | None] = {}
        unread = []
        for name in names:
            try:
                data = json.loads(stored[keys[name]])
                found[name] = EnvVar.from_json(data) if data is not None else None
            except (KeyError, *_CORRUPT):  # not stored, or a corrupt entry: read now
                unread.append(name)
        read = self._read_env_vars(unread) if unread else {}
        found.update((n, read.get(n)) for n in unread)
        new = [(keys[n], _encode(e.to_json() if (e := read.get(n)) else None)) for n in unread]
        return found, new

    def env_entry(self, names: Iterable[str]) -> dict[str, Callable[[], list]]:
        """key -> compute of the entries of `names` (`env_vars`), for a child to read
        ahead (their (key, value) entries; the key itself names the question)."""
        scope = envs.scope_of(names)
        stored = self.store.get_many([self._env_key(n) for n in scope]) if scope else {}
        if len(stored) == len(scope):
            return {}  # all read already (a warm tree): nothing for a child to do
        question = hashlib.sha256("\0".join(sorted(scope)).encode()).hexdigest()
        key = f"envnames:{SURFACES_VERSION}:{self.digest}:{question}"
        self._env_job = (key, scope)

        return {key: lambda: self._load_env(sorted(scope))[1]}

    def env_names_in(self, rel: str) -> list[str]:
        """The variable names file `rel` of the tree spells (the candidates of a rename)."""
        index = self.env_index()
        position = index.files.index(rel) if rel in index.files else None
        return sorted(n for n, files in index.names.items() if position in files)

    def _read_env_vars(self, names: list[str]) -> dict[str, EnvVar]:
        if "env_vars" in self._surfaces or self._surface_key("env_vars") in self.store:
            return self.surface("env_vars")  # the whole surface is there already
        with gc_paused():
            return envs.extract_env_vars(self.tree.root, names, self.env_index())

    def env_index(self) -> envs.EnvIndex:
        """Which files of the tree spell each variable name (cached with the tree)."""
        if self._env_index is None:
            self._env_index = self._get_or_compute(
                self._env_index_key(), self._build_env_index, envs.EnvIndex.from_json
            )
        return self._env_index

    def _env_index_key(self) -> str:
        return f"envindex:{SURFACES_VERSION}:{self.digest}"

    def _env_key(self, name: str) -> str:
        return f"env:{SURFACES_VERSION}:{self.digest}:{name}"

    def _build_env_index(self) -> bytes:
        with shared_reads(self._reads):  # the surfaces of a cold run read the tree once
            return _encode(envs.env_index(self.tree.root).to_json())

    def _with_surfaces(self, module: Module) -> Module:
        """ServerArgs gets its fields as members, whatever the layout that declares them
        (recent releases assemble it from namespace classes at import time)."""
        if module.name != SERVER_ARGS_MODULE:
            return module
        cls = module.members.get("ServerArgs")
        model = self.server_args() if isinstance(cls, Class) else None
        if model is None:
            return module
        if "__init__" not in cls.members and "dataclass" not in cls.labels:
            cls.labels.append("dataclass")  # assembled from fields: a keyword constructor
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

    def _from_cache(self, name: str) -> Module | None:
        """The cached model of `name`, if the entry is whole and is that module."""
        if self._digests[name].startswith(_UNREADABLE):
            return None
        data = self.store.get(self._key(name))
        if data is None:
            return None
        try:
            return self._module_loader(name)(json.loads(data))
        except _CORRUPT:
            return None  # rebuilt by the caller

    def load_all(self, workers: int | None = None) -> list[Module]:
        """Every module of the tree, parsing the ones not cached in parallel."""
        missing = []
        for name in self.files:
            if name not in self._modules:
                module = self._from_cache(name)
                if module is None:
                    missing.append(name)
                else:
                    self._modules[name] = self._with_surfaces(module)
        if missing:
            jobs = [(n, self.files[n], str(self.tree.root)) for n in missing]
            workers = workers or min(len(jobs), os.cpu_count() or 1)
            if workers > 1 and len(jobs) > 8:
                from concurrent.futures import ProcessPoolExecutor  # `diff` only: not warm

                with ProcessPoolExecutor(workers) as pool:
                    results = list(pool.map(_extract_job, jobs, chunksize=16))
            else:
                with gc_paused():
                    results = [_extract_job(job) for job in jobs]
            self.store.put_many([(self._key(n), data) for n, data in results])
            for name, data in results:
                self._modules[name] = self._with_surfaces(Module.from_json(json.loads(data)))
        return [self._modules[name] for name in self.files]

    # ---- names --------------------------------------------------------------------

    def name_index(self) -> dict[str, list[str]]:
        """Top-level name -> modules that define it (by a fast text scan; cached)."""
        if self._name_index is not None:
            return self._name_index
        self._name_index = self._get_or_compute(self._names_key(), self._scan_names, _name_index_of)
        return self._name_index

    def _names_key(self) -> str:
        return f"names:{self.digest}"

    def _scan_names(self) -> bytes:
        index: dict[str, list[str]] = {}
        for name, relpath in self.files.items():
            try:
                data = read_bytes(self.tree.root / relpath)
            except OSError:
                continue  # warned about in _scan
            for match in _TOP_LEVEL_DEF_RE.finditer(b"\n" + data):
                symbol = (match.group(1) or match.group(2)).decode()
                modules = index.setdefault(symbol, [])
                if not modules or modules[-1] != name:
                    modules.append(name)
        return _encode(index)

    def definers(self, names: Iterable[str]) -> dict[str, list[str]]:
        """name -> the modules that define it at top level (the name index's answer for
        each of `names`). Each answer is also kept under a key of its own: a later run
        asking the same names (a consumer edited since) reads a few small entries, not
        the whole index (2 MB of JSON, 10 ms to decode, for a recent release)."""
        names = list(names)
        wanted = [n for n in dict.fromkeys(names) if n not in self._definers]
        if wanted and self._name_index is None:
            keys = {self._definers_key(name): name for name in wanted}
            for key, data in self.store.get_many(list(keys)).items():
                try:
                    modules = json.loads(data)
                except ValueError:
                    continue  # a damaged entry: answered again below
                if isinstance(modules, list) and all(isinstance(m, str) for m in modules):
                    self._definers[keys[key]] = modules
            wanted = [n for n in wanted if n not in self._definers]
        if wanted:
            index = self.name_index()
            for name in wanted:
                self._definers[name] = index.get(name, [])
            self.store.put_many(
                [(self._definers_key(n), _encode(self._definers[n])) for n in wanted]
            )
        return {name: self._definers[name] for name in names}

    def _definers_key(self, name: str) -> str:
        return f"definers:{self.digest}:{name}"

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
        """The longest prefix of `path` that resolves, and how many segments it has.

        An opaque result (outside sglang, or a module that does not parse) ends the
        walk: nothing more can be said about the rest of the path.
        """
        if path not in self._resolved:
            self._resolved[path] = self._resolve_segments(path.split("."), 0)
        return self._resolved[path]

    def _resolve_segments(self, segments: list[str], depth: int) -> tuple[Resolved | None, int]:
        if not segments or segments[0] != "sglang" or depth > _MAX_DEPTH:
            return None, 0
        current = Resolved("sglang", self.module("sglang") or Module("sglang", ""), None, "sglang")
        current.module = current.obj if isinstance(current.obj, Module) else None
        for index, segment in enumerate(segments[1:], start=1):
            step = self._member(current, segment, depth)
            if step is None:
                return current, index
            step.path = ".".join(segments[: index + 1])
            current = step
            if current.opaque:
                return current, len(segments)
        return current, len(segments)

    def _member(self, parent: Resolved, name: str, depth: int) -> Resolved | None:
        obj = parent.obj
        if isinstance(obj, Module):
            return self._module_member(obj, name, depth)
        if isinstance(obj, Class):
            return self._class_member(obj, parent, name, depth, set())
        return None  # attributes and functions: their members are not modelled

    def _module_member(self, module: Module, name: str, depth: int) -> Resolved | None:
        if module.parse_error:
            return Resolved("", module, module, f"{module.name}.{name}", opaque=True)
        member = module.members.get(name)
        if isinstance(member, Alias):
            return self._follow(member, module, depth)
        if member is not None:
            return Resolved("", member, module, f"{module.name}.{name}")
        submodule = f"{module.name}.{name}"
        if self.is_module(submodule):
            sub = self.module(submodule)
            return Resolved("", sub, sub, submodule)
        for source in module.wildcards:
            if depth > _MAX_DEPTH:
                break
            source_module = self.module(source)
            if source_module is None:
                continue  # a star import from outside sglang: its names are unknown
            exported = source_module.exports
            if exported is not None and name not in exported:
                continue
            if exported is None and name.startswith("_"):
                continue
            found = self._module_member(source_module, name, depth + 1)
            if found is not None:
                return found
        return None

    def _follow(self, alias: Alias, module: Module, depth: int) -> Resolved:
        """An import inside sglang: resolve its target (opaque if outside sglang)."""
        target = alias.target
        if target.split(".", 1)[0] != "sglang":
            return Resolved("", alias, module, target, opaque=True)
        found, consumed = self._resolve_segments(target.split("."), depth + 1)
        if found is not None and consumed == len(target.split(".")):
            return found
        if found is not None and found.opaque:
            return found
        # sglang imports something that is not there (guarded import, TYPE_CHECKING):
        # the name exists in the module, but what it is cannot be known.
        return Resolved("", alias, module, target, opaque=True)

    def _class_member(
        self, cls: Class, owner: Resolved, name: str, depth: int, seen: set[str]
    ) -> Resolved | None:
        member = cls.members.get(name)
        if member is not None:
            if isinstance(member, Alias):
                return Resolved("", member, owner.module, member.target, opaque=True)
            return Resolved("", member, owner.module, f"{owner.canonical}.{name}")
        seen.add(owner.canonical)
        for base in cls.bases:
            if base in seen or not base.startswith("sglang."):
                continue
            found = self.resolve(base) if depth < _MAX_DEPTH else None
            if found is not None and isinstance(found.obj, Class):
                hit = self._class_member(found.obj, found, name, depth + 1, seen)
                if hit is not None:
                    return hit
        return None
