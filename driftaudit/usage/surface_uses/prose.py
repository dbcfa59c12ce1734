"""Prose that names a flag without passing it: log and print messages, exception and
assert messages, advice sentences (`"Use --sglang-enforce-piecewise-cuda-graph to
override."`). Docstrings and `help=` texts are skipped by the scan itself."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

# logger.info / logging.warning / warnings.warn / print / click.echo / parser.error ...
_MESSAGE_CALLS = {
    "print", "debug", "info", "warning", "warn", "error", "exception", "critical", "fatal",
    "log", "echo", "secho", "print_rank_0", "print_rank0",
}  # fmt: skip
_EXCEPTION = re.compile(r"(?:Error|Exception|Warning|Exit|Interrupt)$")
_WORD = re.compile(r"[A-Za-z][a-z]+[,.:;!?)]*")
# words a sentence has and a command line does not
_FUNCTION_WORDS = {
    "the", "a", "an", "to", "is", "are", "with", "for", "if", "use", "of", "in", "may",
    "not", "this", "will", "be", "can", "should", "instead", "when", "whether", "or",
}  # fmt: skip


def is_message_call(call: ast.Call) -> bool:
    """A call whose string arguments are read by people, not parsed as a command line."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in _MESSAGE_CALLS or bool(_EXCEPTION.search(name or ""))


def message_strings(node: ast.AST) -> Iterator[ast.expr]:
    """The string expressions of a message call's arguments (or an assert's message)."""
    parts = (
        [*node.args, *(k.value for k in node.keywords)] if isinstance(node, ast.Call) else [node]
    )
    stack = list(parts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        ):
            yield node  # an f-string whole: its parts are not strings of their own
        else:
            stack.extend(ast.iter_child_nodes(node))


def reads_as_prose(text: str) -> bool:
    """A sentence naming a flag: the flag quoted in backticks, or two words or more that
    are no flag's value, and a function word ("to", "the", "use", ...) anywhere."""
    if re.search(r"`-{1,2}[A-Za-z][\w-]*", text):
        return True
    words, function_word, after_flag = 0, False, False
    for token in text.split():
        if token.startswith("-"):
            after_flag = True
            continue
        if _WORD.fullmatch(token):
            words += not after_flag
            function_word |= token.rstrip(",.:;!?)").lower() in _FUNCTION_WORDS
        after_flag = False
    return words >= 2 and function_word
