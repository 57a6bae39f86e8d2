"""Per-GPU memory of a layout whose pipeline stages hold different numbers of layers.

core.memory sizes every stage at L / PP layers. For an uneven split this module asks it for a
uniform proxy of the same model with k = max(layers per stage) layers on every stage, then moves
each stage to its own count n_r: (k − n_r) layers' parameters fewer (their model states at the
layout's ZeRO stage) and n_r / k of the proxy's layer activations in flight; the embedding,
LM head, logits and any per-layer buffers are the proxy's, which do not depend on the count.
"""

from __future__ import annotations

from dataclasses import replace

from core.memory import MemoryResult, memory_per_gpu, model_state_bytes_per_gpu
from core.model import ModelSpec
from core.parallel import Layout
from core.training import Training


def layout_memory(model: ModelSpec, lay: Layout, training: Training) -> MemoryResult:
    """core.memory.memory_per_gpu, for even and uneven stage splits alike."""
    if lay.layers_per_stage is None:
        return memory_per_gpu(model, lay, training)
    split = lay.stage_layers(model.num_layers)
    v = lay.num_chunks
    k = -(-max(split) // v) * v  # the proxy's layers per stage: a multiple of v, ≥ every stage's
    proxy = memory_per_gpu(
        replace(model, num_layers=k * lay.pp), replace(lay, layers_per_stage=None), training
    )
    per_layer = model.layer_params_per_gpu(lay.tp)
    stages = []
    for st, n in zip(proxy.stages, split):
        psi = st.params_on_gpu - (k - n) * per_layer
        states = model_state_bytes_per_gpu(
            psi, lay.shard_degree or lay.dp, lay.zero_stage, training.recipe
        )
        flight = st.layers_in_flight * n / k
        stages.append(
            replace(
                st,
                params_on_gpu=psi,
                parameters_bytes=states.parameters_bytes,
                gradients_bytes=states.gradients_bytes,
                optimizer_bytes=states.optimizer_bytes,
                activations_bytes=st.activations_bytes
                - (st.layers_in_flight - flight) * st.layer_activation_bytes,
                layers_in_flight=flight,
            )
        )
    worst = max(stages, key=lambda s: (s.total_bytes, -s.stage))
    return replace(proxy, **vars(worst), stages=tuple(stages), layout=lay)
