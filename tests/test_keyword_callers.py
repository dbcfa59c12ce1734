"""Where a release's own code passes a new keyword to an overridden method
(`match/overrides.py::KeywordCallers`): a call of that method, not any call that happens
to pass a keyword of the same name."""

from __future__ import annotations

from types import SimpleNamespace

from driftaudit.match.overrides import KeywordCallers

_SOURCES = {
    "sglang/srt/engine.py": (
        "def serve(engine, msg):\n"
        "    register(msg, session_id=msg.id)\n"  # another function's keyword
        "    return engine.generate(\n"
        "        msg.prompt,\n"
        "        priority=1,\n"
        "    )\n"
    ),
    "sglang/srt/model.py": (
        "class Model:\n"
        "    def run(self, x, before):\n"
        "        return self.logits_processor(x, before_norm=before)\n"  # forward, through __call__
    ),
}


def _callers(tmp_path) -> KeywordCallers:
    for relpath, text in _SOURCES.items():
        path = tmp_path / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    files = {relpath[:-3].replace("/", "."): relpath for relpath in _SOURCES}
    return KeywordCallers(SimpleNamespace(tree=SimpleNamespace(root=tmp_path), files=files))


def test_a_keyword_counts_only_on_calls_of_the_method(tmp_path):
    callers = _callers(tmp_path)
    assert callers.first("session_id", "generate") is None
    assert callers.first("priority", "generate") == "sglang/srt/engine.py:3"
    assert callers.first("session_id", "register") == "sglang/srt/engine.py:2"


def test_forward_is_called_through_its_instance(tmp_path):
    assert _callers(tmp_path).first("before_norm", "forward") == "sglang/srt/model.py:3"
