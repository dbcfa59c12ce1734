"""Build and run one extend batch without the scheduler."""

try:
    from sglang.srt.managers.schedule_batch import Req, ScheduleBatch
    from sglang.srt.managers.scheduler_dp_attn_mixin import prepare_mlp_sync_batch_raw
    from sglang.srt.model_executor.forward_batch_info import CaptureHiddenMode, ForwardBatch
    from sglang.srt.sampling.sampling_params import SamplingParams
except ImportError:  # sglang is optional for the offline paths
    Req = ScheduleBatch = prepare_mlp_sync_batch_raw = None

from .parallel import init_capture_groups


def make_requests(prompts):
    params = SamplingParams(max_new_tokens=0)
    reqs = []
    for index, ids in enumerate(prompts):
        req = Req(
            rid=str(index), origin_input_text="", origin_input_ids=ids, sampling_params=params
        )
        reqs.append(req)
    return reqs


def fill(reqs):
    for req in reqs:
        req.fill_ids = req.origin_input_ids
        req.extend_input_len = len(req.fill_ids) - len(req.prefix_indices)


def build_batch(reqs, model_runner, tree_cache):
    batch = ScheduleBatch.init_new(
        reqs=reqs,
        req_to_token_pool=model_runner.req_to_token_pool,
        token_to_kv_pool_allocator=model_runner.token_to_kv_pool_allocator,
        tree_cache=tree_cache,
        model_config=model_runner.model_config,
        enable_overlap=False,
        spec_algorithm=None,
    )
    batch.prepare_for_extend()
    return batch.get_model_worker_batch()


def run_extend(model_runner, batch, server_args):
    prepare_mlp_sync_batch_raw(
        batch,
        dp_size=server_args.dp_size,
        attn_tp_size=1,
        tp_group=model_runner.tp_group,
        get_idle_batch=None,
        disable_cuda_graph=True,
        require_mlp_tp_gather=False,
        disable_overlap_schedule=True,
        offload_tags=set(),
    )
    forward_batch = ForwardBatch.init_new(batch, model_runner)
    forward_batch.capture_hidden_mode = CaptureHiddenMode.FULL
    return model_runner.forward(forward_batch)


__all__ = ["build_batch", "fill", "init_capture_groups", "make_requests", "run_extend"]
