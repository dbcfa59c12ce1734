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
