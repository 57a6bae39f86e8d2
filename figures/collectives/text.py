"""The collectives page's words: the ring's caption and metric row, takeaway and self-checks,
from the simulator's results (no streamlit).
"""

from __future__ import annotations

from core import collectives as coll
from core.units import format_bandwidth, format_bytes, format_seconds
from figures.collectives import how_computed_markdown

SIZES = {
    "64e3": "64 kB",
    "1e6": "1 MB",
    "16e6": "16 MB",
    "256e6": "256 MB",
    "1e9": "1 GB",
    "8e9": "8 GB",
}  # the tensor-size choices: short, stable labels (Streamlit writes the label into the URL)

TAKEAWAY = (
    "A ring all-reduce sends about 2·S bytes per GPU whatever N is: it is bandwidth-optimal, so "
    "the slowest link, not the GPU count, sets its speed — but its 2(N−1) latency steps make small "
    "messages favour tree-like algorithms."
)
# The projected slide's one line (the ring needs the height; the laptop page keeps the whole).
TAKEAWAY_SHORT = (
    "A ring all-reduce sends ~2·S bytes per GPU at any N: its slowest link sets its speed."
)


def colour_key(n: int) -> str:
    """The ring's colour scale in words, for the slide that draws no colour bar."""
    return (
        f"Colour = how many GPUs' inputs a chunk holds: darkest 1 … yellow all {n} (fully summed)."
    )


def takeaway(presenting: bool) -> str:
    """The page's lesson: whole on a laptop, one line on the presenter slide."""
    return TAKEAWAY_SHORT if presenting else TAKEAWAY


def folded_summary(elems, alpha_us, link_latency_s: float) -> str:
    """The folded controls' one-line label: elements simulated and α (the URL's or the link's)."""
    try:
        a = float(alpha_us) if alpha_us is not None else None
    except ValueError:  # a malformed URL value: the widget falls back to the link's default
        a = None
    alpha = f"α {a:g} µs" if a is not None else f"α {link_latency_s * 1e6:g} µs (link's)"
    return f"{elems} elements · {alpha}"


SUM_COLUMNS = 12  # the "check a sum by eye" table's widest row that fits the page at 1440 px


def sum_by_eye(inputs, total) -> tuple[dict[str, dict[str, float]], int]:
    """The "check a sum by eye" table {column: {row: value}} and how many elements it shows:
    inputs[r] = GPU r's elements, total = the sum every GPU ends with. The GPUs and the sum are
    the columns when they fit (N + 1 ≤ 12) and there are more elements than GPUs; otherwise they
    are the rows and the columns are the first 12 elements (N = 16 × 16 elements: 12 columns,
    not 17 or 16)."""
    n, e = len(inputs), len(total)
    gpus = {f"GPU {r}": [float(v) for v in inputs[r]] for r in range(n)}
    gpus["sum (every GPU)"] = [float(v) for v in total]
    if n + 1 <= SUM_COLUMNS and e > n:
        return {g: {f"element {i}": v for i, v in enumerate(vals)} for g, vals in gpus.items()}, e
    shown = min(e, SUM_COLUMNS)
    table = {f"element {i}": {g: vals[i] for g, vals in gpus.items()} for i in range(shown)}
    return table, shown


def ring_caption(n: int, last: int) -> str:
    """How to step the ring, what its boxes and colours mean, and the indexing convention."""
    return (
        "Keys: ← / → step, Home resets (click the page first); ▶ Play steps on by itself, and "
        "▶ Replay this step (in the chart) shows the step's move again. Each box is a GPU holding "
        f"its tensor as {n} chunks numbered 0 … {n - 1}; colour = how many GPUs' inputs that copy "
        f"of the chunk holds (1 … {n}); the outlined squares are the chunks that just travelled "
        f"one link. Every chunk holds all {n} after {last} steps. Convention: {coll.RING_INDEXING}"
    )


def ring_metrics(
    ring: coll.AlgorithmRun, step: int, *, time_s: float, link_name: str, mem: str, bwu: str
) -> list[dict]:
    """Step, bytes and time (in all, and by this step), algbw and busbw of one ring all-reduce."""
    (sent_k, elapsed_k), sent = ring.after(step), ring.max_bytes_sent
    n, size, by = ring.num_ranks, ring.message_bytes, f"by step {step}"
    algbw = size / time_s
    return [
        dict(
            label="Step",
            value=f"{step} of {ring.num_steps}",
            help="2(N−1): N−1 reduce-scatter + N−1 all-gather",
        ),
        dict(
            label="Bytes sent per GPU",
            value=format_bytes(sent, mem),
            delta=f"{format_bytes(sent_k, mem)} {by}",
            delta_color="off",
            delta_arrow="off",
            help="measured by the simulator (busiest GPU)",
        ),
        dict(
            label=f"Time on {link_name}",
            value=format_seconds(time_s),
            delta=f"{format_seconds(elapsed_k)} {by}",
            delta_color="off",
            delta_arrow="off",
            help="total: the α-β formula below; by step k: the simulated steps",
        ),
        dict(label="algbw = S/t", value=format_bandwidth(algbw, bwu)),
        dict(
            label="busbw = algbw·2(N−1)/N",
            value=format_bandwidth(algbw * coll.bus_bandwidth_factor("all_reduce", n), bwu),
        ),
    ]


def how_computed(
    ring: coll.AlgorithmRun,
    simulated_steps: int,
    bandwidth_bytes_per_s: float,
    latency_s: float,
    link_name: str,
    mem: str,
    bwu: str,
) -> list[tuple[str, str]]:
    """The formulas, each beside the simulator's measured value (one markdown block)."""
    md = how_computed_markdown(
        num_ranks=ring.num_ranks,
        message_bytes=ring.message_bytes,
        bandwidth_bytes_per_s=bandwidth_bytes_per_s,
        latency_s=latency_s,
        link_name=link_name,
        simulated_steps=simulated_steps,
        simulated_bytes=ring.max_bytes_sent,
        byte_system=mem,
        bandwidth_system=bwu,
    )
    return [("markdown", md)]


def self_checks() -> list[dict]:
    """Steps and bytes per GPU of a ring all-reduce on N = 8, from the simulator's run."""
    q8 = coll.ring_all_reduce(coll.example_inputs(8, 8))
    return [
        dict(
            question="How many steps does a ring all-reduce take on N = 8 GPUs?",
            answer=len(q8.steps),
            key="q1",
            explanation="N−1 reduce-scatter steps, then N−1 all-gather steps.",
        ),
        dict(
            question="How many bytes does each GPU send for a 1 GB (1e9 B) tensor on N = 8?",
            answer=float(q8.bytes_sent.max() * 1e9 / q8.message_bytes),
            key="q2",
            unit="bytes",
            explanation="2·S·(N−1)/N: each of 2(N−1) steps sends one S/N chunk.",
        ),
    ]
