"""Process groups for a capture-only run: no scheduler, one model runner."""

import sglang.srt.distributed.parallel_state as parallel_state
from sglang.srt.distributed import init_model_parallel_group
from sglang.srt.distributed.parallel_state import GroupCoordinator
from sglang.srt.layers.dp_attention import (
    compute_dp_attention_local_info,
    compute_dp_attention_world_info,
)
from sglang.srt.utils import get_bool_env_var


def init_capture_groups(tp_size, dp_size, backend="nccl"):
    world = parallel_state.get_world_group()
    ranks = [list(range(tp_size))]
    parallel_state._TP = init_model_parallel_group(
        ranks,
        world.local_rank,
        backend,
        use_message_queue_broadcaster=get_bool_env_var("SGLANG_USE_MESSAGE_QUEUE", "true"),
        group_name="tp",
        pynccl_use_current_stream=True,
    )
    parallel_state._PP = init_model_parallel_group(
        [[r] for r in range(tp_size)], world.local_rank, backend, group_name="pp"
    )
    assert isinstance(parallel_state._TP, GroupCoordinator)
    _init_dp_attention(tp_size, dp_size)


def _init_dp_attention(tp_size, dp_size):
    import sglang.srt.layers.dp_attention as dp_attention

    tp_rank = parallel_state.get_tensor_model_parallel_rank()
    dp_attention._ENABLE_DP_ATTENTION_FLAG = dp_size > 1
    attn_tp_rank, attn_tp_size, attn_dp_rank = compute_dp_attention_world_info(
        dp_size > 1, tp_rank, tp_size, dp_size
    )
    # private module state this backend owns; sglang never had these names
    dp_attention._ATTN_TP_RANK = attn_tp_rank
    dp_attention._ATTN_TP_SIZE = attn_tp_size
    local_rank, local_size, local_dp = compute_dp_attention_local_info(
        dp_size > 1, tp_rank, tp_size, dp_size, 0
    )
    return attn_dp_rank, local_rank, local_size, local_dp
