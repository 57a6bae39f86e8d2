"""Published runs the planner was NOT fitted on, shown beside its prediction: they set no parameter
(docs/notes/planner.md §7). Llama 3 405B pre-training, Dubey et al. 2024 (arXiv:2407.21783)
Table 4, on H100s: the calibration (core.planner.calibration) saw only A100s."""

from __future__ import annotations

from dataclasses import dataclass

from core.hardware import make_cluster
from core.model import preset
from core.parallel import Layout
from core.planner.evaluate import Evaluation, evaluate
from core.training import RECOMPUTE_MODES, Training

LLAMA3_SOURCE = "Dubey et al. 2024 (arXiv:2407.21783) Table 4; layers 7 / 8 x 14 / 7 (Sec. 3.3.2)"


@dataclass(frozen=True, kw_only=True)
class ValidationRun:
    """A published layout and its measured utilisation."""

    name: str
    model: str  # preset name
    gpus: int
    tp: int
    pp: int
    dp: int
    seq_len: int
    global_batch: int
    layers_per_stage: tuple[int, ...]
    mfu: float  # as published (BF16 MFU)
    source: str


_SPLIT = (7,) + (8,) * 14 + (7,)
LLAMA3_405B = tuple(
    ValidationRun(
        name=f"Llama 3 405B, {g:,} H100",
        model="Llama-3.1 405B",
        gpus=g,
        tp=8,
        pp=16,
        dp=d,
        seq_len=8192,
        global_batch=2048,  # 16M tokens / 8,192
        layers_per_stage=_SPLIT,
        mfu=u,
        source=LLAMA3_SOURCE,
    )
    for g, d, u in ((8192, 64, 0.43), (16384, 128, 0.41))
)


@dataclass(frozen=True, kw_only=True, eq=False)
class ValidationRow:
    """The planner's fastest fitting variant of a published layout (schedule, v, recompute and the
    ZeRO stage are not in Table 4: it tries each), and the fastest ignoring memory."""

    run: ValidationRun
    fitting: Evaluation | None
    fastest: Evaluation

    @property
    def error(self) -> float:
        """Predicted MFU of the fitting variant (else the fastest) over the published, minus 1."""
        ev = self.fitting or self.fastest
        return ev.mfu / self.run.mfu - 1


def validate(run: ValidationRun) -> ValidationRow:
    """Evaluate the published TP, PP, DP and layer split on H100 nodes of 8 (NDR InfiniBand)."""
    model, cluster = preset(run.model), make_cluster(num_nodes=run.gpus // 8, gpus_per_node=8)
    evs = []
    for rc in RECOMPUTE_MODES:
        training = Training(global_batch=run.global_batch, seq_len=run.seq_len, recompute=rc)
        for sched, v in [("1f1b", 1)] + [
            ("interleaved_1f1b", v) for v in range(2, min(run.layers_per_stage) + 1)
        ]:
            for zero in (0, 1, 2):  # Sec. 3.3.2: FSDP sharding optimizer states and gradients
                lay = Layout(
                    dp=run.dp,
                    tp=run.tp,
                    pp=run.pp,
                    zero_stage=zero,
                    sequence_parallel=True,
                    schedule=sched,
                    num_chunks=v,
                    layers_per_stage=run.layers_per_stage,
                )
                evs.append(evaluate(model, cluster, lay, training))
    fits = [e for e in evs if e.fits]
    return ValidationRow(
        run=run,
        fitting=min(fits, key=lambda e: e.step_time_s, default=None),
        fastest=min(evs, key=lambda e: e.step_time_s),
    )
