"""The registry of codes: one stable, documented code per kind of breakage, like ruff's
rules (`driftaudit rule DA102` prints one). Drift codes are carried by the change classes
in `driftaudit.drift`; a few are consumer-side variants of them (a removed name the consumer
patches, a method it overrides), and a few come from the consumer alone or from a pack.

DA0xx consumer input · DA1xx imports and modules · DA2xx call signatures ·
DA3xx classes, attributes, enums, return shapes · DA4xx ServerArgs and CLI flags ·
DA5xx HTTP, env vars, parsers, meta_info, requirements · DA6xx source patches ·
DA7xx behaviour found from code (copied code, call-graph reach, bypassed constructors,
changed parameter types) · DA9xx packs.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit.errors import DriftauditError

SEVERITIES = ("error", "warning", "info")
NO_FIX = "no automatic fix"
APPLICABILITIES = ("safe", "unsafe")  # as in ruff: unsafe fixes need --unsafe-fixes
ORIGINS = ("drift", "usage", "consumer", "pack")


@dataclass(frozen=True)
class Code:
    """A documented code: what it flags, why it breaks, an example, the fix and how safe
    the automatic fix is. `origin` says where findings with it come from:

    - "drift": a change class in `driftaudit.drift` carries it;
    - "usage": a consumer-side variant of the drift codes in `variant_of`: the matcher
      reports those under this code when the consumer `use`s the name that way;
    - "consumer": the consumer alone (a file that does not parse, a pin);
    - "pack": an entry of a declarative pack (top-level `rules/`, see `driftaudit.packs`).
    """

    code: str
    kind: str  # the JSON `kind`, e.g. import-moved
    severity: str
    summary: str
    why: str
    example: str
    fix: str
    fix_safety: str = NO_FIX  # "safe: why" or "unsafe: why" when a codemod fixes it
    origin: str = "drift"
    variant_of: tuple[str, ...] = ()
    use: str = ""  # with variant_of: "patch" (assigned or patched), "override"
    # the aspect of a name's state its change is measured on, when the code names one
    # (`history/states.py`): `history/dating.py` dates the finding by that aspect alone
    aspect: str = ""

    def __post_init__(self) -> None:
        if self.fix_safety != NO_FIX and self.applicability is None:
            raise ValueError(f"{self.code}: fix_safety must start with 'safe:' or 'unsafe:'")

    @property
    def applicability(self) -> str | None:
        """ "safe" (behaviour kept), "unsafe" (behaviour may change) or None (no codemod)."""
        head = self.fix_safety.partition(":")[0]
        return head if head in APPLICABILITIES else None


CODES: dict[str, Code] = {}


def _code(*args, **kwargs) -> Code:
    code = Code(*args, **kwargs)
    CODES[code.code] = code
    return code


PARSE_ERROR = _code(
    "DA001",
    "parse-error",
    "warning",
    "A consumer file does not parse, so its use of sglang could not be audited.",
    "The file may hide breakages: nothing in it was checked.",
    "def f(:  # a syntax error",
    "Fix the syntax error (or exclude the file), then run again.",
    origin="consumer",
)

UNUSED_SUPPRESSION = _code(
    "DA002",
    "unused-suppression",
    "info",
    "A `# driftaudit: ignore[...]` comment silences nothing: no finding (or no finding "
    "with the listed code) is on its line.",
    "A stale suppression hides nothing today but will hide the next real finding there.",
    "x = 1  # driftaudit: ignore[DA102]",
    "Remove the comment, or the codes in it that no longer apply.",
    origin="consumer",
)

STALE_BASELINE_ENTRY = _code(
    "DA003",
    "stale-baseline-entry",
    "info",
    "A baseline entry matches no finding any more: the code it accepted was fixed or removed.",
    "Nothing breaks; the baseline only grows stale and could accept a new finding like it.",
    "an entry for calls.py DA201 after the call was fixed",
    "Run `driftaudit check --update-baseline` to rewrite the baseline.",
    origin="consumer",
)

SGLANG_PINS_DISAGREE = _code(
    "DA004",
    "sglang-pins-disagree",
    "warning",
    "The consumer pins sglang to releases that cannot all hold: an exact pin another file "
    "or extra excludes (`==0.5.2` here, `==0.5.6` there); the audit covers one of them.",
    "Pins installed together cannot all be satisfied: the install fails or one pin silently "
    "wins (an error then). Pins of separate environments (a second Dockerfile, an extra) "
    "are a supported range, but --old came from one of them and the others go unaudited.",
    "requirements_sglang.txt: sglang[all]==0.5.2  # setup.py: sglang[srt]==0.5.6",
    "Make the pins agree, or audit each release the consumer supports (`--old` per pin).",
    origin="consumer",
)

MODULE_REMOVED = _code(
    "DA101",
    "module-removed",
    "error",
    "An imported sglang module no longer exists in the new release.",
    "`import` raises ModuleNotFoundError when the module is loaded.",
    "import sglang.srt.managers.scheduler_dp_attn_mixin as m",
    "Import the names you need from their new modules (see DA102 findings).",
)

IMPORT_MOVED = _code(
    "DA102",
    "import-moved",
    "error",
    "An sglang name is gone from the module it was imported from but is defined, "
    "with a compatible signature, in another module.",
    "`from old.module import name` raises ImportError.",
    "from sglang.srt.managers.scheduler_dp_attn_mixin import prepare_mlp_sync_batch_raw",
    "Import it from the module named in the finding.",
    "safe: the same name, with a compatible signature, imported from its new module",
)

SYMBOL_REMOVED = _code(
    "DA103",
    "symbol-removed",
    "error",
    "A name the consumer imports or reads from an sglang module no longer exists.",
    "ImportError at import time, or AttributeError where it is read.",
    "from sglang.srt.layers.sampler import SYNC_TOKEN_IDS_ACROSS_TP",
    "Find its replacement in the new release; the finding names the old definition.",
)

PATCH_TARGET_REMOVED = _code(
    "DA104",
    "patch-target-removed",
    "error",
    "The consumer assigns or patches an sglang attribute that no longer exists "
    '(`mod.x = ...`, `Cls.meth = fn`, `setattr`, `mock.patch("sglang...")`, '
    "`monkeypatch.setattr`).",
    "A plain assignment (or the builtin `setattr`) still runs but has no effect: sglang "
    "no longer reads that name (a warning). `mock.patch`, `patch.object` and "
    "`monkeypatch.setattr` raise AttributeError (an error), unless told to create it "
    "(`create=True`, `raising=False`: a warning).",
    "LogitsProcessor._get_logits = my_get_logits",
    "Patch what the new release calls instead.",
    origin="usage",
    variant_of=("DA101", "DA102", "DA103", "DA301", "DA302"),
    use="patch",
)

KEYWORD_REMOVED = _code(
    "DA201",
    "keyword-removed",
    "error",
    "A call passes a keyword argument the new signature no longer accepts.",
    "TypeError: unexpected keyword argument.",
    "init_model_parallel_group(..., pynccl_use_current_stream=False)",
    "Drop the argument (check the new signature for a replacement).",
    "unsafe: what the argument asked for is dropped with it; check the new signature for "
    "a replacement",
)

KEYWORD_RENAMED = _code(
    "DA202",
    "keyword-renamed",
    "error",
    "A call passes a keyword whose parameter was renamed (same position, new name).",
    "TypeError: unexpected keyword argument.",
    "f(old_name=1)  # now def f(new_name)",
    "Rename the keyword to the new parameter name.",
    "safe: the same parameter (same position and kind) under its new name",
)

REQUIRED_PARAMETER_ADDED = _code(
    "DA203",
    "required-parameter-added",
    "error",
    "The new signature has a required parameter the call does not pass.",
    "TypeError: missing required argument.",
    "f(a)  # now def f(a, b)",
    "Pass a value for the new parameter.",
)

POSITIONAL_MISMATCH = _code(
    "DA204",
    "positional-mismatch",
    "error",
    "A positional argument now binds to another parameter, or the call passes more "
    "positional arguments than the new signature takes.",
    "TypeError, or worse: the value silently lands in the wrong parameter.",
    "f(1, 2)  # was def f(a, b), now def f(b, a) or def f(a, *, b)",
    "Pass the arguments by keyword.",
)

DEFAULT_CHANGED = _code(
    "DA205",
    "default-changed",
    "warning",
    "A parameter the call leaves out has a new default value and the new code ends up "
    "using another value than the old (not where it replaces the new default by the old "
    "value: `x or {}`, `if x is None: x = OLD`, a fallback at every read; not where the "
    "call's other arguments keep every read from running, e.g. a seed with "
    "temperature=0; not a parameter the new release deprecates and defaults to None).",
    "The call still works but may behave differently.",
    "f()  # def f(x=1) became def f(x=2)",
    "Pass the old default explicitly if you depend on it.",
)

PARAMETER_ADDED = _code(
    "DA206",
    "parameter-added",
    "info",
    "A function or class gained an optional or keyword-only parameter (a dataclass or "
    "request struct gained a field): a changelog entry of `driftaudit diff`.",
    "Nothing breaks; the new parameter may be what a consumer now has to pass to keep "
    "the behaviour it wants, or what lets it drop a workaround.",
    "def init_group(ranks, backend, use_symm_mem=False)  # use_symm_mem is new",
    "Read what the parameter does; pass it where your code needs it.",
)

MEMBER_REMOVED = _code(
    "DA301",
    "member-removed",
    "error",
    "A class member (method or attribute) the consumer uses was removed.",
    "AttributeError where it is used.",
    "Scheduler.prepare_mlp_sync_batch_raw(...)",
    "Use the replacement named in the finding, if any.",
)

ENUM_MEMBER_REMOVED = _code(
    "DA302",
    "enum-member-removed",
    "error",
    "An enum member the consumer uses was removed.",
    "AttributeError where it is used.",
    "ForwardMode.DUMMY_FIRST",
    "Use the member that replaced it.",
    "unsafe: renamed to the new member with the most similar name; its value or meaning may differ",
)

RETURN_ARITY_CHANGED = _code(
    "DA303",
    "return-arity-changed",
    "error",
    "A call result is unpacked into N names (or taken by index, `out[2]`) but the function "
    "now returns another number of values, or one object (a dataclass) instead of a tuple.",
    "ValueError: too many (or not enough) values to unpack; TypeError: cannot unpack "
    "non-iterable object (is not subscriptable); IndexError.",
    "a, b, c = compute_dp_attention_world_info(...)  # now returns 4 values",
    "Unpack the new number of values (the finding shows the new return statement).",
    "safe: the values keep their places as the new return statement orders them; "
    "new values go to `_`",
)

DEAD_OVERRIDE = _code(
    "DA304",
    "dead-override",
    "warning",
    "A consumer subclass overrides a method that the sglang base class no longer has.",
    "Nothing calls the override any more: the behaviour it added silently stops (a "
    "warning; a `super().method()` inside it fails where it runs: its own DA301 error).",
    "class MyRunner(ModelRunner):\n      def init_cuda_graphs(self): ...  # gone from ModelRunner",
    "Override the method that replaced it (the finding names candidates).",
    origin="usage",
    variant_of=("DA301",),
    use="override",
)

OVERRIDE_SIGNATURE_CHANGED = _code(
    "DA305",
    "override-signature-changed",
    "error",
    "A consumer subclass overrides a method whose signature changed in the sglang base (or "
    "a wrapper that takes an sglang instance, is put in its place and mirrors its old "
    "signature), including a new optional parameter that sglang's callers pass and the "
    "override does not accept; a function installed in sglang's place (`Cls.meth = fn`) "
    "that the new release's own calls of the name cannot bind, when the old release's could.",
    "sglang now calls the override with other arguments: TypeError or wrong values.",
    "def forward(self, input_ids, positions, forward_batch): ...  # base gained `pp_proxy`",
    "Update the override's parameters to the new base signature.",
    origin="usage",
    variant_of=("DA201", "DA202", "DA203", "DA204", "DA206"),
    use="override",
)

ABSTRACT_METHOD_ADDED = _code(
    "DA306",
    "abstract-method-added",
    "error",
    "An sglang base class that a consumer class subclasses gained an abstract method (or a "
    "method became abstract) that neither the consumer class nor a class between it and "
    "the base defines.",
    "Building the consumer class raises `TypeError: Can't instantiate abstract class` "
    "wherever it is instantiated.",
    "class Adapter(EngineBase): ...  # EngineBase gained @abstractmethod begin_weight_update",
    "Define the method in the consumer class (the finding names the base that declares it).",
)

DATACLASS_LOST = _code(
    "DA307",
    "no-longer-dataclass",
    "error",
    "The consumer calls `dataclasses.fields`, `replace`, `asdict` or `astuple` on an sglang "
    "class (or an instance of one) that was a dataclass and no longer is (a `msgspec` "
    "struct, a class built at import time); `dataclasses.is_dataclass` on it now answers "
    "False (a warning).",
    "The call raises `TypeError: must be called with a dataclass type or instance`; an "
    "`is_dataclass` test silently takes the other branch.",
    "names = [f.name for f in dataclasses.fields(ServerArgs)]  # a msgspec Struct now",
    "Use the new class's own field API (the finding names what the class is now).",
    aspect="dataclass",
)

SERVER_ARG_REMOVED = _code(
    "DA401",
    "server-arg-removed",
    "error",
    "A ServerArgs field the consumer sets or reads was removed (keyword, attribute, "
    "a keyword dict splatted into ServerArgs(**kwargs), or a wrapped `sglang_<field>`).",
    "TypeError for ServerArgs(field=...), AttributeError for server_args.field. A "
    "write `server_args.field = ...` still runs and nothing reads it (a warning).",
    "ServerArgs(enable_piecewise_cuda_graph=True)",
    "Drop it, or set the field that replaced it (the finding names it when a flag moved).",
    "safe: renamed to the field sglang itself maps it to (its flag moved, or a deprecation "
    "named it); a field found by name and help similarity only is an unsafe fix",
)

SERVER_ARG_TYPE_CHANGED = _code(
    "DA402",
    "server-arg-type-changed",
    "warning",
    "A ServerArgs field the consumer sets changed type so that the value it passes may "
    "no longer fit (e.g. Optional[int] -> int); not a widening (int -> Optional[int]).",
    "Values that were valid may now be refused or mean something else.",
    "ServerArgs(enable_decoder_swa_bounded_replay=...)",
    "Check the values you pass and the new meaning of None.",
)

SERVER_ARG_DEFAULT_CHANGED = _code(
    "DA403",
    "server-arg-default-changed",
    "warning",
    "A ServerArgs field the consumer uses changed its default.",
    "Where the consumer leaves it unset, results may change silently (reported as info "
    "when the consumer never reads the field, and not at all when it sets the field after "
    "building ServerArgs: the default is never seen; nor when the new default is None and "
    "the new release resolves it to the old value at startup: a declared `fallback=`, an "
    "`if x is None:` branch of its argument resolution; nor, the consumer not reading it, "
    "when every read of it in the new release sits behind a setting the call leaves off).",
    "ServerArgs(model_path=...)  # enable_decoder_swa_bounded_replay: False -> None",
    "Set the old default explicitly if you depend on it.",
)

FLAG_REMOVED = _code(
    "DA404",
    "flag-removed",
    "error",
    "An sglang CLI flag the consumer passes (directly, or wrapped as `--sglang-<flag>` or "
    "`args.sglang_<field>`) no longer exists.",
    "The server refuses to start: unrecognized arguments.",
    "python -m sglang.launch_server --enable-piecewise-cuda-graph",
    "Drop it or use the flag named in the finding.",
    "safe: renamed (in scripts, configs, argv lists, and a wrapped `sglang_<dest>` read "
    "from a parser the consumer fills with sglang's own flags) to the flag sglang itself "
    "maps it to (a deprecated alias, the same field's new flag); a flag found by name and "
    "help similarity only is an unsafe fix; a field of the consumer's own is not renamed",
)

FLAG_DEPRECATED = _code(
    "DA405",
    "flag-deprecated",
    "warning",
    "An sglang CLI flag the consumer passes is deprecated in the new release.",
    "It still works for now, and may be removed next.",
    "--cuda-graph-max-bs 8",
    "Use the replacement the deprecation note names.",
    "safe: renamed where the new release keeps the flag only as an alias that stores its "
    "argument into the field of the flag the deprecation names; a replacement that takes "
    "a value (`--attn-dp-size <dp-size>`) is left to a human, and the fix says why",
)

SERVER_ARG_REDIRECTED = _code(
    "DA406",
    "server-arg-redirected",
    "warning",
    "A ServerArgs field or flag the consumer sets is kept only as a deprecated redirect: "
    "the new release maps it onto another setting (a deprecated flag's `dest`/`const`, or "
    "`__post_init__` code that sets another field from it).",
    "It still works for now, but it means what the new setting means, and may go next.",
    "ServerArgs(enable_flashinfer_allreduce_fusion=True)  # now sets "
    "flashinfer_allreduce_fusion_backend='auto'",
    "Set the field the finding names instead.",
)

FLAG_DEST_CHANGED = _code(
    "DA407",
    "flag-dest-changed",
    "error",
    "An sglang CLI flag still parses, but argparse now stores it under another dest, and "
    "the consumer reads the old one: a wrapping parser's `args.sglang_<dest>`, "
    '`getattr`/`hasattr(args, "sglang_<dest>")`, `parser.set_defaults(sglang_<dest>=...)`.',
    "The attribute read raises AttributeError, a `hasattr` guard is silently false, and a "
    "`set_defaults` entry sets a dest nobody reads (the flag keeps its own default).",
    "args.sglang_data_parallel_size  # --data-parallel-size is now an alias of --dp-size: "
    "dest dp_size",
    "Read (or set) the new dest the finding names; to support both releases, read either.",
    "safe: renamed (attribute, `getattr`/`hasattr` string, `set_defaults` keyword) where "
    "the consumer registers sglang's own flags (`ServerArgs.add_cli_args(parser)`) and "
    "declares no such name itself; otherwise left to a human",
)

ROUTE_REMOVED = _code(
    "DA501",
    "route-removed",
    "error",
    "An sglang HTTP route the consumer calls is gone from the new server (or kept only as "
    "a stub that answers with an error).",
    "The request gets 404 Not Found.",
    'requests.post(f"{url}/update_weights_from_distributed", json=...)',
    "Call the route that replaced it.",
)

ROUTE_METHOD_CHANGED = _code(
    "DA502",
    "route-method-changed",
    "error",
    "The consumer calls an sglang route with a method the new server no longer accepts.",
    "The request gets 405 Method Not Allowed.",
    'requests.get(f"{url}/flush_cache")  # now POST only',
    "Use the method the new route accepts.",
)

REQUEST_FIELD_REMOVED = _code(
    "DA503",
    "request-field-removed",
    "error",
    "A field the consumer sends to an sglang endpoint (a JSON payload key, or a keyword "
    "of an io_struct request such as GenerateReqInput) is gone from the request struct.",
    "TypeError for an io_struct keyword; a JSON key the server has no field for is "
    "silently ignored (a warning), or refused with 422 where the struct forbids unknown "
    "keys.",
    'requests.post(f"{url}/generate", json={"text": t, "stream_interval": 1})',
    "Drop the field or use its replacement.",
)

ENV_VAR_UNUSED = _code(
    "DA504",
    "env-var-unused",
    "warning",
    "An SGLANG_* environment variable the consumer sets or reads is no longer read by "
    "the new sglang (or only by a removal notice); a read of the consumer's own "
    "(`os.getenv(...)`) is info: it still gets the value.",
    "Setting it has no effect any more: the behaviour it controlled may have changed.",
    "export SGLANG_ENABLE_JIT_DEEPGEMM=0",
    "Use the variable named in the finding, else find the flag or variable that replaced it.",
    "safe: renamed (in scripts, configs, Dockerfiles and Python strings) to the variable "
    "sglang itself maps it to (a deprecated alias, a forwarding deprecation); the legacy "
    "`SGL_` -> `SGLANG_` prefix or one similar new name at the same place is an unsafe fix",
)

PARSER_REMOVED = _code(
    "DA505",
    "parser-removed",
    "error",
    "A tool-call or reasoning parser name the consumer passes is no longer registered.",
    "The server refuses to start (invalid choice) or the request fails.",
    "--tool-call-parser qwen25",
    "Use a registered parser name.",
)

META_INFO_KEY_REMOVED = _code(
    "DA506",
    "meta-info-key-removed",
    "warning",
    "A `meta_info` key the consumer reads from responses is no longer written by the new server.",
    "KeyError, or None where a value was expected.",
    'output["meta_info"]["cached_tokens"]',
    "Read the key that replaced it.",
)

REQUIREMENT_CONFLICT = _code(
    "DA507",
    "requirement-conflict",
    "error",
    "The consumer pins a package to a version the new sglang wheel does not accept.",
    "pip cannot install both, or the environment runs with an untested combination.",
    "torch==2.9.1  # sglang 0.5.23 requires torch==2.14.1",
    "Move the pin to what the new sglang requires.",
    origin="consumer",
)

REQUIREMENT_CHANGED = _code(
    "DA508",
    "requirement-changed",
    "info",
    "The new sglang wheel requires a different version of a dependency (Requires-Dist).",
    "Installing the new sglang moves that package; code built against the old one may "
    "break (kernels, torch, transformers).",
    "flashinfer-python ==0.7.1 -> ==0.7.2",
    "Check your own pins and the packages you build against.",
)

SURFACE_ADDED = _code(
    "DA509",
    "surface-added",
    "info",
    "The new release adds an HTTP route, a request-struct field or an SGLANG_* environment "
    "variable: a changelog entry of `driftaudit diff`.",
    "Nothing breaks; a new field or variable may be what a consumer now has to send or set "
    "to keep the behaviour it wants.",
    "GenerateReqInput.routed_dp_rank (a new request field)",
    "Read what it does; send or set it where your code needs it.",
)

PATCH_HUNK_FAILS = _code(
    "DA601",
    "patch-hunk-fails",
    "error",
    "A hunk of a consumer's patch against sglang (`*.patch`, `*.diff`) applied to the old "
    "release but does not apply to the new one (its context changed, or the change is "
    "already there).",
    "`git apply` (or `patch`) fails, so the build that patches sglang stops; `--reject` "
    "leaves the file half patched.",
    "patches/sglang/v0.5.14/spec-capture.patch: @@ -361,6 +364,30 @@ class LogitsProcessor",
    "Regenerate the hunk against the new release (drop it when it is already applied).",
    origin="consumer",
)

PATCH_FILE_MISSING = _code(
    "DA602",
    "patch-file-missing",
    "error",
    "A consumer's patch against sglang changes a file the new release no longer has.",
    "`git apply` fails with `No such file or directory`: the code it patched moved or is gone.",
    "+++ b/python/sglang/srt/managers/scheduler_dp_attn_mixin.py",
    "Port the patch to the module that replaced the file, or drop it.",
    origin="consumer",
)

SOURCE_ANCHOR_MISSING = _code(
    "DA603",
    "source-anchor-missing",
    "error",
    "A runtime patch looks for a string in `inspect.getsource(<sglang function>)` (to "
    "`.replace` it and `exec` the result, or to assert it is there) that the new source "
    "of that function no longer contains.",
    "`.replace` silently changes nothing, so the patch is not applied; an `in` check fails.",
    'src = inspect.getsource(Scheduler.run_batch).replace("self.tp_worker.forward(", ...)',
    "Find the new place in the function's source and re-anchor the patch.",
    origin="consumer",
)

SOURCE_ANCHOR_AMBIGUOUS = _code(
    "DA604",
    "source-anchor-ambiguous",
    "warning",
    "An anchor a runtime patch replaces in `inspect.getsource(<sglang function>)` occurred "
    "once in the old source and several times in the new one.",
    "`.replace` rewrites every occurrence: the patch changes places it was not written for.",
    'src.replace("return output", "return hook(output)")  # now two returns match',
    "Anchor on a longer, unique string (or pass `count=1` if the first one is the right one).",
    origin="consumer",
)

COPIED_CODE_DRIFTED = _code(
    "DA701",
    "copied-code-drifted",
    "warning",
    "A consumer function is a (near-)copy of an sglang function whose code changed in "
    "the new release: the finding gives the similarity score and the upstream diff to port.",
    "The copy keeps the old behaviour (or calls what the old code called) while the rest "
    "of sglang moved on: it may now break, or silently do what sglang no longer does.",
    "def my_logits_forward(self, input_ids, hidden_states, ...):  # copy of "
    "LogitsProcessor.forward",
    "Port the upstream change (the unified diff in `details`) to the copy, or stop "
    "copying: call or subclass the sglang function.",
)

REACH_LOST = _code(
    "DA702",
    "reach-lost",
    "warning",
    "An sglang callable the consumer calls or constructs no longer reaches a significant "
    "function it reached in the old release (within a few calls); the finding says where "
    "the new release calls it from instead.",
    "The call still succeeds, but part of what it did moved elsewhere (typically to a "
    "caller the consumer bypasses): state it set up is missing later. Reported only where "
    "the consumer reads an attribute the lost code set, on an object of the class that owns "
    "it (an internal path behind an entry called as sglang calls it is sglang's). Not "
    "reported where "
    "the old path ran under a branch the consumer never takes (a test of an attribute it "
    "sets on the object, or of an argument it passes, against literals none of its values "
    "meets), nor where the new code still makes the call on a receiver of unknown type.",
    "ModelRunner(...)  # 0.5.14: initialize() no longer reaches init_memory_pool; "
    "TpModelWorker.alloc_memory_pool calls it",
    "Call what the new callers call (in the same order) after this call.",
)

BYPASSED_INIT_ATTRIBUTE_MISSING = _code(
    "DA703",
    "bypassed-init-attribute-missing",
    "error",
    "The consumer builds an sglang object without its `__init__` (`Cls.__new__(Cls)`, "
    "`object.__new__(Cls)`) and sets its attributes by hand, or hands sglang code a "
    "stand-in (a `SimpleNamespace`, a hand-written class, a `Mock(spec=...)`) where it "
    "expects one of its classes: a function's or constructor's argument, `self` of a method "
    "called on its class, or an attribute of such an object; the new sglang code run on "
    "that object reads an attribute (through the methods it calls on `self`, or one call "
    "deep in a helper it passes the parameter to) that the old code did not read and the "
    "consumer does not set. A mock without a spec answers every read: no finding.",
    "AttributeError when the method (or the sglang function the object is handed to) runs.",
    "req = Req.__new__(Req); req.rid = 'x'; req.finished()  # finished() now reads self.status",
    "Set the attribute as the new `__init__` does (the finding names its line), or build the "
    "object with its constructor (give the namespace the attribute).",
)

ARGUMENT_TYPE_CHANGED = _code(
    "DA704",
    "argument-type-changed",
    "error",
    "A call passes a value of a type the old parameter annotation accepted and the new one no "
    "longer does (a list where an `array` is expected, a string where an enum is).",
    "The call still runs, then fails or misbehaves where sglang uses the value as the new type "
    "(`list + array` raises TypeError). Info only when the new function (and its class, "
    "for what it stores) needs nothing of the value its old type lacks: no member the old "
    "type has not, no `isinstance` test, no operator in the function itself.",
    "Req(..., origin_input_ids=ids.tolist())  # List[int] became array[int]",
    "Convert the value to the new type (the finding quotes both annotations).",
)

ATTRIBUTE_TYPE_CHANGED = _code(
    "DA705",
    "attribute-type-changed",
    "error",
    "The consumer assigns a value to an attribute of an sglang object whose declared or "
    "inferred type changed so that the value no longer fits, or calls a method on it that "
    "the new type lacks (`.extend` on a list that became an OrderedDict).",
    "sglang reads the attribute as the new type: TypeError or wrong results later on.",
    "req.origin_input_ids = [1, 2]  # now an array('q')",
    "Assign a value of the new type.",
)

PACK_CHANGE = _code(
    "DA901",
    "pack-change",
    "error",
    "A pack entry with a codemod: a semantic change the pack knows how to rewrite.",
    "The code alone does not show it (a field replaced by two, a removed step).",
    "req.fill_ids = ids  # 0.5.13: full_untruncated_fill_ids + fill_len",
    "`driftaudit fix` applies the entry's codemod where the receiver's type is certain.",
    "unsafe: a semantic rewrite written by the pack's authors; review the diff",
    origin="pack",
)

PACK_ADVISORY = _code(
    "DA902",
    "pack-advisory",
    "warning",
    "A pack advisory: a behavioural change that affects code like this.",
    "The code still runs but does something else (a default, an allocation moved).",
    "ModelRunner(...)  # 0.5.13: initialize() no longer allocates the memory pool",
    "Do what the message says; the evidence names the sglang change.",
    origin="pack",
)


def lookup(code: str) -> Code | None:
    return CODES.get(code.upper())


def selectors(values: list[str], where: str) -> list[str]:
    """Codes or prefixes as ruff reads them (`DA1,DA203`, repeated or comma-separated),
    upper-cased; one that names no code is a one-line error that says `where`."""
    found = []
    for value in values:
        for part in value.split(","):
            prefix = part.strip().upper()
            if not prefix:
                continue
            if not any(code.startswith(prefix) for code in CODES):
                known = "`driftaudit rule` lists them"
                raise DriftauditError(f"{where}: unknown code or prefix {part.strip()!r}; {known}")
            found.append(prefix)
    return found


def selected(code: str, select: list[str] | None, ignore: list[str] | None) -> bool:
    """Is `code` on? As ruff: no `select` selects every code; the most specific prefix
    that matches wins (`select DA2` + `ignore DA201`: DA201 off; `select DA201` +
    `ignore DA2`: DA201 on), an ignore on a tie."""
    chosen = max((len(s) for s in select or () if code.startswith(s)), default=-1)
    if select and chosen < 0:
        return False
    dropped = max((len(i) for i in ignore or () if code.startswith(i)), default=-1)
    return dropped < 0 or chosen > dropped


def variant(code: Code, use: str | None) -> Code:
    """The code a drift code becomes when the consumer uses the name that way (`use`:
    "patch", "override"), per the variants' `variant_of`; else the code itself."""
    for candidate in CODES.values():
        if use and candidate.use == use and code.code in candidate.variant_of:
            return candidate
    return code


def explain(code: Code) -> str:
    text = (
        f"{code.code} ({code.kind}) — severity {code.severity}\n\n"
        f"What it flags\n  {code.summary}\n\n"
        f"Why it breaks\n  {code.why}\n\n"
        f"Example\n  {code.example}\n\n"
        f"Fix\n  {code.fix}\n\n"
        f"Fix safety\n  {code.fix_safety}\n"
    )
    if code.variant_of:
        uses = {"patch": "assigns or patches the name", "override": "overrides the method"}
        text += (
            f"\nReported instead of {', '.join(code.variant_of)} where the consumer "
            f"{uses[code.use]}.\n"
        )
    return text
