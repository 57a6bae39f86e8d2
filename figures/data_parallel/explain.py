"""How the data-parallel page's numbers are computed, with this run's values."""

from __future__ import annotations

from core.data_parallel import AllReduceKind, DpJob, DpProof, DpStep, StragglerCurve
from core.units import format_bandwidth, format_bytes, format_count, format_seconds


def how_computed_lines(
    proof: DpProof | None,
    job: DpJob | None,
    step: DpStep | None,
    curve: StragglerCurve | None,
    units: str,
    bw_units: str = "decimal",
) -> list[str]:
    """Markdown paragraphs: each formula of the page with the value the core measured beside it
    (a None input drops its paragraphs: each section of the page writes its own)."""
    lines = (
        []
        if proof is None
        else [
            r"**Gradient.** $\nabla L = \frac{1}{B}\sum_{i=1}^{B} \nabla\ell_i = \sum_r "
            r"\frac{n_r}{B}\,g_r\;\overset{n_r = B/N}{=}\;\frac{1}{N}\sum_r g_r$, with $g_r$ rank "
            r"$r$'s mean gradient over its $n_r$ samples. Measured: max |ring ÷ N − full| = "
            f"{proof.ring_max_abs_diff:.1e} over "
            rf"{proof.full_grad.size} parameters; weighted $\sum_r n_r g_r / \sum_r n_r$: "
            f"{proof.weighted_max_abs_diff:.1e} (shards {'/'.join(map(str, proof.shard_sizes))})."
        ]
    )
    if job is not None and step is not None:
        p, nb = step.num_gpus, len(step.bucket_bytes)
        ring = (
            r"$t_i = \min_{a,\pi}\,[\ell_{a,\pi}(p) + n_i / \text{algbw}_{a,\pi}]$ over NCCL's "
            r"algorithms $a$ (ring; double binary tree, latency $\propto \lg$ nodes) and "
            r"protocols $\pi$ (LL, LL128, Simple), constants from NVIDIA/nccl "
            f"src/graph/tuning.cc; links at the achievable efficiency. Here: {step.algorithms}"
            if job.all_reduce is AllReduceKind.NCCL
            else r"$t_i = 2(p-1)\,\alpha + 2\frac{p-1}{p}\frac{n_i}{B}$ "
            "(textbook flat ring, B = the slowest link per rank"
            + (" at line rate)" if job.efficiency is None else " at its achievable share)")
            if job.all_reduce is AllReduceKind.FLAT_RING
            else r"$t_i = \text{RS}_\text{node}(n_i) + \text{AR}_\text{nodes}(n_i/g) + "
            r"\text{AG}_\text{node}(n_i)$ (hierarchical: only $1/g$ of each bucket crosses "
            r"the NICs)"
        )
        lines += [
            rf"**Bytes.** Each rank of a ring sends $2\frac{{p-1}}{{p}}\,n$: at p = {p}, n = "
            f"{format_bytes(step.grad_bytes, units)} → "
            f"{format_bytes(step.bytes_sent_per_rank, units)}.",
            f"**All-reduce time**, per bucket ({job.grad_bytes_per_param:g}-byte gradients): "
            f"{ring}. Measured at p = {p}: {nb} bucket{'s' * (nb > 1)}, "
            f"{format_seconds(step.comm_s)} in all = {format_seconds(step.comm_latency_s)} "
            f"latency + {format_seconds(step.comm_s - step.comm_latency_s)} bytes over "
            f"{format_bandwidth(step.bottleneck_bytes_per_s, bw_units)} ({step.bottleneck_link}).",
            r"**Compute.** $t = \frac{6\,\Psi\,T}{\text{peak} \times \text{MFU}}$, forward ⅓ and "
            f"backward ⅔: Ψ = {format_count(job.num_params)}, T = {step.tokens_per_gpu:,.0f} "
            f"tokens, MFU {job.mfu:.0%} → {format_seconds(step.compute_s)} "
            f"({format_seconds(step.forward_s)} + {format_seconds(step.backward_s)}).",
            r"**Overlap.** Bucket $i$ is ready at $r_i$ (gradients arrive evenly through "
            r"backward); $\text{finish}_i = \max(r_i, \text{finish}_{i-1}) + t_i$; exposed = "
            f"finish of the last bucket − end of backward = {format_seconds(step.exposed_comm_s)} "
            f"({format_seconds(step.hidden_comm_s)} hidden). Step = compute + exposed = "
            f"{format_seconds(step.step_s)}; efficiency = compute / step = {step.efficiency:.1%}.",
        ]
    if curve is None:
        return lines
    i = len(curve.rank_counts) - 1
    lines.append(
        r"**Stragglers.** $E[\text{step}] = \mu + \sigma\,E[\max_{r \le p} Z_r]$, "
        r"$E[\max] = \int x\,p\,\varphi(x)\,\Phi(x)^{p-1}\,dx$ (numerical integration). At p = "
        f"{curve.rank_counts[i]}: E[max] = {curve.expected_max_z[i]:.4f} → "
        f"{curve.expected_step_s[i] * 1e3:.2f} ms; Monte Carlo {curve.mc_step_s[i] * 1e3:.2f} ± "
        f"{2 * curve.mc_stderr_s[i] * 1e3:.2f} ms. A rare hiccup: $P = 1 - (1-q)^p$ = "
        f"{curve.prob_step_slow[i]:.3f}."
    )
    return lines
