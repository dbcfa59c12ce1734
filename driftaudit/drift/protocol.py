"""An attribute protocol on an sglang-owned object that changed between releases."""

from __future__ import annotations

from dataclasses import dataclass

from driftaudit import codes
from driftaudit.drift.changes import Change


@dataclass
class ProtocolAttributeDropped(Change):
    owner: str = ""  # the module global: sglang.srt.entrypoints.http_server.app
    attribute: str = ""
    replacement: str | None = None  # what the new release stores instead, when evident

    code = codes.MEMBER_REMOVED  # a store on it: DA104, its consumer-side variant

    def explain(self) -> str:
        short = self.owner.rpartition(".")[2]
        text = (
            f"sglang's own code set `{short}.{self.attribute}` on its `{short}` "
            f"(`{self.owner}`) and no longer does, so nothing of the new release reads it: "
            "the store has no effect"
        )
        return text + (f"; it sets `{short}.{self.replacement}` now" if self.replacement else "")
