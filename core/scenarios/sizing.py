"""Sizing scenarios: a 70B run's memory (1) and DDP vs FSDP FULL_SHARD (5)."""

from __future__ import annotations

from dataclasses import dataclass

from core.hardware import GPU_PRESETS
from core.memory import (
    Budget,
    MemoryResult,
    ZeroComm,
    budget,
    layer_allgather_bytes,
    model_state_bytes_per_gpu,
    zero_comm_bytes_per_gpu,
)
from core.model import preset
from core.scenarios.common import GPU, RESERVE, SEQ, Link, link, page_memory
from core.training import get_recipe


@dataclass(frozen=True, kw_only=True)
class Sizing:
    """1 · A 70B run: model states at 16 B/param, ZeRO-3 over N GPUs, then activations on top."""

    num_params: int
    bytes_per_param: int
    states_bytes: int  # the whole model's weights + gradients + Adam states
    shard_degree: int
    states_per_gpu_bytes: int  # ZeRO-3: 16 Ψ / N
    model: str  # the preset whose layer shape sizes the activations
    model_params: int
    model_states_per_gpu_bytes: int
    gathered_bytes: int  # ZeRO-3: the gathered + prefetched layer and its gradients
    activations_bytes: dict[str, float]  # per recompute mode
    extra_compute: dict[str, float]  # recompute FLOPs / model FLOPs
    capacity_bytes: float
    reserve_bytes: float
    doubled: Budget  # full recompute, ZeRO-3 over twice the GPUs: the way off the border
    links: tuple[Link, ...]

    def budget(self, mode: str) -> Budget:
        held = self.model_states_per_gpu_bytes + self.gathered_bytes + self.activations_bytes[mode]
        return budget(held, self.capacity_bytes, self.reserve_bytes / self.capacity_bytes)

    def used_bytes(self, mode: str) -> float:
        return self.budget(mode).used_bytes

    def fits(self, mode: str) -> bool:
        return self.budget(mode).fits

    def largest_reserve(self, mode: str) -> float:
        """The largest reserve (share of HBM) with which `mode` still fits: the margin."""
        return 1 - self.budget(mode).training_bytes / self.capacity_bytes


def size_70b(
    shard_degree: int = 16, num_params: int = 70 * 10**9, model: str = "Llama-2 70B"
) -> Sizing:
    """States = 16 Ψ (ZeRO paper Sec. 3.1); ZeRO-3 divides all of them by N; activations do not
    shrink.
    """
    modes = ("none", "selective", "full")
    runs = {m: page_memory(model, shard_degree, 3, m) for m in modes}
    cap, spec = GPU_PRESETS[GPU].hbm_bytes, preset(model)
    return Sizing(
        num_params=num_params,
        bytes_per_param=get_recipe("mixed_adam").bytes_per_param,
        states_bytes=model_state_bytes_per_gpu(num_params, 1, 0).total_bytes,
        shard_degree=shard_degree,
        states_per_gpu_bytes=model_state_bytes_per_gpu(num_params, shard_degree, 3).total_bytes,
        model=model,
        model_params=spec.num_params,
        model_states_per_gpu_bytes=runs["none"].states_bytes,
        gathered_bytes=runs["none"].gathered_bytes,
        activations_bytes={m: r.activations_bytes for m, r in runs.items()},
        extra_compute={m: spec.recompute_flops_fraction(SEQ, m) for m in modes},
        capacity_bytes=cap,
        reserve_bytes=RESERVE * cap,
        doubled=budget(page_memory(model, 2 * shard_degree, 3, "full").total_bytes, cap, RESERVE),
        links=tuple(
            link(
                "memory",
                f"Memory page: {model}, ZeRO-3 over {shard_degree} GPUs, {m}",
                model=model,
                dp=shard_degree,
                zero=3,
                rc=rc,
            )
            for rc, m in (("full", "full recompute"), ("none", "no recompute"))
        ),
    )


@dataclass(frozen=True, kw_only=True)
class Sharding:
    """5 · DDP vs FSDP FULL_SHARD for a 13B model on N GPUs."""

    model: str
    num_params: int
    num_layers: int
    dp: int
    ddp: MemoryResult  # ZeRO stage 0 (FSDP NO_SHARD)
    fsdp: MemoryResult  # ZeRO-3 (FSDP FULL_SHARD)
    capacity_bytes: float
    reserve_bytes: float
    layer_gather_bytes: int  # one layer's full weights, all-gathered before forward and backward
    ddp_comm: ZeroComm
    fsdp_comm: ZeroComm
    links: tuple[Link, ...]

    def budget(self, row: MemoryResult) -> Budget:
        return budget(
            row.total_bytes, self.capacity_bytes, self.reserve_bytes / self.capacity_bytes
        )

    def fits(self, row: MemoryResult) -> bool:
        return self.budget(row).fits


def ddp_vs_fsdp(dp: int = 8, model: str = "Llama-2 13B") -> Sharding:
    """FULL_SHARD = ZeRO-3 (core.memory.FSDP_STRATEGIES); its price is a per-layer all-gather."""
    spec, cap = preset(model), GPU_PRESETS[GPU].hbm_bytes
    return Sharding(
        model=model,
        num_params=spec.num_params,
        num_layers=spec.num_layers,
        dp=dp,
        ddp=page_memory(model, dp, 0),
        fsdp=page_memory(model, dp, 3),
        capacity_bytes=cap,
        reserve_bytes=RESERVE * cap,
        layer_gather_bytes=layer_allgather_bytes(spec),
        ddp_comm=zero_comm_bytes_per_gpu(spec.num_params, dp, 0),
        fsdp_comm=zero_comm_bytes_per_gpu(spec.num_params, dp, 3),
        links=tuple(
            link("memory", f"Memory page: {model} on {dp} GPUs, {name}", model=model, dp=dp, zero=z)
            for z, name in ((0, "DDP (ZeRO stage 0)"), (3, "FULL_SHARD (ZeRO-3)"))
        ),
    )
