"""Collectives: a real ring all-reduce you can watch, and why the ring scales."""
from __future__ import annotations

import numpy as np
import streamlit as st

from core import collectives as coll
from core.hardware import LINK_PRESETS, make_cluster
from core.units import format_bandwidth, format_bytes, format_seconds
from figures import collectives as figs
from app_pages import common

SIZES = {"64e3": "64 kB", "1e6": "1 MB", "16e6": "16 MB", "256e6": "256 MB", "1e9": "1 GB",
         "8e9": "8 GB"}
LINKS = {name: name for name in LINK_PRESETS}


@st.cache_data(max_entries=64)
def ring(n: int, elems: int):
    """A ring all-reduce on small integers (so a learner can check a sum by eye)."""
    return coll.ring_all_reduce(coll.example_inputs(n, elems))


@st.cache_data(max_entries=64)
def animation(n, elems, bw, alpha, link_name, size, units):
    return figs.ring_animation_figure(ring(n, elems), bandwidth_bytes_per_s=bw, latency_s=alpha,
                                      link_name=link_name, message_bytes=size, byte_system=units)


@st.cache_data(max_entries=16)
def bytes_scan(size, units):
    counts = tuple(2 ** k for k in range(1, 11))
    return figs.bytes_per_rank_figure(coll.scan_bytes_per_rank(counts, size), byte_system=units)


@st.cache_data(max_entries=32)
def comparison(n, size, bw, alpha, cluster_args, units):
    cluster = make_cluster(**dict(cluster_args)) if cluster_args else None
    return (figs.time_vs_ranks_figure(message_bytes=size, bandwidth_bytes_per_s=bw, latency_s=alpha,
                                      cluster=cluster, byte_system=units),
            figs.time_vs_size_figure(num_ranks=n, bandwidth_bytes_per_s=bw, latency_s=alpha,
                                     cluster=cluster, byte_system=units),
            figs.bandwidth_figure(message_bytes=size, bandwidth_bytes_per_s=bw, latency_s=alpha))


common.start_page("Collectives: the ring all-reduce",
                  "How do N GPUs sum one tensor, and why does the ring scale?")
mem, bwu = common.memory_units().value, common.bandwidth_units().value
c1, c2, c3, c4 = st.columns(4)
n = common.slider("GPUs in the ring (N)", 2, 32, 8, key="n", where=c1)
elems = common.slider("Elements per GPU (simulated)", 1, 256, 8, key="elems", where=c2,
                      help="The simulator moves these real numbers; the readouts scale them to the "
                           "tensor size on the right.")
size = float(common.select("Tensor size per GPU (S)", SIZES, "1e9", key="size", where=c3))
link_name = common.select("Link", LINKS, "NVLink 4", key="link", where=c4)
link = LINK_PRESETS[link_name]
alpha_us = common.number("Latency α per step (µs; empty = the link's NCCL default)", 0.0, 1000.0,
                         None, key="alpha", step=1.0)
alpha = link.latency_s if alpha_us is None else alpha_us * 1e-6
bw = link.bandwidth_bytes_per_s

with common.explain_errors():
    trace = ring(n, elems)
    common.chart(animation(n, elems, bw, alpha, link_name, size, mem), key="ring", height=720)
    t = coll.all_reduce_time_s("ring", n, size, bw, alpha)
st.caption(f"Press ▶ to play, or drag the step slider. Colour = how many GPUs' inputs a chunk "
           f"copy holds (1 … {n}); N = {n} reaches {n} everywhere after {2 * (n - 1)} steps. "
           f"Convention: {coll.RING_INDEXING}")
sent = trace.bytes_sent.max() * size / trace.message_bytes
m = st.columns(5)
m[0].metric("Steps", f"{len(trace.steps)}", help="2(N−1): N−1 reduce-scatter + N−1 all-gather")
m[1].metric("Bytes sent per GPU", format_bytes(sent, mem), help="measured by the simulator")
m[2].metric(f"Time on {link_name}", format_seconds(t))
m[3].metric("algbw = S/t", format_bandwidth(size / t, bwu))
m[4].metric("busbw = algbw·2(N−1)/N", format_bandwidth(
    size / t * coll.bus_bandwidth_factor("all_reduce", n), bwu))
if trace.states is not None and n * elems <= 128:
    with st.expander("Check a sum by eye: the inputs and what every GPU ends with"):
        st.dataframe({f"GPU {r}": trace.states[0][r] for r in range(n)} | {"sum (every GPU)":
                     trace.outputs[0]}, hide_index=False)
st.download_button("Download the step trace (CSV)", trace.to_frame().to_csv(index=False),
                   file_name=f"ring_allreduce_N{n}.csv", mime="text/csv")

st.subheader("Bytes per GPU stay flat as N grows; a central server's do not")
common.chart(bytes_scan(size, mem), key="bytes")

st.subheader("Which algorithm, when: latency vs bandwidth")
k1, k2, k3, k4 = st.columns(4)
tiered = common.toggle("Two-tier cluster (nodes × GPUs)", False, key="tier", where=k1)
cluster_args = None
if tiered:
    gpn = common.slider("GPUs per node", 2, 8, 8, key="gpn", where=k2)
    nic = common.select("Network", {k: k for k in LINK_PRESETS if "NVLink" not in k and "PCIe" not in k
                                    and "Infinity" not in k}, "InfiniBand NDR", key="nic", where=k3)
    nics = common.slider("NICs per node", 1, 8, 8, key="nics", where=k4)
    cluster_args = (("num_nodes", max(2, n // gpn)), ("gpus_per_node", gpn),
                    ("intra_link_name", link_name), ("inter_link_name", nic),
                    ("nics_per_node", min(nics, gpn)))
with common.explain_errors():
    by_n, by_size, bus = comparison(n, size, bw, alpha, cluster_args, mem)
left, right = st.columns(2)
with left:
    common.chart(by_n, key="by_n")
with right:
    common.chart(by_size, key="by_size")
common.chart(bus, key="busbw")

common.takeaway("A ring all-reduce sends about 2·S bytes per GPU whatever N is: it is "
                "bandwidth-optimal, so the slowest link, not the GPU count, sets its speed — but its "
                "2(N−1) latency steps make small messages favour tree-like algorithms.")
with st.expander("How this is computed", expanded=False):
    beta = coll.all_reduce_cost("ring", n, size, bw, alpha)
    st.markdown(f"""
- **Steps** = 2(N−1) = **{2 * (n - 1)}**; the simulator ran **{len(trace.steps)}**.
- **Bytes sent per GPU** = 2·S·(N−1)/N = {format_bytes(2 * size * (n - 1) / n, mem)};
  measured: **{format_bytes(sent, mem)}** (chunks split as `np.array_split`, so uneven sizes differ
  slightly).
- **Time** (Thakur, Rabenseifner & Gropp 2005): t = 2(N−1)·α + 2(N−1)/N·S/B
  = {format_seconds(beta.latency_s)} + {format_seconds(beta.bandwidth_s)} = **{format_seconds(t)}**
  on {link_name} (B = {format_bandwidth(bw, bwu)} per direction, α = {format_seconds(alpha)}).
- **nccl-tests**: algbw = S/t; busbw = algbw × 2(N−1)/N, comparable with the link speed B.
- Other algorithms: {"; ".join(f"{v[0]}: {v[1]}" for v in coll.ALL_REDUCE_MODELS.values())}.
""")
st.subheader("Self-check")
q8 = coll.ring_all_reduce(coll.example_inputs(8, 8))
common.self_check("How many steps does a ring all-reduce take on N = 8 GPUs?", len(q8.steps),
                  key="q1", explanation="N−1 reduce-scatter steps, then N−1 all-gather steps.")
common.self_check("How many bytes does each GPU send for a 1 GB (1e9 B) tensor on N = 8?",
                  float(q8.bytes_sent.max() * 1e9 / q8.message_bytes), key="q2", unit="bytes",
                  explanation="2·S·(N−1)/N: each of 2(N−1) steps sends one S/N chunk.")
common.show_url_notices()
