"""BL504: a 1B+ checkpoint loaded without a dtype: the float32 copy in host memory kills the process."""

from __future__ import annotations

from bertlint.facts import trained_model, uses_peft
from bertlint.rules import Context, Rule

BILLION = 1_000_000_000
_KEEPS_MEMORY_DOWN = ("torch_dtype", "dtype", "device_map", "quantization_config", "load_in_8bit", "load_in_4bit")


class LargeModelLoadedInFp32(Rule):
    code = "BL504"
    name = "large-model-loaded-in-fp32"
    severity = "info"
    summary = "A checkpoint of 1B+ parameters loaded in float32: no dtype, `device_map` or quantization"
    help = "pass `dtype=torch.bfloat16` (or `device_map=\"auto\"`)"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        # `dtype=` replaced `torch_dtype=` in transformers 4.56
        keyword = "dtype" if ctx.version >= (4, 56) else "torch_dtype"
        # 5.x loads once, and the float32 copy of a model the file trains is the copy its training needs (fp32 or mixed
        # precision keeps fp32 weights; BL501/BL502 speak to that run): a bfloat16 load would train it in pure bfloat16.
        # Only where the fp32 weights alone outgrow the GPU budget is the load itself the problem.
        trained = trained_model(facts) if ctx.version >= (5, 0) and facts.is_training and not uses_peft(facts) else None  # PEFT: the base is frozen, bf16 serves it
        budget = ctx.settings.gpu_memory_gib * 2**30
        for load in facts.model_loads:
            if trained is not None and load.call is trained[0].call and trained[1].params and trained[1].params * 4 <= budget:
                continue
            call = load.call
            if load.how != "pretrained" or load.keras or call.has_double_star or any(k in call.kwargs for k in _KEEPS_MEMORY_DOWN):
                continue
            info = facts.checkpoint_info(load)
            if info is None or not info.params or info.params < BILLION:
                continue
            if ctx.version >= (5, 0) and info.stored_dtype != "float32":
                continue  # 5.x loads the stored dtype
            size = f"{info.params / 1e9:.1f}B parameters take {info.params * 4 / 2**30:.1f} GiB"
            message = (  # 5.x builds the model empty and loads the weights once: the copy is the load's whole cost, not a double peak
                f"`{info.id}` is stored in float32 and transformers {ctx.version_text()} loads the stored dtype: {size} of host memory, "
                "and as much on the GPU, twice what a bfloat16 copy needs"
                if ctx.version >= (5, 0)
                else f"transformers {ctx.version_text()} loads `{info.id}` in float32 unless told otherwise: {size} of host memory "
                "for the weights alone (half that in bfloat16), enough to get the process killed"
            )
            ctx.report(
                call.node,
                message,
                help=f'pass `{keyword}=torch.bfloat16` (or `device_map="auto"` to load straight onto the GPU)',
            )
