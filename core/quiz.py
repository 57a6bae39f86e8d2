"""Self-check questions: parameters drawn from a seed, answers computed by the cores, pure
checking.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.collectives import example_inputs, ring_all_reduce
from core.data_parallel import equal_shards, make_problem, prove_data_parallel, skewed_shards
from core.hardware import GPU_PRESETS
from core.memory import model_state_bytes_per_gpu
from core.model import preset
from core.parallel import ZERO_STAGES
from core.pipeline import SCHEDULES, simulate
from core.tensor_parallel import link_comparison, tp_comm_plan
from core.training import get_recipe
from core.units import bytes_in, format_bytes, format_seconds, gib_or_gb

BLANK = "—"  # a multiple-choice question's "no answer yet" label (listed first, the widget default)
GOALS = ("Ring all-reduce", "Data parallel", "Tensor parallel", "Pipeline bubble", "ZeRO")
# The answer widgets' URL keys, in order.
KEYS = ("steps", "sent", "weight", "split", "msg", "bubble", "fix", "saved")
PIPE_SCHEDULES = ("gpipe", "1f1b")  # the bubble question's; labels from core.pipeline.SCHEDULES
TP_MODELS = ("Llama-2 7B", "Llama-2 13B", "Llama-2 70B", "GPT-3 175B")


@dataclass(frozen=True, kw_only=True)
class Question:
    """One question: its prompt, the answer the cores computed, how close counts, the working."""

    key: str  # URL parameter of the answer widget
    goal: str  # one of GOALS
    prompt: str  # markdown
    answer: float | str  # a number, or the correct label among choices
    unit: str = ""
    choices: tuple[str, ...] = ()  # multiple choice: short labels (they go into the URL)
    rel_tol: float = 0.02
    abs_tol: float = 0.0
    explanation: str  # markdown, shown after any answer
    pipeline: tuple = ()  # (schedule, P, M) of a bubble question, to draw its timeline

    @property
    def numeric(self) -> bool:
        return not self.choices


def check(q: Question, guess) -> bool | None:
    """True or False for an answer, None while unanswered; numbers within rel_tol or abs_tol."""
    if guess is None or guess in ("", BLANK):
        return None
    if not q.numeric:
        return guess == q.answer
    try:
        g = float(guess)
    except (TypeError, ValueError):
        return False
    return math.isfinite(g) and math.isclose(
        g, float(q.answer), rel_tol=q.rel_tol, abs_tol=q.abs_tol
    )


def _shuffled(rng: np.random.Generator, items) -> tuple[str, ...]:
    return tuple(items[i] for i in rng.permutation(len(items)))


def _ring(rng: np.random.Generator, units: str) -> tuple[Question, Question]:
    n = int(rng.integers(3, 17))
    name, unit = gib_or_gb(units)
    size = float(rng.choice([0.25, 0.5, 1.0, 2.0, 4.0])) * unit
    trace = ring_all_reduce(example_inputs(n, n))  # one element per chunk: bytes scale to S exactly
    steps, sent = trace.num_steps, float(trace.bytes_sent.max()) / trace.message_bytes * size
    s = format_bytes(size, units)
    return (
        Question(
            key="steps",
            goal=GOALS[0],
            answer=float(steps),
            rel_tol=0.0,
            prompt=f"A ring all-reduce over **N = {n}** GPUs: how many communication steps, start "
            "to finish?",
            explanation=f"**2(N−1) = {steps}.** Reduce-scatter takes N−1 = {n - 1} steps, after "
            "which every GPU owns one fully summed chunk; all-gather takes N−1 more to pass those "
            f"chunks round. The numpy ring simulator's trace has {steps} steps.",
        ),
        Question(
            key="sent",
            goal=GOALS[0],
            answer=bytes_in(sent, name),
            unit=name,
            prompt=f"Each of those {n} GPUs holds a **{s}** gradient. How many {name} does each "
            "GPU send during the ring all-reduce?",
            explanation=f"**2·S·(N−1)/N = 2 × {s} × {n - 1}/{n} = {format_bytes(sent, units)}.** "
            "Each of the 2(N−1) steps sends one chunk of S/N (measured by the simulator). Close to "
            "2·S whatever N: no GPU is a hotspot, which is why the ring scales.",
        ),
    )


def _data_parallel(rng: np.random.Generator, seed: int) -> Question:
    n, per = int(rng.integers(2, 7)), int(rng.integers(3, 9))
    total = n * per
    sizes = equal_shards(total, n) if rng.random() < 0.4 else skewed_shards(total, n)
    k = int(rng.integers(n))
    proof = prove_data_parallel(make_problem(num_samples=total, seed=seed), sizes)
    plain = (
        "the same, as the shards are equal"
        if proof.equal_shards
        else f"off by {proof.ring_max_abs_diff:.1e}"
    )
    return Question(
        key="weight",
        goal=GOALS[1],
        answer=sizes[k] / total,
        prompt=f"Data parallelism over {n} ranks: rank r holds n_r samples, **n = "
        f"({', '.join(map(str, sizes))})**, "
        "and computes g_r, the gradient of the *mean* loss over its own samples. The all-reduce "
        "forms "
        f"Σ_r w_r·g_r. Which weight **w_{k}** (rank {k}) makes that exactly the gradient of one "
        "big batch "
        f"of {total} samples? (a fraction of 1)",
        explanation=f"**w_r = n_r / B = {sizes[k]}/{total} = {sizes[k] / total:.4g}.** The batch "
        "loss is a mean over samples and the gradient is linear: ∇L = (1/B) Σ_i ∇ℓ_i = Σ_r "
        "(n_r/B)·g_r. With equal shards every w_r = 1/N — DDP's sum, then divide by N — so "
        "averaging *is* one big batch. Checked on a small MLP through the ring simulator: weights "
        f"n_r/B match the full-batch gradient to {proof.weighted_max_abs_diff:.1e}; the plain 1/N "
        f"average is {plain}.",
    )


def _tensor_parallel(rng: np.random.Generator, units: str) -> tuple[Question, Question]:
    forward = bool(rng.random() < 0.5)
    labels = ("column-parallel A", "row-parallel B", "both", "neither")
    if forward:
        ask, answer = "forward pass, which matmul's output must be all-reduced", labels[1]
        why = (
            "**Row-parallel B.** Splitting A by columns gives each GPU whole columns of X·A, so "
            "GeLU runs locally. B split by rows makes each GPU's product a partial sum of Y: one "
            "all-reduce adds them (Megatron's g). Attention does the same with heads: 2 "
            "all-reduces per layer forward."
        )
    else:
        ask, answer = (
            "backward pass, which matmul's input gradient dX must be all-reduced",
            labels[0],
        )
        why = (
            "**Column-parallel A.** Each GPU's slice of A yields only a partial dX = dZ_i·A_iᵀ: "
            "one all-reduce sums them (Megatron's f). B's backward needs none, since dY is already "
            "on every GPU. With attention: 2 all-reduces per layer backward."
        )
    name = str(rng.choice(TP_MODELS))
    model, b = preset(name), int(rng.choice([1, 2, 4]))
    s = int(rng.choice([1024, 2048, 4096, 8192]))
    plan = tp_comm_plan(model, tp=8, micro_batch=b, seq_len=s)
    links = ("NVLink 4", "InfiniBand NDR")
    nv, ib = link_comparison(
        model, GPU_PRESETS["H100 SXM"], tp=8, micro_batch=b, seq_len=s, links=links
    )
    small = "MiB" if gib_or_gb(units)[0] == "GiB" else "MB"
    return (
        Question(
            key="split",
            goal=GOALS[2],
            answer=answer,
            choices=_shuffled(rng, labels),
            prompt="Megatron's MLP on t GPUs: **Y = GeLU(X·A)·B**, A split by columns, B by rows. "
            f"In the **{ask}**?",
            explanation=why,
        ),
        Question(
            key="msg",
            goal=GOALS[2],
            answer=bytes_in(plan.message_bytes, small),
            unit=small,
            prompt=f"TP = 8 on {name} (hidden size h = {model.hidden_size:,}), micro-batch b = "
            f"{b}, sequence s = {s:,}, "
            f"bf16 activations. How many {small} is each TP all-reduce message?",
            explanation=f"**b·s·h × 2 B = {b} × {s:,} × {model.hidden_size:,} × 2 = "
            f"{format_bytes(plan.message_bytes, units)}.** A layer runs "
            f"{plan.collectives_per_layer} of them "
            f"per micro-batch, on the critical path. Per layer on an H100: compute "
            f"{format_seconds(nv.compute_s)}; TP traffic over NVLink 4 "
            f"{format_seconds(nv.comm_s)}, over an InfiniBand NDR NIC {format_seconds(ib.comm_s)} "
            f"({ib.comm_s / nv.comm_s:.2g}× longer). That is why TP stays inside the node.",
        ),
    )


def _pipeline(rng: np.random.Generator) -> tuple[Question, Question]:
    p = int(rng.choice([4, 6, 8, 12, 16]))
    m = int(rng.integers(max(2, p // 2), 4 * p + 1))
    sched = str(rng.choice(list(PIPE_SCHEDULES)))
    other = next(k for k in PIPE_SCHEDULES if k != sched)

    def share(s: str, pp: int, mm: int) -> float:
        return 100 * simulate(s, pp, mm).bubble_fraction

    here = share(sched, p, m)
    options = {
        "more micro-batches": share(sched, p, 2 * m),
        "more stages": share(sched, 2 * p, m),
        f"switch to {SCHEDULES[other].label}": share(other, p, m),
        "fewer, bigger micro-batches": share(sched, p, max(1, m // 2)),
    }
    what = {
        "more micro-batches": f"M = {2 * m}",
        "more stages": f"P = {2 * p}",
        "fewer, bigger micro-batches": f"M = {max(1, m // 2)}",
    }
    lines = "; ".join(f"{k} ({what.get(k, 'same P, M')}): {v:.2f}%" for k, v in options.items())
    return (
        Question(
            key="bubble",
            goal=GOALS[3],
            answer=here,
            unit="%",
            rel_tol=0.0,
            abs_tol=0.5,
            pipeline=(sched, p, m),
            prompt=f"A **{SCHEDULES[sched].label}** pipeline with **P = {p}** stages and **M = "
            f"{m}** micro-batches per "
            "step (t_B = 2 t_F, no send latency). What share of the GPUs' time is bubble (idle), "
            "in %?",
            explanation=f"**(P−1)/(M+P−1) = {p - 1}/{m + p - 1} = "
            f"{100 * (p - 1) / (m + p - 1):.2f}%**; the event "
            f"simulator measures {here:.2f}%. Each rank idles (P−1)(t_F + t_B) while the pipe "
            "fills and "
            "drains, against M(t_F + t_B) of work.",
        ),
        Question(
            key="fix",
            goal=GOALS[3],
            answer="more micro-batches",
            choices=_shuffled(rng, list(options)),
            prompt=f"For that pipeline ({SCHEDULES[sched].label}, P = {p}, M = {m}), which "
            "change shrinks the bubble fraction?",
            explanation="**More micro-batches**: the fill and drain stay (P−1) stage-times, the "
            "work grows. Simulated: "
            f"{lines}. 1F1B has GPipe's bubble; it cuts the activations held from M to P.",
        ),
    )


def _zero(rng: np.random.Generator, units: str) -> Question:
    billions = float(rng.choice([1.3, 7, 13, 30, 70, 175]))
    nd, k = int(rng.choice([4, 8, 16, 32, 64])), int(rng.integers(1, 4))
    psi = round(billions * 1e9)
    name = gib_or_gb(units)[0]
    per = [model_state_bytes_per_gpu(psi, nd, z).total_bytes for z in range(4)]
    forms = ("16Ψ", f"4Ψ + 12Ψ/{nd}", f"2Ψ + 14Ψ/{nd}", f"16Ψ/{nd}")

    def fmt(x: float) -> str:
        return f"{bytes_in(x, name):,.4g} {name}"

    rows = " · ".join(
        ("**{}**" if z == k else "{}").format(
            f"{ZERO_STAGES[z].label} {forms[z]} = {fmt(per[z])}"
            + (f" (saves {fmt(per[0] - per[z])})" if z else "")
        )
        for z in range(4)
    )
    return Question(
        key="saved",
        goal=GOALS[4],
        answer=bytes_in(per[0] - per[k], name),
        unit=name,
        prompt=f"Mixed-precision Adam keeps {get_recipe('mixed_adam').bytes_per_param} bytes per "
        "parameter (2 weights "
        f"+ 2 gradients + 12 optimizer). A **{billions:g}B**-parameter model trains data-parallel "
        "on "
        f"**N_d = {nd}** GPUs. How many {name} of model states per GPU does **ZeRO-{k}** save "
        "versus DDP?",
        explanation=f"Per GPU (`core.memory`): {rows}. Stage 1 shards the 12Ψ of optimizer state, "
        "stage 2 adds the "
        "gradients, stage 3 the weights.",
    )


def questions(seed: int, units: str = "decimal") -> tuple[Question, ...]:
    """The question set of one seed: every learning goal, parameters drawn by numpy's
    default_rng(seed).
    """
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise ValueError(f"seed={seed!r} must be a whole number ≥ 0; use e.g. 1")
    rng = np.random.default_rng(int(seed))
    ring = _ring(rng, units)
    dp = _data_parallel(rng, int(seed))
    tp = _tensor_parallel(rng, units)
    pipe = _pipeline(rng)
    return (*ring, dp, *tp, *pipe, _zero(rng, units))


def score(qs: tuple[Question, ...], answers: dict) -> tuple[int, int]:
    """(correct, answered) for one set of answers keyed by question key."""
    verdicts = [check(q, answers.get(q.key)) for q in qs]
    return sum(v is True for v in verdicts), sum(v is not None for v in verdicts)
