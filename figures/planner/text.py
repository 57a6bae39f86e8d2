"""Words and rows of the planner page: question, captions, row clicks, exercise, self-checks (no
Streamlit here).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from core.hardware import make_cluster
from core.model import preset
from core.parallel import ORDERS as LAYOUT_ORDERS
from core.parallel import ZERO_STAGES, Layout, ParallelDims, place
from core.pipeline import SCHEDULES
from core.planner import Evaluation, SearchResult, Training, evaluate, pick_layout, tp_flipped
from core.training import RECIPES as RECIPE_REGISTRY
from core.units import gib_or_gb
from figures import planner as fp
from figures.planner.gantt import AGGREGATE_ABOVE

PICK = {k: k for k in ("fastest", "#2", "#3", "#4", "#5", "boring", "custom")}
VS = {k: k for k in ("TP flipped", "boring", "fastest", "#2")}
RULES = {
    k: k for k in ("all", "ranked", "memory", "model split", "batch", "TP crosses node", "schedule")
}
QUESTION = (
    "Given a model, a cluster and a batch, which parallel layout trains fastest, and why — how "
    "many GPUs, mapped how, and does it fit?"
)
HELP = {
    "nics": "At most one per GPU.",
    "gb": "Sequences per optimizer step; 1,152 × 4,096 ≈ 4.7M tokens.",
    "eff": "Achievable share of dense peak in GEMMs; 0.7 reproduces Megatron 2021 "
    "(see calibration).",
    "pick": "The search's ranking, or custom: set it below or click a row of the table.",
    "cp": "Context parallelism: ranks splitting each sequence (ring attention, zig-zag); "
    "DP × TP × PP × CP = GPUs. The search tries CP from 16K tokens on.",
    "ep": "Expert parallelism (MoE models): ranks splitting each MoE layer's experts; EP "
    "divides the experts and DP × CP (it folds into them, ETP = TP).",
}
ORDERS = {o: o for o in LAYOUT_ORDERS}  # innermost first
RECIPES = {k: r.label for k, r in RECIPE_REGISTRY.items()}  # URL value: the registry's label
EFF, PK = dict(step=0.05, help=HELP["eff"]), dict(help=HELP["pick"])
INPUTS = "Inputs: model, cluster, batch, precision, recompute, which layout to draw"
VALIDATION = (
    "**Shown, not fitted:** published runs on other hardware, predicted with the same parameters "
    "(nothing set from them). Schedule, recompute and ZeRO stage are not published: the planner "
    "tries each and reports its fastest variant that fits in memory."
)


def input_summary(
    nodes: int, gpn: int, gpu: str, model: str, gb: int, seq: int, rc: str, recipe: str
) -> str:
    """The inputs in one line, above their expander."""
    return (
        f"**{model}** on **{nodes} × {gpn} {gpu}** · batch {gb:,} × {seq:,} tokens · "
        f"{rc} recompute · {recipe}"
    )


ZEROS = {str(k): v.label for k, v in ZERO_STAGES.items()}  # URL value zero=0..3
CUSTOM = "Custom layout (used when Layout drawn = custom; a table row click fills it in)"
NO_LAYOUT = (
    "no layout drawn: the rule is named above; the table below lists every layout and why it "
    "runs or not"
)
NOTHING_TO_COMPARE = "Nothing to compare: with TP = 1 or one node TP has nowhere else to go."
GANTT = "Show this layout's pipeline, simulated (Gantt)"
CALIBRATION_COLUMNS = {"error": ("error", "percent", None)}
CALIBRATION = (
    "A **fit**, not a prediction: the matmul efficiency was chosen so that the same step-time "
    "model, with one set of efficiencies, matches Megatron-LM's published weak scaling "
    "(Narayanan et al. 2021 Table 1, Selene A100s; TFLOP/s per GPU in their Eq. 3 convention)."
)
# The seeds' placement exercise on the default cluster (8 x 8 H100, NVLink 4 inside, NDR between).
EXERCISE = dict(
    model="GPT-3 175B",
    seq="2048",
    gb="64",
    rc="full",
    pick="custom",
    dp="1",
    tp="8",
    pp="8",
    cmp="true",
)
EXERCISE_TITLE = "The placement exercise: 8 nodes × 8 GPUs, TP = 8, PP = 8, DP = 1"


def exercise_markdown() -> str:
    """The exercise worked by the core (TP inside NVLink vs across nodes), each case a link that
    opens the page on it (relative, so it works on any host).
    """
    model, cluster = preset("GPT-3 175B"), make_cluster(num_nodes=8)
    training = Training(global_batch=64, seq_len=2048, recompute="full")
    good = evaluate(model, cluster, Layout(dp=1, tp=8, pp=8), training)
    bad = evaluate(model, cluster, Layout(dp=1, tp=8, pp=8, order="pp-tp-dp"), training)
    return fp.exercise_markdown(good, bad, "planner?" + urlencode(EXERCISE, quote_via=quote))


def drawn_caption(ev: Evaluation, result: SearchResult) -> str:
    """Which layout the page draws, out of how many the search ran and rejected."""
    return (
        f"Drawn: **{ev.layout.label}** · {len(result.ranked):,} layouts run, "
        f"{len(result.rejected):,} rejected."
    )


def compare_labels(ev: Evaluation, vs: str) -> tuple[str, str]:
    """Bar labels of the comparison: where TP sits for a flipped layout, else drawn vs the pick."""
    if vs != "TP flipped":
        return ("drawn", vs)
    flip = ("TP across nodes", "TP in node")
    return flip[:: 1 if ev.spans["tp"].crosses_node else -1]


def second_layout(ev: Evaluation, result: SearchResult, vs: str) -> tuple[Layout | None, tuple]:
    """The layout compared with the drawn one, and the comparison's two bar labels."""
    other = tp_flipped(ev) if vs == "TP flipped" else pick_layout(result, vs)
    return other, compare_labels(ev, vs)


def drawn_layout(
    result: SearchResult, pick: str, num_gpus: int, model_name: str, custom: dict
) -> Layout:
    """The layout the page draws: the custom one from its widgets' values, or the search's pick."""
    if pick != "custom":
        return picked_layout(result, pick, num_gpus, model_name)
    c = custom
    return Layout(
        dp=c["dp"],
        tp=c["tp"],
        pp=c["pp"],
        cp=c.get("cp", 1),
        ep=c.get("ep", 1),
        zero_stage=int(c["zero"]),
        sequence_parallel=c["sp"],
        micro_batch=c["mb"],
        schedule=c["sched"],
        num_chunks=c["v"] if c["sched"] == "interleaved_1f1b" else 1,
        order=c["order"],
    )


def picked_layout(result: SearchResult, pick: str, num_gpus: int, model_name: str) -> Layout:
    """The search's layout a pick names; a ValueError naming every rule broken when none runs."""
    lay = pick_layout(result, pick)
    if lay is None:
        raise ValueError(fp.no_layout_message(result, num_gpus, model_name))
    return lay


def pipeline_ops(ev: Evaluation) -> int:
    """F and B operations of the pipeline: one each per stage, chunk and micro-batch."""
    return 2 * ev.layout.pp * ev.num_microbatches * ev.layout.num_chunks


def gantt_help(ev: Evaluation) -> str:
    return (
        f"{pipeline_ops(ev):,} F and B operations; above {AGGREGATE_ABOVE} micro-batches each "
        "rank's ops merge into busy runs."
    )


def table_title(gpus: int) -> str:
    return f"Every layout of {gpus:,} GPUs, fastest first"


def table_columns(units: str) -> dict[str, tuple[str, str | None, str]]:
    """The layout table's columns (header, format, width), memory in the chosen unit."""
    return fp.TABLE_COLUMNS | {"memory": (f"memory ({gib_or_gb(units)[0]})", "%.1f", "small")}


def table_caption(rows: int) -> str:
    return (
        f"Click a row to draw it. First {rows} rows of the filter; status is ok or the rule a "
        "layout breaks; a rejected row with blank ZeRO and mb stands for every value of them."
    )


def row_controls(row: dict) -> dict | str:
    """The layout widgets' values for a clicked table row, or a note when the row stands for a
    whole family of layouts (a rejected DP × TP × PP with ZeRO and micro-batch left open).
    """
    if row["zero_stage"] is None or row["micro_batch"] is None:
        return (
            f"That row stands for every DP {row['dp']} × TP {row['tp']} × PP {row['pp']}"
            f"{_cp_ep(row)} layout: "
            f"{row['reason']}"
        )
    return dict(
        pick="custom",
        dp=row["dp"],
        tp=row["tp"],
        pp=row["pp"],
        cp=row.get("cp", 1),
        ep=row.get("ep", 1),
        zero=ZERO_STAGES[row["zero_stage"]].label,
        mb=row["micro_batch"],
        sched=SCHEDULES[row["schedule"]].label,
        v=max(2, row["num_chunks"]),
        order=LAYOUT_ORDERS[0],
    )


def _cp_ep(row: dict) -> str:
    """' × CP c (EP e)' for a row with CP or EP > 1."""
    cp, ep = row.get("cp", 1), row.get("ep", 1)
    return (f" × CP {cp}" if cp > 1 else "") + (f" (EP {ep})" if ep > 1 else "")


def self_checks() -> list[dict]:
    """The page's two questions (common.self_check's arguments), answered by core.parallel."""
    span = place(ParallelDims(dp=1, tp=8, pp=8, order="pp-tp-dp"), make_cluster(num_nodes=8)).spans[
        "tp"
    ]
    return [
        dict(
            key="q1",
            rel_tol=0,
            question="A layout with DP = 4, TP = 8, PP = 2 uses how many GPUs?",
            answer=ParallelDims(dp=4, tp=8, pp=2).world_size,
            explanation="DP × TP × PP: every GPU holds one (dp, pp, tp) coordinate.",
        ),
        dict(
            key="q2",
            rel_tol=0,
            question="8 nodes × 8 GPUs, TP = 8, PP = 8, order pp-tp-dp (PP innermost): how many "
            "of the 8 TP groups cross a node boundary?",
            answer=span.crossing_groups,
            explanation="PP stride 1 puts 8 stages on a node, so each TP group takes one GPU on "
            f"each of {span.nodes_per_group} nodes.",
        ),
    ]


def metric_kwargs(metrics: list[tuple], fits: bool) -> list[dict]:
    """st.metric keyword arguments of the headline (label, value, delta, help) tuples: the step
    time framed, the memory delta red when the layout does not fit.
    """
    return [
        dict(
            label=label,
            value=value,
            delta=delta,
            help=tip,
            border=label == "Step time",
            delta_color="off" if label == "GPUs" else "normal" if fits else "inverse",
        )
        for label, value, delta, tip in metrics
    ]
