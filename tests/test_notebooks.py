"""Notebooks read as Python: their code cells, magics left out, and every position of
their code mapped back to where it is stored in the `.ipynb` file."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from driftaudit.pysource import ParseProblem
from driftaudit.usage.notebooks import Notebook, read_notebook


def _document(sources: list, kinds: list[str] | None = None, **metadata) -> dict:
    kinds = kinds or ["code"] * len(sources)
    cells = [
        {"cell_type": kind, "metadata": {}, "outputs": [], "source": source}
        for kind, source in zip(kinds, sources, strict=True)
    ]
    return {"cells": cells, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}


def _read(document: dict, ascii_only: bool = True, indent: int | None = 1) -> Notebook:
    found = read_notebook(json.dumps(document, indent=indent, ensure_ascii=ascii_only))
    assert isinstance(found, Notebook)
    return found


def test_code_cells_in_order_markdown_and_raw_left_out():
    notebook = _read(
        _document(
            [["# x\n"], ["a = 1\n", "b = 2"], "text", "c = 3\n"],
            ["markdown", "code", "raw", "code"],
        )
    )
    assert notebook.code == "a = 1\nb = 2\nc = 3"
    assert notebook.cells == [(1, 2), (3, 3)]


def test_magics_are_left_out_only_where_the_cell_does_not_parse():
    notebook = _read(
        _document(
            [
                ["%matplotlib inline\n", "x = !ls\n", "if x:\n", "    %time f()\n", "obj?"],
                ["y = a % b\n", "z = (a\n", "     % b)"],  # parses: kept as it is
                ["%%bash\n", "echo from sglang import x"],
                ["%%time\n", "import sglang"],
            ]
        )
    )
    assert notebook.code.split("\n") == [
        "pass",
        "pass",
        "if x:",
        "    pass",
        "pass",
        "y = a % b",
        "z = (a",
        "     % b)",
        "",
        "",
        "",
        "import sglang",
    ]
    module, problem = notebook.parse("nb.ipynb")
    assert problem is None and len(module.body) == 7


def test_a_cell_that_does_not_parse_leaves_the_others():
    notebook = _read(_document([["import a\n"], ["def (:\n"], ["import b"]]))
    module, problem = notebook.parse("nb.ipynb")
    assert [n.lineno for n in module.body] == [1, 3]
    assert problem is not None and problem.line == 2


def test_another_kernel_language_is_not_read():
    assert read_notebook(json.dumps(_document([], kernelspec={"language": "R"}))) == (
        "a notebook in r, not Python"
    )
    assert isinstance(
        read_notebook(json.dumps(_document([], language_info={"name": "python"}))), Notebook
    )


def test_what_is_not_a_notebook_is_a_problem_never_an_exception():
    for text in ("", "{", "[]", '{"cells": {}}', '{"cells": [1]}', "[" * 100_000):
        assert isinstance(read_notebook(text), ParseProblem)
    assert _read({"cells": [{"cell_type": "code", "source": [1, 2]}]}).code == ""


_CHARS = st.characters(blacklist_categories=("Cs",))  # a lone surrogate is no UTF-8
_SOURCE = st.lists(st.text(_CHARS, max_size=12), max_size=4) | st.text(_CHARS, max_size=30)


@settings(max_examples=300, deadline=None)
@given(
    sources=st.lists(_SOURCE, max_size=4),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 1, 2]),
)
def test_every_character_of_the_code_is_placed_where_the_file_stores_it(
    sources, ascii_only, indent
):
    document = _document(sources)
    text = json.dumps(document, indent=indent, ensure_ascii=ascii_only)
    notebook = read_notebook(text)
    assert isinstance(notebook, Notebook)
    file_lines = text.split("\n")
    originals = []
    for source in sources:
        joined = "".join(source) if isinstance(source, list) else source
        cell = joined.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if len(cell) > 1 and cell[-1] == "":
            cell.pop()
        originals += cell
    code_lines = notebook.code.split("\n") if sources else []
    assert len(code_lines) == len(originals)
    for number, (line, original) in enumerate(zip(code_lines, originals, strict=True), 1):
        if line != original:
            continue  # a magic, read as `pass`
        for column, char in enumerate(line, 1):
            at_line, at_column = notebook.place(number, column)
            stored = file_lines[at_line - 1][at_column - 1 :]
            assert stored.startswith(json.dumps(char, ensure_ascii=ascii_only)[1:-1])
        end = notebook.place(number, len(line) + 1)  # an exclusive end: never an error
        assert 1 <= end[0] <= len(file_lines)
