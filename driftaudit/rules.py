"""The registry of rule codes: one stable code per breakage kind, documented like ruff.

DA0xx consumer input · DA1xx imports and modules · DA2xx call signatures ·
DA3xx classes, attributes, enums, return shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Rule:
    code: str
    kind: str  # the JSON `kind`, e.g. import-moved
    severity: str
    summary: str
    why: str
    example: str
    fix: str
    fix_safety: str = "no automatic fix"


RULES: dict[str, Rule] = {}


def _rule(*args, **kwargs) -> Rule:
    rule = Rule(*args, **kwargs)
    RULES[rule.code] = rule
    return rule


PARSE_ERROR = _rule(
    "DA001",
    "parse-error",
    "warning",
    "A consumer file does not parse, so its use of sglang could not be audited.",
    "The file may hide breakages: nothing in it was checked.",
    "def f(:  # a syntax error",
    "Fix the syntax error (or exclude the file), then run again.",
)
UNUSED_SUPPRESSION = _rule(
    "DA002",
    "unused-suppression",
    "info",
    "A `# driftaudit: ignore[...]` comment silences nothing: no finding (or no finding "
    "with the listed code) is on its line.",
    "A stale suppression hides nothing today but will hide the next real finding there.",
    "x = 1  # driftaudit: ignore[DA102]",
    "Remove the comment, or the codes in it that no longer apply.",
)
STALE_BASELINE_ENTRY = _rule(
    "DA003",
    "stale-baseline-entry",
    "info",
    "A baseline entry matches no finding any more: the code it accepted was fixed or removed.",
    "Nothing breaks; the baseline only grows stale and could accept a new finding like it.",
    "an entry for calls.py DA201 after the call was fixed",
    "Run `driftaudit check --update-baseline` to rewrite the baseline.",
)
MODULE_REMOVED = _rule(
    "DA101",
    "module-removed",
    "error",
    "An imported sglang module no longer exists in the new release.",
    "`import` raises ModuleNotFoundError when the module is loaded.",
    "import sglang.srt.managers.scheduler_dp_attn_mixin as m",
    "Import the names you need from their new modules (see DA102 findings).",
)
IMPORT_MOVED = _rule(
    "DA102",
    "import-moved",
    "error",
    "An sglang name is gone from the module it was imported from but is defined, "
    "with a compatible signature, in another module.",
    "`from old.module import name` raises ImportError.",
    "from sglang.srt.managers.scheduler_dp_attn_mixin import prepare_mlp_sync_batch_raw",
    "Import it from the module named in the finding.",
    "safe: same name, compatible signature",
)
SYMBOL_REMOVED = _rule(
    "DA103",
    "symbol-removed",
    "error",
    "A name the consumer imports or reads from an sglang module no longer exists.",
    "ImportError at import time, or AttributeError where it is read.",
    "from sglang.srt.layers.sampler import SYNC_TOKEN_IDS_ACROSS_TP",
    "Find its replacement in the new release; the finding names the old definition.",
)
PATCH_TARGET_REMOVED = _rule(
    "DA104",
    "patch-target-removed",
    "error",
    "The consumer assigns or patches an sglang attribute that no longer exists "
    '(`mod.x = ...`, `Cls.meth = fn`, `setattr`, `mock.patch("sglang...")`, '
    "`monkeypatch.setattr`).",
    "A plain assignment still runs but has no effect: sglang no longer reads that name. "
    "`mock.patch` and `monkeypatch.setattr` raise AttributeError.",
    "LogitsProcessor._get_logits = my_get_logits",
    "Patch what the new release calls instead.",
)
KEYWORD_REMOVED = _rule(
    "DA201",
    "keyword-removed",
    "error",
    "A call passes a keyword argument the new signature no longer accepts.",
    "TypeError: unexpected keyword argument.",
    "init_model_parallel_group(..., pynccl_use_current_stream=False)",
    "Drop the argument (check the new signature for a replacement).",
    "safe when the parameter was removed, not renamed",
)
KEYWORD_RENAMED = _rule(
    "DA202",
    "keyword-renamed",
    "error",
    "A call passes a keyword whose parameter was renamed (same position, new name).",
    "TypeError: unexpected keyword argument.",
    "f(old_name=1)  # now def f(new_name)",
    "Rename the keyword to the new parameter name.",
    "safe: same position and kind",
)
REQUIRED_PARAMETER_ADDED = _rule(
    "DA203",
    "required-parameter-added",
    "error",
    "The new signature has a required parameter the call does not pass.",
    "TypeError: missing required argument.",
    "f(a)  # now def f(a, b)",
    "Pass a value for the new parameter.",
)
POSITIONAL_MISMATCH = _rule(
    "DA204",
    "positional-mismatch",
    "error",
    "A positional argument now binds to another parameter, or the call passes more "
    "positional arguments than the new signature takes.",
    "TypeError, or worse: the value silently lands in the wrong parameter.",
    "f(1, 2)  # was def f(a, b), now def f(b, a) or def f(a, *, b)",
    "Pass the arguments by keyword.",
)
DEFAULT_CHANGED = _rule(
    "DA205",
    "default-changed",
    "warning",
    "A parameter the call leaves out has a new default value.",
    "The call still works but may behave differently.",
    "f()  # def f(x=1) became def f(x=2)",
    "Pass the old default explicitly if you depend on it.",
)
SERVER_ARG_REMOVED = _rule(
    "DA401",
    "server-arg-removed",
    "error",
    "A ServerArgs field the consumer sets or reads was removed (keyword, attribute, "
    "a keyword dict splatted into ServerArgs(**kwargs), or a wrapped `sglang_<field>`).",
    "TypeError for ServerArgs(field=...), AttributeError for server_args.field.",
    "ServerArgs(enable_piecewise_cuda_graph=True)",
    "Drop it, or set the field that replaced it (the finding names it when a flag moved).",
)
SERVER_ARG_TYPE_CHANGED = _rule(
    "DA402",
    "server-arg-type-changed",
    "warning",
    "A ServerArgs field the consumer uses changed type (e.g. bool -> Optional[bool]).",
    "Values that were valid may now mean something else (None: resolve automatically).",
    "ServerArgs(enable_decoder_swa_bounded_replay=...)",
    "Check the values you pass and the new meaning of None.",
)
SERVER_ARG_DEFAULT_CHANGED = _rule(
    "DA403",
    "server-arg-default-changed",
    "warning",
    "A ServerArgs field the consumer uses changed its default.",
    "Where the consumer leaves it unset, results may change silently.",
    "ServerArgs(model_path=...)  # enable_decoder_swa_bounded_replay: False -> None",
    "Set the old default explicitly if you depend on it.",
)
FLAG_REMOVED = _rule(
    "DA404",
    "flag-removed",
    "error",
    "An sglang CLI flag the consumer passes (directly, or wrapped as `--sglang-<flag>` or "
    "`args.sglang_<field>`) no longer exists.",
    "The server refuses to start: unrecognized arguments.",
    "python -m sglang.launch_server --enable-piecewise-cuda-graph",
    "Drop it or use the flag named in the finding.",
)
FLAG_DEPRECATED = _rule(
    "DA405",
    "flag-deprecated",
    "warning",
    "An sglang CLI flag the consumer passes is deprecated in the new release.",
    "It still works for now, and may be removed next.",
    "--cuda-graph-max-bs 8",
    "Use the replacement the deprecation note names.",
)
ROUTE_REMOVED = _rule(
    "DA501",
    "route-removed",
    "error",
    "An sglang HTTP route the consumer calls is gone from the new server.",
    "The request gets 404 Not Found.",
    'requests.post(f"{url}/update_weights_from_distributed", json=...)',
    "Call the route that replaced it.",
)
ROUTE_METHOD_CHANGED = _rule(
    "DA502",
    "route-method-changed",
    "error",
    "The consumer calls an sglang route with a method the new server no longer accepts.",
    "The request gets 405 Method Not Allowed.",
    'requests.get(f"{url}/flush_cache")  # now POST only',
    "Use the method the new route accepts.",
)
REQUEST_FIELD_REMOVED = _rule(
    "DA503",
    "request-field-removed",
    "error",
    "A field the consumer sends to an sglang endpoint (a JSON payload key, or a keyword "
    "of an io_struct request such as GenerateReqInput) is gone from the request struct.",
    "422 / TypeError, or the value is silently ignored.",
    'requests.post(f"{url}/generate", json={"text": t, "stream_interval": 1})',
    "Drop the field or use its replacement.",
)
ENV_VAR_UNUSED = _rule(
    "DA504",
    "env-var-unused",
    "warning",
    "An SGLANG_* environment variable the consumer sets or reads is no longer read by "
    "the new sglang.",
    "Setting it has no effect any more: the behaviour it controlled may have changed.",
    "export SGLANG_ENABLE_JIT_DEEPGEMM=0",
    "Find the flag or variable that replaced it.",
)
PARSER_REMOVED = _rule(
    "DA505",
    "parser-removed",
    "error",
    "A tool-call or reasoning parser name the consumer passes is no longer registered.",
    "The server refuses to start (invalid choice) or the request fails.",
    "--tool-call-parser qwen25",
    "Use a registered parser name.",
)
META_INFO_KEY_REMOVED = _rule(
    "DA506",
    "meta-info-key-removed",
    "warning",
    "A `meta_info` key the consumer reads from responses is no longer written by the new server.",
    "KeyError, or None where a value was expected.",
    'output["meta_info"]["cached_tokens"]',
    "Read the key that replaced it.",
)
REQUIREMENT_CONFLICT = _rule(
    "DA507",
    "requirement-conflict",
    "error",
    "The consumer pins a package to a version the new sglang wheel does not accept.",
    "pip cannot install both, or the environment runs with an untested combination.",
    "torch==2.9.1  # sglang 0.5.23 requires torch==2.14.1",
    "Move the pin to what the new sglang requires.",
)
REQUIREMENT_CHANGED = _rule(
    "DA508",
    "requirement-changed",
    "info",
    "The new sglang wheel requires a different version of a dependency (Requires-Dist).",
    "Installing the new sglang moves that package; code built against the old one may "
    "break (kernels, torch, transformers).",
    "flashinfer-python ==0.7.1 -> ==0.7.2",
    "Check your own pins and the packages you build against.",
)
MEMBER_REMOVED = _rule(
    "DA301",
    "member-removed",
    "error",
    "A class member (method or attribute) the consumer uses was removed.",
    "AttributeError where it is used.",
    "Scheduler.prepare_mlp_sync_batch_raw(...)",
    "Use the replacement named in the finding, if any.",
)
ENUM_MEMBER_REMOVED = _rule(
    "DA302",
    "enum-member-removed",
    "error",
    "An enum member the consumer uses was removed.",
    "AttributeError where it is used.",
    "ForwardMode.DUMMY_FIRST",
    "Use the member that replaced it.",
)
DEAD_OVERRIDE = _rule(
    "DA304",
    "dead-override",
    "error",
    "A consumer subclass overrides a method that the sglang base class no longer has.",
    "Nothing calls the override any more: the behaviour it added silently stops.",
    "class MyRunner(ModelRunner):\n      def init_cuda_graphs(self): ...  # gone from ModelRunner",
    "Override the method that replaced it (the finding names candidates).",
)
OVERRIDE_SIGNATURE_CHANGED = _rule(
    "DA305",
    "override-signature-changed",
    "error",
    "A consumer subclass overrides a method whose signature changed in the sglang base.",
    "sglang now calls the override with other arguments: TypeError or wrong values.",
    "def forward(self, input_ids, positions, forward_batch): ...  # base gained `pp_proxy`",
    "Update the override's parameters to the new base signature.",
)
PACK_CHANGE = _rule(
    "DA901",
    "pack-change",
    "error",
    "A rule-pack entry with a codemod: a semantic change the pack knows how to rewrite.",
    "The code alone does not show it (a field replaced by two, a removed step).",
    "req.fill_ids = ids  # 0.5.13: full_untruncated_fill_ids + fill_len",
    "`driftaudit fix` applies the entry's codemod where the receiver's type is certain.",
    "as reviewed in the rule pack",
)
PACK_ADVISORY = _rule(
    "DA902",
    "pack-advisory",
    "warning",
    "A rule-pack advisory: a behavioural change that affects code like this.",
    "The code still runs but does something else (a default, an allocation moved).",
    "ModelRunner(...)  # 0.5.13: initialize() no longer allocates the memory pool",
    "Do what the message says; the evidence names the sglang change.",
)
RETURN_ARITY_CHANGED = _rule(
    "DA303",
    "return-arity-changed",
    "error",
    "A call result is unpacked into N names but the function now returns another number of values.",
    "ValueError: too many (or not enough) values to unpack.",
    "a, b, c = compute_dp_attention_world_info(...)  # now returns 4 values",
    "Unpack the new number of values (the finding shows the new return statement).",
    "safe when the new return statement shows the order",
)


def get_rule(code: str) -> Rule | None:
    return RULES.get(code.upper())


def explain(rule: Rule) -> str:
    return (
        f"{rule.code} ({rule.kind}) — severity {rule.severity}\n\n"
        f"What it flags\n  {rule.summary}\n\n"
        f"Why it breaks\n  {rule.why}\n\n"
        f"Example\n  {rule.example}\n\n"
        f"Fix\n  {rule.fix}\n\n"
        f"Fix safety\n  {rule.fix_safety}\n"
    )
