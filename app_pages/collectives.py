"""Collectives: a real ring all-reduce you can watch, and why the ring scales."""

from __future__ import annotations

import streamlit as st

from app_pages import common
from core import collectives as coll
from core.collectives import run_algorithm, timing_elements
from core.hardware import LINK_PRESETS, make_cluster
from core.units import format_bandwidth, format_bytes, format_seconds
from figures import collectives as figs
from figures import collectives_compare as versus

SIZES = {
    "64e3": "64 kB",
    "1e6": "1 MB",
    "16e6": "16 MB",
    "256e6": "256 MB",
    "1e9": "1 GB",
    "8e9": "8 GB",
}
LINKS = {name: name for name in LINK_PRESETS}
ALGS = {name: a.label for name, a in coll.ALGORITHMS.items()}


@st.cache_data(max_entries=64)
def run(name, n, size, bw, alpha, cluster_args=None):
    """One algorithm on N × timing_elements(N) small integers: every chunk split evenly, so the
    bytes and
    times scale exactly to S. Hierarchical: the cluster's node size, else 8 GPUs per node."""
    cluster = make_cluster(**dict(cluster_args)) if cluster_args else None
    return run_algorithm(
        name,
        coll.example_inputs(n, timing_elements(n)),
        message_bytes=size,
        bandwidth_bytes_per_s=bw,
        latency_s=alpha,
        gpus_per_node=None if cluster else 8,
        cluster=cluster,
    )


@st.cache_data(max_entries=64)
def shown(n, elems):
    """The ring drawn and checked by eye: the learner's few elements per GPU."""
    return coll.ring_all_reduce(coll.example_inputs(n, elems))


@st.cache_data(max_entries=64)
def animation(n, elems, bw, alpha, link_name, size, units):
    return figs.ring_animation_figure(
        shown(n, elems),
        bandwidth_bytes_per_s=bw,
        latency_s=alpha,
        link_name=link_name,
        message_bytes=size,
        byte_system=units,
        timing=run("ring", n, size, bw, alpha).trace,
    )


def move(delta: int | None, last: int) -> None:
    """Back / Next / Reset: set the bound step slider before it renders, kept in 0 … last."""
    st.session_state["step"] = (
        0 if delta is None else min(max(st.session_state.get("step", 0) + delta, 0), last)
    )


@st.cache_data(max_entries=16)
def bytes_scan(size, units):
    counts = tuple(2**k for k in range(1, 11))
    return figs.bytes_per_rank_figure(coll.scan_bytes_per_rank(counts, size), byte_system=units)


@st.cache_data(max_entries=32)
def comparison(n, size, bw, alpha, cluster_args, units, bw_units):
    cluster = make_cluster(**dict(cluster_args)) if cluster_args else None
    units_kw = dict(byte_system=units, bandwidth_system=bw_units)
    return (
        figs.time_vs_ranks_figure(
            message_bytes=size,
            bandwidth_bytes_per_s=bw,
            latency_s=alpha,
            cluster=cluster,
            **units_kw,
        ),
        figs.time_vs_size_figure(
            num_ranks=n, bandwidth_bytes_per_s=bw, latency_s=alpha, cluster=cluster, **units_kw
        ),
        figs.bandwidth_figure(message_bytes=size, bandwidth_bytes_per_s=bw, latency_s=alpha),
    )


common.start_page(
    "Collectives: the ring all-reduce", "How do N GPUs sum one tensor, and why does the ring scale?"
)
mem, bwu = common.memory_units().value, common.bandwidth_units().value
c1, c2, c3, c4 = st.columns(4)
n = common.slider("GPUs in the ring (N)", 2, 32, 8, key="n", where=c1)
elems = common.slider(
    "Elements per GPU (simulated)",
    1,
    256,
    8,
    key="elems",
    where=c2,
    help="The simulator moves these real numbers; readouts scale them to the size S.",
)
size = float(common.select("Tensor size per GPU (S)", SIZES, "1e9", key="size", where=c3))
link_name = common.select("Link", LINKS, "NVLink 4", key="link", where=c4)
link = LINK_PRESETS[link_name]
alpha_us = common.number(
    "Latency α per step (µs; empty = the link's NCCL default)",
    0.0,
    1000.0,
    None,
    key="alpha",
    step=1.0,
)
alpha = link.latency_s if alpha_us is None else alpha_us * 1e-6
bw = link.bandwidth_bytes_per_s

ring_slot, last = st.container(), 2 * (n - 1)
asked = st.session_state.get("step", common.url_int("step"))
if asked is not None and asked > last:  # fewer GPUs than the step the URL or session asked for
    st.session_state["step"] = last
s1, s2, s3, s4 = st.columns([5, 1, 1, 1], vertical_alignment="bottom")
step = common.slider("Step (0 = inputs)", 0, last, 0, key="step", where=s1)
for col, label, key, delta in (
    (s2, "◀ Back", "Left", -1),
    (s3, "Next ▶", "Right", 1),
    (s4, "Reset", "Home", None),
):
    col.button(label, shortcut=key, on_click=move, args=(delta, last), width="stretch")
with common.explain_errors(), ring_slot:
    ring = run("ring", n, size, bw, alpha)
    common.chart(
        figs.open_at_step(animation(n, elems, bw, alpha, link_name, size, mem), step),
        key="ring",
        height=720,
    )
    t = coll.all_reduce_time_s("ring", n, size, bw, alpha)
st.caption(
    "Keys: ← / → step, Home resets (click the page first). ▶ plays on from the step shown. Colour "
    "= "
    f"how many GPUs' inputs a chunk copy holds (1 … {n}); every chunk reaches {n} after {last} "
    "steps. "
    f"Convention: {coll.RING_INDEXING}"
)
(sent_k, elapsed_k), sent, trace = ring.after(step), ring.max_bytes_sent, shown(n, elems)
m = st.columns(5)
m[0].metric(
    "Step", f"{step} of {trace.num_steps}", help="2(N−1): N−1 reduce-scatter + N−1 all-gather"
)
m[1].metric(
    "Bytes sent per GPU",
    format_bytes(sent, mem),
    f"{format_bytes(sent_k, mem)} by step {step}",
    "off",
    delta_arrow="off",
    help="measured by the simulator (busiest GPU)",
)
m[2].metric(
    f"Time on {link_name}",
    format_seconds(t),
    f"{format_seconds(elapsed_k)} by step {step}",
    "off",
    delta_arrow="off",
    help="total: the α-β formula below; by step k: the simulated steps",
)
m[3].metric("algbw = S/t", format_bandwidth(size / t, bwu))
m[4].metric(
    "busbw = algbw·2(N−1)/N",
    format_bandwidth(size / t * coll.bus_bandwidth_factor("all_reduce", n), bwu),
)
if trace.states is not None and n * elems <= 128:
    with st.expander("Check a sum by eye: the inputs and what every GPU ends with"):
        st.dataframe(
            {f"GPU {r}": trace.states[0][r] for r in range(n)}
            | {"sum (every GPU)": trace.outputs[0]},
            hide_index=False,
        )
st.download_button(
    "Download the step trace (CSV)",
    lambda t=trace: t.to_frame().to_csv(index=False),
    file_name=f"ring_allreduce_N{n}.csv",
    mime="text/csv",
    on_click="ignore",
)

st.subheader("Bytes per GPU stay flat as N grows; a central server's do not")
common.chart(bytes_scan(size, mem), key="bytes")

st.subheader("Which algorithm, when: latency vs bandwidth")
k1, k2, k3, k4 = st.columns(4)
tiered = common.toggle("Two-tier cluster (nodes × GPUs)", False, key="tier", where=k1)
cluster_args = None
if tiered:
    gpn = common.slider("GPUs per node", 2, 8, 8, key="gpn", where=k2)
    nic = common.select(
        "Network",
        {
            k: k
            for k in LINK_PRESETS
            if "NVLink" not in k and "PCIe" not in k and "Infinity" not in k
        },
        "InfiniBand NDR",
        key="nic",
        where=k3,
    )
    nics = common.slider("NICs per node", 1, 8, 8, key="nics", where=k4)
    cluster_args = (
        ("num_nodes", max(2, n // gpn)),
        ("gpus_per_node", gpn),
        ("intra_link_name", link_name),
        ("inter_link_name", nic),
        ("nics_per_node", min(nics, gpn)),
    )
with common.explain_errors():
    by_n, by_size, bus = comparison(n, size, bw, alpha, cluster_args, mem, bwu)
for col, fig, key in zip(st.columns(2), (by_n, by_size), ("by_n", "by_size")):
    with col:
        common.chart(fig, key=key)
common.chart(bus, key="busbw")

st.subheader("A vs B: two all-reduce algorithms on the same tensor")
cmp = common.toggle(
    "Compare two algorithms",
    False,
    key="cmp",
    help="Run two simulators on this page's tensor side by side; both choices go in the URL.",
)
sides, runs = st.columns(2), []
for side, default, col in (("A", "ring", sides[0]), ("B", "tree", sides[1])) if cmp else ():
    name = common.select(f"Algorithm {side}", ALGS, default, key=f"alg_{side.lower()}", where=col)
    try:
        runs.append(run(name, n, size, bw, alpha, cluster_args))
    except (
        ValueError
    ) as err:  # e.g. Hierarchical with N not a multiple of GPUs per node: this side only
        col.error(str(err), icon="🚫")
        runs.append(None)
if cmp:
    common.chart(versus.versus_figure(*runs, byte_system=mem), key="versus")
    if all(runs):
        table = versus.versus_table(*runs, byte_system=mem)
        st.table(table)
        common.csv_button(table, f"allreduce_{runs[0].algorithm}_vs_{runs[1].algorithm}_N{n}.csv")
        st.info(versus.versus_takeaway(*runs, byte_system=mem), icon="⚖️")
    st.caption(versus.timing_note(link_name, dict(cluster_args) if tiered else None))

common.takeaway(
    "A ring all-reduce sends about 2·S bytes per GPU whatever N is: it is "
    "bandwidth-optimal, so the slowest link, not the GPU count, sets its speed — but its "
    "2(N−1) latency steps make small messages favour tree-like algorithms."
)
with st.expander("How this is computed", expanded=False):
    st.markdown(
        figs.how_computed_markdown(
            num_ranks=n,
            message_bytes=size,
            bandwidth_bytes_per_s=bw,
            latency_s=alpha,
            link_name=link_name,
            simulated_steps=trace.num_steps,
            simulated_bytes=sent,
            byte_system=mem,
            bandwidth_system=bwu,
        )
    )
st.subheader("Self-check")
q8 = coll.ring_all_reduce(coll.example_inputs(8, 8))
common.self_check(
    "How many steps does a ring all-reduce take on N = 8 GPUs?",
    len(q8.steps),
    key="q1",
    explanation="N−1 reduce-scatter steps, then N−1 all-gather steps.",
)
common.self_check(
    "How many bytes does each GPU send for a 1 GB (1e9 B) tensor on N = 8?",
    float(q8.bytes_sent.max() * 1e9 / q8.message_bytes),
    key="q2",
    unit="bytes",
    explanation="2·S·(N−1)/N: each of 2(N−1) steps sends one S/N chunk.",
)
common.show_url_notices()
