"""Return hidden states from the logits processor: a replacement `forward`."""

from sglang.srt.layers.logits_processor import LogitsMetadata, LogitsProcessor


def capture_forward(self, input_ids, hidden_states, lm_head, logits_metadata):
    if isinstance(logits_metadata, LogitsMetadata) and self.multi_item_delimiter is not None:
        raise NotImplementedError("multi-item scoring is not captured")
    return hidden_states


def install():
    LogitsProcessor.forward = capture_forward
