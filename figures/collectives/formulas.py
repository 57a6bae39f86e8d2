"""The collectives page's formulas, each beside the simulator's measured value."""

from __future__ import annotations

from core.collectives import ALL_REDUCE_MODELS, all_reduce_cost
from core.units import format_bandwidth, format_bytes, format_seconds


def how_computed_markdown(
    *,
    num_ranks: int,
    message_bytes: float,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    link_name: str,
    simulated_steps: int,
    simulated_bytes: float,
    byte_system: str = "binary",
    bandwidth_system: str = "decimal",
) -> str:
    """The collectives page's formulas, each beside the simulator's measured value."""
    n, s, bw = num_ranks, message_bytes, bandwidth_bytes_per_s
    cost = all_reduce_cost("ring", n, s, bw, latency_s)
    others = "; ".join(f"{label}: {formula}" for label, formula, _ in ALL_REDUCE_MODELS.values())
    return f"""
- **Steps** = 2(N−1) = **{2 * (n - 1)}**; the simulator ran **{simulated_steps}**.
- **Bytes sent per GPU** = 2·S·(N−1)/N = {format_bytes(2 * s * (n - 1) / n, byte_system)};
  measured: **{format_bytes(simulated_bytes, byte_system)}** (chunks split as `np.array_split`, so
  uneven sizes differ slightly).
- **Time** (Thakur, Rabenseifner & Gropp 2005): t = 2(N−1)·α + 2(N−1)/N·S/B
  = {format_seconds(cost.latency_s)} + {format_seconds(cost.bandwidth_s)}
  = **{format_seconds(cost.time_s)}** on {link_name}
  (B = {format_bandwidth(bw, bandwidth_system)} per direction, α = {format_seconds(latency_s)}).
- **nccl-tests**: algbw = S/t; busbw = algbw × 2(N−1)/N, comparable with the link speed B.
- **A vs B** runs both simulators on the same integer inputs and times each step as α + (its largest
  message)/B, since a step's transfers run at once on separate links; bytes scale from the simulated
  tensor to S. Max |output − true sum| checks every GPU's result against `inputs.sum(axis=0)`.
- Closed forms: {others}.
"""
