"""One configuration, every path that shows it: the same bytes, seconds and verdicts.

Issue 13 ("Consistency, enforced"): a learner who reads a number on one page and checks it on
another must find it again. Each test evaluates one configuration through every core (and
figure) path that displays it and asserts equality between the paths. Where the app already
states a number by hand (the 70B seed, the ring's 1.75 GB), the hand value is asserted too.
"""

from __future__ import annotations

import pytest

from core import scenarios as cs
from core.data_parallel import DpJob, dp_step
from core.hardware import GPU_PRESETS, make_cluster
from core.memory import budget, memory_per_gpu, model_state_bytes_per_gpu
from core.model import preset
from core.parallel import Layout, group_span
from core.planner import capacity_fits, evaluate
from core.planner.comm import group_collective_s
from core.quiz import questions
from core.tensor_parallel import link_comparison, tp_comm_plan
from core.training import RESERVE_FRACTION, Efficiency, Training
from core.units import format_bytes
from figures.memory.run import Run, Split, compute
from figures.planner.charts import memory_figure
from figures.planner.explain import headline_metrics as planner_metrics

H100 = 81_559 * 2**20  # nvidia-smi's total for an "80 GB" H100 (core/hardware.py)
SEQ = 4096


def _memory_page(model: str, dp: int, zero: int, rc: str, units: str = "decimal") -> dict:
    run = Run(
        model=model,
        seq=SEQ,
        recipe="mixed_adam",
        flash=True,
        gpu="H100 SXM",
        reserve_pct=100 * RESERVE_FRACTION,
        units=units,
    )
    return compute(run, Split(dp=dp, tp=1, pp=1, zero=str(zero), mb=1, rc=rc, sp=False))


def _planner(model: str, dp: int, zero: int, rc: str):
    cluster = make_cluster(num_nodes=dp // 8)
    training = Training(global_batch=dp, seq_len=SEQ, recompute=rc)
    return evaluate(preset(model), cluster, Layout(dp=dp, zero_stage=zero), training)


# --- memory: memory page, planner, scenarios, quiz ---------------------------------------------


@pytest.mark.parametrize("rc", ["full", "none"])
def test_70b_zero3_on_16_h100_is_one_number_and_one_verdict_everywhere(rc):
    page = _memory_page("Llama-2 70B", 16, 3, rc)
    plan = _planner("Llama-2 70B", 16, 3, rc)
    scen = cs.size_70b()
    # The bytes training holds on the fullest GPU.
    assert page["ch"].total_bytes == plan.memory.total_bytes == scen.budget(rc).training_bytes
    # One reserve: the same capacity, the same fraction, the same bytes.
    assert RESERVE_FRACTION == plan.training.memory_headroom == scen.reserve_bytes / H100
    assert plan.capacity_bytes == scen.capacity_bytes == GPU_PRESETS["H100 SXM"].hbm_bytes == H100
    used = budget(plan.memory.total_bytes, H100, RESERVE_FRACTION).used_bytes
    assert used == pytest.approx(scen.used_bytes(rc), rel=1e-12)
    # The same verdict: the 70B seed is over by 3.2 GB with full recompute, far over without.
    verdicts = {
        "memory page": page["metrics"][1]["value"] == "fits",
        "planner": plan.fits,
        "planner capacity_fits": capacity_fits(plan.cluster, plan.training, plan.memory),
        "scenario": scen.fits(rc),
    }
    assert set(verdicts.values()) == {False}, verdicts
    # Metric, bar top and planner metric show the same number (training + reserve).
    shown = format_bytes(used, "decimal")
    assert page["metrics"][0]["value"] == shown
    assert dict((m[0], m[1]) for m in planner_metrics(plan, "decimal"))[
        "Memory per GPU (fullest)"
    ] == (shown)
    zero3 = next(a for a in page["bars"]["layout"]["annotations"] if a.get("x") == "ZeRO-3")
    assert zero3["text"] == f"OOM · {shown}"
    tops = [a for a in memory_figure(plan, "decimal")["layout"]["annotations"] if "·" in a["text"]]
    assert tops[0]["text"] == f"OOM · {shown}"


def test_13b_ddp_vs_full_shard_agrees_between_scenario_memory_page_and_planner():
    scen = cs.ddp_vs_fsdp()
    for zero, row in ((0, scen.ddp), (3, scen.fsdp)):
        page = _memory_page("Llama-2 13B", 8, zero, "none")
        plan = _planner("Llama-2 13B", 8, zero, "none")
        assert page["ch"].total_bytes == plan.memory.total_bytes == row.total_bytes
        used = format_bytes(scen.budget(row).used_bytes, "decimal")
        assert page["metrics"][0]["value"] == used
        assert (page["metrics"][1]["value"] == "fits") == plan.fits == scen.fits(row)
    assert not scen.fits(scen.ddp) and scen.fits(scen.fsdp)


def test_quiz_zero_savings_equal_the_memory_cores_states():
    for seed in range(1, 40):
        q = next(q for q in questions(seed, "decimal") if q.key == "saved")
        # Rebuild the question's model from its prompt: "A **13B**-parameter model ... N_d = 8".
        billions = float(q.prompt.split("**")[1].rstrip("B"))
        nd = int(q.prompt.split("**N_d = ")[1].split("**")[0])
        k = int(q.prompt.split("**ZeRO-")[1][0])
        psi = round(billions * 1e9)
        ddp = model_state_bytes_per_gpu(psi, nd, 0).total_bytes
        zk = model_state_bytes_per_gpu(psi, nd, k).total_bytes
        assert q.answer == pytest.approx((ddp - zk) / 1e9, rel=1e-12)
        # ... and the memory core's per-GPU result for a bare count holds the same states.
        from core.model import ParamsOnly

        r = memory_per_gpu(
            ParamsOnly(num_params=psi), Layout(dp=nd, zero_stage=k), Training(global_batch=nd)
        )
        assert r.states_bytes == zk


# --- units: the course's numbers at the defaults -----------------------------------------------


def test_default_units_show_the_course_numbers():
    from app_pages.common import Settings
    from core.units import ByteSystem

    assert Settings().memory_units is ByteSystem.DECIMAL
    # ring: 2·S·(N−1)/N = 1.75 GB for 1 GB on 8 GPUs; 70B × 16 B ≈ 1.1 TB; ZeRO-3 on 16: 70 GB
    assert format_bytes(2 * 1e9 * 7 / 8, Settings().memory_units) == "1.75 GB"
    assert format_bytes(cs.size_70b().states_bytes, Settings().memory_units) == "1.12 TB"
    assert format_bytes(cs.size_70b().states_per_gpu_bytes, Settings().memory_units) == "70 GB"


def test_memory_page_metrics_use_one_unit_system():
    for units in ("decimal", "binary"):
        page = _memory_page("Llama-2 13B", 8, 3, "none", units)
        values = [m["value"] for m in page["metrics"] if m["label"] != "Verdict"]
        binary = ["iB" in v for v in values]
        assert binary == [units == "binary"] * len(values), values
        deltas = [m["delta"] for m in page["metrics"] if m.get("delta")]
        assert all(("iB" in d) == (units == "binary") for d in deltas), deltas


# --- seconds: DP page vs planner DP sync, TP page vs planner TP time ----------------------------


def _tp_paths(tp: int, model: str = "Llama-2 7B") -> tuple[float, float]:
    """One layer's TP communication (forward + backward) on NVLink: TP page vs planner."""
    m = preset(model)
    page = link_comparison(
        m, GPU_PRESETS["H100 SXM"], tp=tp, micro_batch=1, seq_len=SEQ, links=("NVLink 4",)
    )[0].comm_s
    cluster = make_cluster(num_nodes=1)
    lay = Layout(dp=8 // tp, tp=tp)
    span = group_span(lay.dims, "tp", cluster)
    plan = tp_comm_plan(m, tp=tp, micro_batch=1, seq_len=SEQ)
    eff = Training(global_batch=8 // tp).efficiency
    each = {
        k: group_collective_s(k, span, plan.message_bytes, cluster, eff)
        for k in ("all_reduce", "reduce_scatter", "all_gather")
    }
    planner = sum(n * each[k] for d in (plan.forward, plan.backward) for k, n in d.items())
    return page, planner


@pytest.mark.parametrize("tp", [2, 8])
def test_tp_page_and_planner_time_one_layer_alike(tp):
    page, planner = _tp_paths(tp)
    assert page == pytest.approx(planner, rel=1e-9)


def _dp_paths(num_nodes: int) -> tuple[float, float]:
    """One unbucketed gradient all-reduce of a 1.3B model, bf16 grads: DP page vs planner (the
    page runs NCCL's pick at the app's Efficiency)."""
    cluster = make_cluster(num_nodes=num_nodes)
    job = DpJob(
        num_params=1.3e9,
        tokens_per_gpu=2048,
        bucket_bytes=None,
        all_reduce="NCCL",
        efficiency=Efficiency(),
    )
    page = dp_step(job, cluster).comm_s
    lay = Layout(dp=cluster.num_gpus)
    span = group_span(lay.dims, "dp", cluster)
    planner = group_collective_s("all_reduce", span, job.grad_bytes, cluster, Efficiency())
    return page, planner


@pytest.mark.parametrize("num_nodes", [1, 8])
def test_dp_page_and_planner_sync_one_all_reduce_alike(num_nodes):
    page, planner = _dp_paths(num_nodes)
    assert page == pytest.approx(planner, rel=1e-9)


def test_a_planner_warning_states_the_metrics_number():
    plan = _planner("Llama-2 70B", 16, 3, "full")  # the seed: OOM by 3.2 GB at the 10 % reserve
    used = budget(plan.memory.total_bytes, H100, RESERVE_FRACTION).used_bytes
    (warning,) = [w for w in plan.warnings if w.startswith("does not fit")]
    assert f"does not fit: {format_bytes(used, 'decimal')} per GPU" in warning
    assert "> 85.5 GB of HBM" in warning  # 81,559 MiB


@pytest.mark.parametrize(
    "name, tp, dp, cp, ep",
    [
        ("Mixtral 8x7B", 1, 8, 1, 8),
        ("Mixtral 8x7B", 2, 4, 2, 4),
        ("Qwen3-30B-A3B", 1, 16, 1, 16),
        ("Qwen3-235B-A22B", 4, 8, 2, 16),
        ("DeepSeek-V3", 8, 16, 2, 32),
    ],
)
def test_expert_parallel_states_equal_the_memory_pages(name, tp, dp, cp, ep):
    """core.expert_parallel.ep_memory (the EP page) and core.memory (the memory page) give the same
    model-state bytes for one layout: ZeRO-1, ETP = TP, PP = 1, mixed Adam."""
    from core.expert_parallel import ep_memory, moe_preset
    from core.expert_parallel.spec import any_preset

    e = ep_memory(moe_preset(name), ep=ep, etp=tp, tp=tp, pp=1, dp=dp, cp=cp)
    lay = Layout(dp=dp, tp=tp, cp=cp, ep=ep, zero_stage=1)
    m = memory_per_gpu(any_preset(name), lay, Training(global_batch=dp, seq_len=SEQ))
    assert (e.dense_params_per_gpu, e.expert_params_per_gpu) == (
        m.params_on_gpu,
        m.expert_params_on_gpu,
    )
    assert (e.parameters_bytes, e.gradients_bytes, e.optimizer_bytes) == (
        m.parameters_bytes,
        m.gradients_bytes,
        m.optimizer_bytes,
    )
    assert e.edp == lay.edp


@pytest.mark.parametrize("cp, tp, pp", [(1, 8, 4), (8, 8, 4), (2, 1, 1), (4, 2, 2)])
def test_context_parallel_memory_equals_the_memory_pages_first_stage(cp, tp, pp):
    """core.context_parallel.cp_memory's activations (the CP page) are core.memory's first pipeline
    stage's; its states split the whole model evenly over TP × PP (the CP page's hand figure), so
    they equal core.memory's only where the first stage holds exactly 1 / (TP × PP) of it."""
    from core.context_parallel import cp_memory

    m, s = preset("Llama-3.1 70B"), 32768
    pt = cp_memory(m, seq_len=s, cp=cp, tp=tp, pp=pp, dp=2, recompute="selective")
    lay = Layout(dp=2, tp=tp, pp=pp, cp=cp, cp_kind="ring", zero_stage=1, sequence_parallel=True)
    tr = Training(global_batch=2 * pp, seq_len=s, recompute="selective", flash_attention=True)
    first = memory_per_gpu(m, lay, tr).stages[0]
    assert pt.activations_bytes == first.activations_bytes
    even = -(-m.num_params // (tp * pp))
    assert pt.states_bytes == 4 * even + 12 * -(-even // (2 * cp))  # ZeRO-1 over DP × CP
    if tp * pp == 1:  # one GPU holds the whole model: both count it whole
        assert pt.states_bytes == first.states_bytes
