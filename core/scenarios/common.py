"""What every scenario shares: page links, the memory page's defaults and its per-GPU result."""

from __future__ import annotations

from dataclasses import dataclass

from core.memory import MemoryResult, memory_per_gpu
from core.model import preset
from core.parallel import Layout
from core.training import RESERVE_FRACTION, Training

GPU = "H100 SXM"
RESERVE = RESERVE_FRACTION  # the one reserve of every page (core.training)
SEQ = 4096  # the memory page's default sequence length (micro-batch 1, flash attention on)


@dataclass(frozen=True, kw_only=True)
class Link:
    """A page and the URL parameters (widget key -> displayed label) that preload its widgets."""

    page: str
    label: str
    params: tuple[tuple[str, str], ...]  # dict(params) is st.page_link's query_params


def link(page: str, label: str, **params: str | int) -> Link:
    return Link(
        page=f"app_pages/{page}.py",
        label=label,
        params=tuple((k, str(v)) for k, v in params.items()),
    )


def page_memory(model: str, dp: int, zero: int, recompute: str = "none") -> MemoryResult:
    """The memory page's per-GPU result for one setting (its defaults: mb 1, s 4096, flash,
    1F1B).
    """
    return memory_per_gpu(
        preset(model),
        Layout(dp=dp, zero_stage=zero, micro_batch=1),
        Training(global_batch=dp, seq_len=SEQ, recompute=recompute, flash_attention=True),
    )
