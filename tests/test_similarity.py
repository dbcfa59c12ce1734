"""Normalised AST similarity: what counts as the same code, and how copies score."""

from __future__ import annotations

import ast
import textwrap

from driftaudit.similarity import compare, function_tokens, functions, name_bag

ORIGINAL = '''
def forward(self, input_ids, hidden_states, metadata):
    """Docstring of the original."""
    if not isinstance(metadata, Metadata):
        metadata = Metadata.from_batch(metadata)
    # the last token of each sequence
    last = torch.cumsum(metadata.seq_lens, dim=0) - 1
    pruned = hidden_states[last]
    logits = torch.matmul(pruned, self.head.weight.T)
    if self.config.softcap:
        logits = torch.tanh(logits / self.config.softcap) * self.config.softcap
    return logits
'''

RENAMED = '''
def my_forward(this, ids, states, meta):
    """Another docstring entirely."""
    if not isinstance(meta, Metadata):
        meta = Metadata.from_batch(meta)
    idx = torch.cumsum(meta.seq_lens, dim=0) - 1  # reworded comment
    kept = states[idx]
    out = torch.matmul(kept, this.head.weight.T)
    if this.config.softcap:
        out = torch.tanh(out / this.config.softcap) * this.config.softcap
    return out
'''


def tokens(source: str):
    fn = ast.parse(textwrap.dedent(source)).body[0]
    return function_tokens(fn)


def test_renamed_locals_comments_and_docstrings_do_not_count() -> None:
    assert tokens(ORIGINAL)[0] == tokens(RENAMED)[0]


def test_a_changed_attribute_or_call_counts() -> None:
    changed = ORIGINAL.replace("metadata.seq_lens", "metadata.extend_seq_lens")
    assert tokens(changed)[0] != tokens(ORIGINAL)[0]


def test_globals_attributes_and_keywords_are_kept_locals_are_not() -> None:
    bag = name_bag(tokens(ORIGINAL)[0])
    assert {"Metadata", "torch", ".cumsum", ".softcap", "dim="} <= bag
    assert not bag & {"metadata", "logits", "pruned", "self", "v", "Call", "Attribute"}


def test_a_copy_scores_one_and_an_unrelated_function_low() -> None:
    original, lines = tokens(ORIGINAL)
    same = compare(tokens(RENAMED)[0], original, lines)
    assert same.ratio == 1.0 and same.containment == 1.0
    unrelated = tokens("def f(a, b):\n    return sorted(a, key=b)[0] + len(a) * 2\n")[0]
    assert compare(unrelated, original, lines).ratio < 0.3


def test_a_partial_copy_reports_the_lines_it_copied() -> None:
    original, lines = tokens(ORIGINAL)
    head = """
    def head_only(self, input_ids, hidden_states, metadata):
        if not isinstance(metadata, Metadata):
            metadata = Metadata.from_batch(metadata)
        last = torch.cumsum(metadata.seq_lens, dim=0) - 1
        return something_else(hidden_states, last, self.capture_layers)
    """
    found = compare(tokens(head)[0], original, lines)
    assert 0.2 < found.containment < 0.8
    assert {4, 5, 7} <= found.copied_lines  # the isinstance check and the cumsum
    assert 11 not in found.copied_lines  # the softcap line was not copied


def test_bounds_skip_the_alignment() -> None:
    original, lines = tokens(ORIGINAL)
    short = tokens("def f(x):\n    return x.seq_lens\n")[0]
    assert compare(short, original, lines, min_ratio=0.7, min_containment=0.5) is None


def test_functions_are_named_by_qualified_name() -> None:
    tree = ast.parse(
        "class A:\n    def m(self):\n        def inner():\n            pass\ndef top():\n    pass\n"
    )
    assert [name for name, _ in functions(tree)] == ["A.m", "A.m.inner", "top"]
