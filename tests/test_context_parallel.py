"""Context parallelism: ring attention equals full attention; causal balance counted two ways;
traffic, overlap and memory against hand arithmetic (docs/notes/cp_ep.md)."""

import math

import numpy as np
import pytest

from core import context_parallel as cp
from core.hardware import gpu, link
from core.model import preset


def brute_attention(q, k, v, causal):
    """Row by row, the textbook softmax: an independent reference."""
    out = np.zeros_like(q)
    for i in range(q.shape[0]):
        keys = range(i + 1) if causal else range(q.shape[0])
        z = np.array([q[i] @ k[j] for j in keys]) / math.sqrt(q.shape[1])
        w = np.exp(z - z.max())
        out[i] = (w / w.sum()) @ v[list(keys)]
    return out


@pytest.mark.parametrize("causal", [True, False])
def test_full_attention_matches_the_textbook_loop(causal):
    q, k, v = cp.example_qkv(12, 4, seed=3)
    np.testing.assert_allclose(
        cp.full_attention(q, k, v, causal=causal), brute_attention(q, k, v, causal), atol=1e-12
    )


@pytest.mark.parametrize("layout", ["contiguous", "zigzag"])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("c", [1, 2, 3, 4, 8])
def test_ring_attention_equals_full_attention(layout, causal, c):
    q, k, v = cp.example_qkv(48, 8, seed=c)
    r = cp.ring_attention(q, k, v, cp=c, causal=causal, layout=layout)
    np.testing.assert_allclose(r.output, brute_attention(q, k, v, causal), atol=1e-12)
    assert r.max_abs_error < 1e-12
    assert r.hops_per_rank == c - 1
    # every rank sees every block exactly once; at step t the block of rank (r − t) mod C
    for rank in range(c):
        assert sorted(r.source[:, rank]) == list(range(c))
        assert r.source[1 % c, rank] == (rank - 1) % c


def test_token_layouts_by_hand():
    # S = 16, C = 4: zig-zag chunks of 2, rank 0 gets chunks 0 and 7, rank 3 chunks 3 and 4
    z = cp.token_owner_positions(16, 4, "zigzag")
    assert z[0].tolist() == [0, 1, 14, 15] and z[3].tolist() == [6, 7, 8, 9]
    assert cp.token_owner_positions(16, 4, "contiguous")[1].tolist() == [4, 5, 6, 7]


@pytest.mark.parametrize("c", [2, 4, 8])
def test_contiguous_causal_work_by_hand(c):
    s = 8 * c
    n = s // c
    b = cp.ring_balance(s, c, layout="contiguous", causal=True)
    # rank r: its own triangle n(n+1)/2 plus r full blocks n² from earlier ranks
    assert b.per_rank.tolist() == [n * (n + 1) // 2 + r * n * n for r in range(c)]
    crit = n * (n + 1) // 2 + (c - 1) * n * n
    total = c * n * (n + 1) // 2 + n * n * c * (c - 1) // 2
    assert b.critical_pairs == crit
    assert b.idle_share == pytest.approx(1 - total / (c * crit))


@pytest.mark.parametrize("c", [2, 4, 8, 16])
def test_zigzag_work_is_equal_on_every_rank_and_step(c):
    s = 4 * 2 * c
    m = s // (2 * c)
    b = cp.ring_balance(s, c, layout="zigzag", causal=True)
    assert b.pairs[0].tolist() == [m * m + m * (m + 1)] * c  # step 0: two triangles + one square
    assert (b.pairs[1:] == 2 * m * m).all()  # later steps: two m × m blocks' worth
    assert b.per_rank.max() - b.per_rank.min() <= m * m  # "equal within one block" (here: equal)
    assert b.idle_share == 0.0
    # and the total is the causal total S(S+1)/2
    assert b.pairs.sum() == s * (s + 1) // 2


@pytest.mark.parametrize("layout", ["contiguous", "zigzag"])
@pytest.mark.parametrize("causal", [True, False])
def test_closed_form_pairs_equal_the_masks_counted(layout, causal):
    q, k, v = cp.example_qkv(32)
    r = cp.ring_attention(q, k, v, cp=4, causal=causal, layout=layout)
    b = cp.ring_balance(32, 4, layout=layout, causal=causal)
    np.testing.assert_array_equal(r.pairs, b.pairs)


def test_causal_pairs_against_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b, c, d = sorted(rng.integers(0, 40, 2)) + sorted(rng.integers(0, 40, 2))
        brute = sum(1 for i in range(a, b) for j in range(c, d) if j <= i)
        assert cp.causal_pairs((int(a), int(b)), (int(c), int(d))) == brute


def test_gantt_steps_wait_for_the_slowest_rank():
    b = cp.ring_balance(16, 4, layout="contiguous")
    blocks = cp.gantt_blocks(b)
    starts = sorted({blk["start_s"] for blk in blocks})
    # n = 4: step 0 lasts 10 pairs (4·5/2), every later step 16 (a full block on the last rank)
    assert starts == [0.0, 10.0, 26.0, 42.0]
    assert all(blk["source"] == (blk["rank"] - blk["step"]) % 4 for blk in blocks)


def test_cp_must_split_the_sequence():
    with pytest.raises(ValueError, match=r"2·CP = 16 chunks.*divisible by 16"):
        cp.check_cp(24, 8, "zigzag")
    with pytest.raises(ValueError, match="CP = 3 chunks"):
        cp.ring_attention(*cp.example_qkv(10), cp=3, causal=True, layout="contiguous")


def test_ring_traffic_llama3_405b_by_hand():
    # S = 131,072, CP = 16, TP = 8 → 1 K/V head per rank, d = 128, bf16:
    # B_kv = 2 · 8192 tokens · 1 · 128 · 2 B = 4 MiB; ring sends 15 of them = 60 MiB
    t = cp.cp_traffic(preset("Llama-3.1 405B"), seq_len=131072, cp=16, tp=8)
    assert t.kv_block_bytes == 4 * 2**20
    assert t.ring_bytes == 60 * 2**20 == t.all_gather_bytes
    assert "CP to divide the 1 K/V heads" in t.ulysses_error and "ring attention" in t.ulysses_error


def test_ulysses_bytes_by_hand():
    # Llama-3.1 8B (32 q heads, 8 K/V heads, d 128), S = 32,768, CP = 8, TP = 1, bf16:
    # 2 · 7/8 · 4096 tokens · (32 + 8) · 128 · 2 B
    t = cp.cp_traffic(preset("Llama-3.1 8B"), seq_len=32768, cp=8)
    assert t.ulysses_error == ""
    assert t.ulysses_bytes == pytest.approx(2 * 7 / 8 * 4096 * 40 * 256)
    assert t.ring_bytes == 7 * 2 * 4096 * 8 * 128 * 2
    with pytest.raises(ValueError, match="Ulysses with CP=16"):
        cp.check_ulysses(16, 32, 8)


def test_overlap_threshold_h100_nvlink_mha():
    # F/B = 989.4e12 / 450e9 = 2,198.7 tokens per rank for MHA bf16, non-causal (paper: c ≥ F/B)
    m, g = preset("Llama-2 7B"), gpu("H100 SXM")
    s_c = cp.overlap_threshold_local_tokens(m, g, link("NVLink 4"), causal=False)
    assert s_c == pytest.approx(989.4e12 / 450e9)
    assert cp.overlap_threshold_local_tokens(m, g, link("NVLink 4")) == pytest.approx(2 * s_c)
    ib = cp.overlap_threshold_local_tokens(m, g, link("InfiniBand NDR"), causal=False)
    assert ib == pytest.approx(989.4e12 / 50e9)
    # the step-time model crosses there: 2,048 tokens per rank exposed, 2,304 hidden
    below = cp.step_times(m, g, link("NVLink 4"), seq_len=2048 * 4, cp=4, causal=False)
    above = cp.step_times(m, g, link("NVLink 4"), seq_len=2304 * 4, cp=4, causal=False)
    assert not below.hidden and above.hidden


def test_cp_divides_activations_by_hand():
    # Llama-3.1 70B (h 8192, 64 q heads, 8 K/V heads × 128, SwiGLU f 28672, no dropout), TP 8 + SP,
    # selective recompute, flash: per token (8h + 4·q + 4·kv + 6·f) / t bytes (docs/notes/memory.md
    # §3) = (65,536 + 32,768 + 4,096 + 172,032) / 8 = 34,304; s = 131,072 / 8 = 16,384 tokens;
    # 20 layers per stage (PP 4), 4 micro-batches in flight (1F1B)
    m = preset("Llama-3.1 70B")
    pt = cp.cp_memory(m, seq_len=131072, cp=8, tp=8, pp=4)
    assert pt.activations_bytes == 34304 * 16384 * 20 * 4
    half = cp.cp_memory(m, seq_len=65536, cp=4, tp=8, pp=4)
    assert half.activations_bytes == pt.activations_bytes  # same tokens per rank
    assert cp.max_seq_len(m, gpu("H100 SXM"), cp=8, tp=8, pp=4) >= 131072
    assert cp.max_seq_len(m, gpu("H100 SXM"), cp=1, tp=8, pp=4) < 131072
