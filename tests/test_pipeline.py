"""Pipeline simulator: orders, timings against the papers' closed forms, memory, errors, export.

Expected values come from the papers' formulas (docs/notes/pipeline.md §3), from orders
written out by hand from the published recipes, or from hand arithmetic in the comments.
"""

import dataclasses
import io
import itertools
import json

import numpy as np
import pandas as pd
import pytest

from core.pipeline import (
    BUBBLE_METRICS,
    CLOSED_FORMS,
    SCHEDULES,
    ScheduleOrder,
    bubble_ratio,
    bubble_share,
    bubble_sweep,
    build_order,
    closed_form_bubble_share,
    closed_form_idle_s,
    closed_form_makespan_s,
    closed_form_peak_activations,
    effective_v,
    format_action,
    simulate,
    simulate_order,
    span_bubble,
    to_chrome_trace,
    to_csv,
    to_dataframe,
)
from core.schedule_names import check_chunks

# Durations per full stage: (t_F, t_I, t_W); a full backward t_B = t_I + t_W.
DURATIONS = [(1.0, 1.0, 1.0), (1.0, 0.5, 0.5), (2.0, 1.5, 1.0), (0.5, 2.0, 0.25), (1.0, 1.0, 3.0)]


def order_strings(schedule, p, m, v=1):
    order = build_order(schedule, p, m, v)
    return [[format_action(a) for a in acts] for acts in order.rank_actions]


# ---------------------------------------------------------------- worked example (section 6)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_worked_example_p4_m8(schedule):
    # P = 4, M = 8, t_F = 1, t_B = 2: makespan (8 + 4 - 1) x 3 = 33, busy 8 x 3 = 24, idle 9.
    r = simulate(schedule, 4, 8, forward_s=1.0, backward_input_s=1.0, backward_weight_s=1.0)
    assert r.makespan_s == 33.0
    assert r.busy_s == (24.0,) * 4 and r.idle_s == (9.0,) * 4
    assert r.bubble_fraction == pytest.approx(3 / 11)  # metric A = 9/33
    assert r.bubble_ratio == pytest.approx(3 / 8)  # metric B = 9/24
    assert bubble_share(r) == pytest.approx(3 / 11)
    assert span_bubble(r) == pytest.approx(9 / 33)  # rank 0's span is the whole step


# ---------------------------------------------------------------- closed forms over a grid


@pytest.mark.parametrize("f,i,w", DURATIONS)
def test_gpipe_and_1f1b_makespan_formula(f, i, w):
    # GPipe / 1F1B: T = (M + P - 1)(t_F + t_B), for any M, including M < P.
    for p, m in itertools.product([1, 2, 3, 5, 8], [1, 2, 3, 7, 16]):
        for schedule in ("gpipe", "1f1b"):
            r = simulate(schedule, p, m, forward_s=f, backward_input_s=i, backward_weight_s=w)
            assert r.makespan_s == pytest.approx((m + p - 1) * (f + i + w)), (schedule, p, m)
            assert r.bubble_fraction == pytest.approx((p - 1) / (m + p - 1))
            assert max(r.idle_s) == pytest.approx((p - 1) * (f + i + w))


@pytest.mark.parametrize("f,i,w", DURATIONS)
def test_interleaved_makespan_formula(f, i, w):
    # Megatron: T = (vM + P - 1)(t_F + t_B)/v, bubble (P-1)/(vM + P - 1), B = (P-1)/(vM).
    for p, k, v in itertools.product([1, 2, 3, 4, 6], [1, 2, 3], [2, 3, 4]):
        m = k * p
        r = simulate("interleaved_1f1b", p, m, v, f, i, w)
        assert r.makespan_s == pytest.approx((v * m + p - 1) * (f + i + w) / v), (p, m, v)
        assert r.bubble_fraction == pytest.approx((p - 1) / (v * m + p - 1))
        assert r.bubble_ratio == pytest.approx((p - 1) / (v * m))


def test_looped_bfs_matches_interleaved_when_m_at_least_p():
    # Derived: with M >= P a chunk's forwards never wait on the previous chunk, so only the
    # P-1 chunk-op fill and drain remain, as in interleaved 1F1B.
    for p, m, v in itertools.product([1, 2, 4], [4, 5, 9], [1, 2, 3]):
        r = simulate("looped_bfs", p, m, v, 1.0, 0.75, 0.5)
        assert r.makespan_s == pytest.approx((v * m + p - 1) * 2.25 / v)


@pytest.mark.parametrize(
    "f,i,w", [(1.0, 1.0, 1.0), (2.0, 1.5, 1.0), (3.0, 1.0, 0.5), (1.0, 2.0, 1.0)]
)
def test_zb_h1_idle_formula(f, i, w):
    # Qi et al. (ZB-H1): idle per rank (P-1)(t_F + t_I - t_W), for M >= P and t_W <= t_F, t_I.
    for p, m in itertools.product([1, 2, 3, 4, 6], [6, 8, 13]):
        r = simulate("zb_h1", p, m, 1, f, i, w)
        idle = (p - 1) * (f + i - w)
        assert r.idle_s == pytest.approx((idle,) * p), (p, m)
        assert r.makespan_s == pytest.approx(m * (f + i + w) + idle)


def test_zb_h1_bubble_is_a_third_of_1f1b_at_equal_times():
    # zero-bubble README: bubble rate (p-1)/m for 1F1B and (p-1)/(3m) for ZB-H1 (metric B).
    for p, m in [(4, 8), (8, 16), (3, 12)]:
        assert simulate("1f1b", p, m).bubble_ratio == pytest.approx((p - 1) / m)
        assert simulate("zb_h1", p, m).bubble_ratio == pytest.approx((p - 1) / (3 * m))


def test_zb_h1_cannot_hide_a_weight_grad_longer_than_forward():
    # Outside the formula's assumption (t_W > t_F) the deferred W no longer fits the gap.
    r = simulate("zb_h1", 4, 8, 1, 1.0, 1.0, 2.0)
    assert max(r.idle_s) > (4 - 1) * (1.0 + 1.0 - 2.0)
    assert closed_form_idle_s("zb_h1", 4, 8, 1, 1.0, 1.0, 2.0) is None


@pytest.mark.parametrize("p,m", [(1, 2), (2, 4), (3, 7), (4, 8), (4, 16), (6, 13)])
def test_zb_v_is_zero_bubble_inside_every_rank(p, m):
    # Qi et al. sec. 6: with t_F = t_I = t_W and M >= 2P every rank is busy from its first op to
    # its last (metric C = 0). A > 0 only from the start-up stagger: a chunk forward (t_F / 2)
    # per rank, so T = busy + (P-1) t_F/2 with busy = 2 chunks x M x 3 ops x t_F/2.
    r = simulate("zb_v", p, m, 2, 1.5, 1.5, 1.5)
    assert r.span_bubble == pytest.approx(0.0, abs=1e-12)
    assert r.makespan_s == pytest.approx(3 * m * 1.5 + (p - 1) * 0.75)
    assert r.bubble_fraction == pytest.approx((p - 1) / (6 * m + p - 1))


@pytest.mark.parametrize(
    "f,w,o", [(1.0, 1.0, 3.0), (1.0, 1.0, 2.0), (2.0, 1.0, 4.0), (1.0, 0.5, 2.5), (1.0, 0.5, 2.0)]
)
def test_dualpipe_v_idle_formula(f, w, o):
    # DualPipe README: bubble (PP/2 - 1)(F&B + B - 3W) in chunk times, PP = 2P stages, so
    # (P-1)(o + t_B - 3 t_W)/2 per full-stage times; stated for t_F = t_I (here) >= t_W.
    for p, extra in itertools.product([1, 2, 3, 4, 6], [0, 1, 5]):
        m = 2 * p + extra
        r = simulate("dualpipe_v", p, m, 2, f, f, w, overlap_s=o)
        assert max(r.idle_s) == pytest.approx((p - 1) * (o + f + w - 3 * w) / 2), (p, m)


def test_overlap_default_is_no_gain():
    # overlap_s defaults to t_F + t_I + t_W: the pair takes as long as F then B.
    a = simulate("dualpipe_v", 4, 10, 2, 1.0, 1.0, 0.5)
    b = simulate("dualpipe_v", 4, 10, 2, 1.0, 1.0, 0.5, overlap_s=2.5)
    assert a.makespan_s == b.makespan_s and a.overlap_s == 2.5


def test_closed_form_functions():
    assert closed_form_bubble_share("gpipe", 8, 8) == pytest.approx(7 / 15)  # self-check M = 8
    assert closed_form_bubble_share("1f1b", 8, 64) == pytest.approx(7 / 71)  # and M = 64
    assert closed_form_bubble_share("interleaved_1f1b", 4, 8, 2) == pytest.approx(3 / 19)
    assert closed_form_idle_s("1f1b", 4, 8, 1, 1.0, 1.0, 1.0) == 9.0
    assert closed_form_idle_s("zb_h1", 4, 8) == 3.0  # (P-1)(1+1-1)
    assert closed_form_idle_s("dualpipe_v", 4, 8, 2) == 3.0  # 3 (1.5+1-1.5)
    assert closed_form_idle_s("zb_v", 4, 8, 2, 1.0, 1.0, 2.0) is None  # needs F = I = W
    assert closed_form_idle_s("dualpipe_v", 4, 6, 2) is None  # needs M >= 2P
    assert closed_form_makespan_s("gpipe", 4, 8, 1, 1.0, 1.0, 1.0) == 33.0
    assert closed_form_bubble_share("zb_v", 4, 4, 2) is None
    assert set(CLOSED_FORMS) == set(SCHEDULES)
    assert set(BUBBLE_METRICS) == {"share", "ratio", "span"}


def test_metrics_a_and_b_convert():
    for name in SCHEDULES:
        info = SCHEDULES[name]
        v = info.allowed_v[0]
        r = simulate(name, 3, 6 if info.placement == "v" else 3, v, 1.0, 0.7, 0.4)
        a = bubble_share(r)
        assert bubble_ratio(r) == pytest.approx(a / (1 - a))
        assert r.bubble_fraction == pytest.approx(sum(r.idle_s) / (3 * r.makespan_s))


# ---------------------------------------------------------------- peak activations


@pytest.mark.parametrize("p,m", [(1, 1), (2, 5), (4, 8), (4, 3), (6, 12)])
def test_peak_activations_gpipe_vs_1f1b(p, m):
    # GPipe holds all M on every rank; 1F1B holds P - r on rank r (capped by M).
    assert simulate("gpipe", p, m).peak_activations == (m,) * p
    assert simulate("1f1b", p, m).peak_activations == tuple(min(p - r, m) for r in range(p))


def test_peak_activations_other_schedules():
    p = 4
    # Interleaved: warm-up 2(P-1-r) + (v-1)P forwards + 1 in flight, capped at vM (Megatron).
    assert simulate("interleaved_1f1b", p, 8, 2).peak_activations == (11, 9, 7, 5)
    # P = 4, M = 4, v = 3: 2(3-r) + 8 + 1 = 15, 13, 11, 9, capped at vM = 12.
    assert simulate("interleaved_1f1b", p, 4, 3).peak_activations == (12, 12, 11, 9)
    assert simulate("looped_bfs", p, 5, 2).peak_activations == (10,) * p  # all vM
    assert simulate("zb_h1", p, 8).peak_activations == (p,) * p  # P, held to W
    assert simulate("zb_v", p, 8, 2).peak_activations == (2 * p,) * p  # 2P chunks
    assert simulate("dualpipe_v", p, 8, 2).peak_activations == (2 * p + 1,) * p  # PP + 1
    assert simulate("zb_v", p, 8, 2).peak_activation_stages == (4.0,) * p
    for name, v in [("interleaved_1f1b", 2), ("zb_h1", 1), ("dualpipe_v", 2), ("gpipe", 1)]:
        got = simulate(name, p, 8, v).peak_activations
        assert closed_form_peak_activations(name, p, 8, v) == got


# ---------------------------------------------------------------- orders written out by hand


def test_1f1b_order_p4_m8():
    ranks = order_strings("1f1b", 4, 8)
    assert ranks[0] == [
        "0F0",
        "0F1",
        "0F2",
        "0F3",
        "0B0",
        "0F4",
        "0B1",
        "0F5",
        "0B2",
        "0F6",
        "0B3",
        "0F7",
        "0B4",
        "0B5",
        "0B6",
        "0B7",
    ]
    assert ranks[3] == [x for k in range(8) for x in (f"3F{k}", f"3B{k}")]


def test_gpipe_and_interleaved_orders():
    assert order_strings("gpipe", 2, 3)[1] == ["1F0", "1F1", "1F2", "1B0", "1B1", "1B2"]
    # Megatron, P = 2, M = 2, v = 2, rank 1: warm-up 2(P-1-r) + (v-1)G = 0 + 2 forwards from the
    # table (mb, chunk) = (0,0) (1,0) (0,1) (1,1); backward table swaps chunk c -> v-1-c.
    assert order_strings("interleaved_1f1b", 2, 2, 2)[1] == [
        "1F0",
        "1F1",
        "3F0",
        "3B0",
        "3F1",
        "3B1",
        "1B0",
        "1B1",
    ]


def test_zb_h1_order_p3_m4():
    # Rank 1: warm-up P-1-r = 1 forward, r = 1 round of (F, I) with W postponed, then (F, I, W)
    # rounds, then (I, W) after the last F, then the leftover W.
    assert order_strings("zb_h1", 3, 4)[1] == [
        "1F0",
        "1F1",
        "1I0",
        "1F2",
        "1I1",
        "1W0",
        "1F3",
        "1I2",
        "1W1",
        "1I3",
        "1W2",
        "1W3",
    ]


def test_zb_v_order_p2_m4():
    # Hand-executed from torch ScheduleZBVZeroBubble: rank 0 holds stages 0 and 3.
    assert order_strings("zb_v", 2, 4, 2)[0] == [
        "0F0",
        "0F1",
        "0F2",
        "3F0",
        "3I0",
        "3W0",
        "3F1",
        "3I1",
        "3W1",
        "0F3",
        "0I0",
        "0W0",
        "3F2",
        "3I2",
        "3W2",
        "0I1",
        "0W1",
        "3F3",
        "3I3",
        "3W3",
        "0I2",
        "0W2",
        "0I3",
        "0W3",
    ]


def test_dualpipe_v_order_p2_m4():
    # Hand-executed from the eight phases of deepseek-ai/DualPipe dualpipe/dualpipev.py (P 2, M 4).
    ranks = order_strings("dualpipe_v", 2, 4, 2)
    assert ranks[0] == [
        "0F0",
        "0F1",
        "0F2",
        "3F0",
        "3I0",
        "3W0",
        "3F1",
        "(0F3;3B1)",
        "(3F2;0B0)",
        "3B2",
        "(3F3;0B1)",
        "3B3",
        "0I2",
        "0W2",
        "0I3",
        "0W3",
    ]
    assert ranks[1] == [
        "1F0",
        "2F0",
        "1F1",
        "2F1",
        "1F2",
        "2B0",
        "(2F2;1B0)",
        "(1F3;2B1)",
        "(2F3;1B1)",
        "2B2",
        "1B2",
        "2I3",
        "1I3",
        "2W3",
        "1W3",
    ]


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_every_order_is_complete(name):
    # Each (stage, mb) appears once as F and once as B, or once as I and once as W.
    info = SCHEDULES[name]
    for p, v in itertools.product([1, 2, 3, 5], info.allowed_v[:2]):
        m = 2 * p + 1 if info.placement == "v" else (2 * p if name == "interleaved_1f1b" else 3)
        order = build_order(name, p, m, v)
        seen = {}
        for r, acts in enumerate(order.rank_actions):
            for a in acts:
                subs = [("F",) + a[1:3], ("B",) + a[3:5]] if a[0] == "FB" else [a]
                for kind, s, b in subs:
                    assert order.stage_to_rank[s] == r
                    seen[(kind, s, b)] = seen.get((kind, s, b), 0) + 1
        for s, b in itertools.product(
            range(v * p if info.placement == "loop" else 2 * p), range(m)
        ):
            assert seen.pop(("F", s, b)) == 1
            assert seen.pop(("B", s, b), 0) + seen.get(("I", s, b), 0) == 1
            assert seen.pop(("I", s, b), 0) == seen.pop(("W", s, b), 0)
        assert not seen


def test_registry_split_flag_matches_ops():
    for name, info in SCHEDULES.items():
        m = 8 if info.placement == "v" else 4
        kinds = {op.kind for op in simulate(name, 2, m, info.allowed_v[0]).ops}
        assert ("W" in kinds) == info.splits_backward, name
        assert info.label and info.constraints and info.source


# ---------------------------------------------------------------- durations and latency


def test_chunk_ops_take_one_vth_of_a_stage():
    r = simulate(
        "interleaved_1f1b", 2, 4, 4, forward_s=2.0, backward_input_s=1.0, backward_weight_s=3.0
    )
    d = r.ops.end_s - r.ops.start_s
    assert np.allclose(d[r.ops.kind == 0], 0.5) and np.allclose(d[r.ops.kind == 1], 1.0)
    z = simulate("dualpipe_v", 2, 4, 2, 1.0, 1.0, 1.0, overlap_s=2.0)
    pairs = z.ops.overlapped
    assert pairs.sum() > 0 and np.allclose((z.ops.end_s - z.ops.start_s)[pairs], 1.0)


def test_gpipe_p2p_latency_adds_two_trips():
    # Forwards reach the last rank after (P-1)(t_F + d); backwards return after (P-1)(t_B + d):
    # T = (M + P - 1)(t_F + t_B) + 2(P - 1) d.
    for p, m, d in [(4, 8, 0.25), (3, 2, 1.0), (1, 4, 5.0)]:
        r = simulate("gpipe", p, m, p2p_s=d)
        assert r.makespan_s == pytest.approx((m + p - 1) * 3 + 2 * (p - 1) * d)


def test_v_placement_has_no_latency_at_the_turn():
    # Stages P-1 and P live on the same rank: rank P-1 starts F(P, 0) right after F(P-1, 0).
    p = 3
    r = simulate("zb_v", p, 6, 2, p2p_s=10.0)
    ops = r.ops
    first = {
        (int(s), int(b)): (t0, t1)
        for s, b, t0, t1, k in zip(ops.stage, ops.microbatch, ops.start_s, ops.end_s, ops.kind)
        if k == 0
    }
    assert first[(p, 0)][0] == first[(p - 1, 0)][1]
    assert first[(1, 0)][0] == first[(0, 0)][1] + 10.0


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "args,expected",
    [
        (
            ("interleaved_1f1b", 4, 6, 2),
            "interleaved_1f1b needs M a multiple of P: M=6, P=4; use M=8",
        ),
        (
            ("interleaved_1f1b", 4, 8, 1),
            "interleaved_1f1b allows v from 2 to 8 (model chunks per rank): v=1; use v=2",
        ),
        (("zb_v", 4, 6, 2), "zb_v needs M ≥ 2P micro-batches to fill the V: M=6, P=4; use M=8"),
        (
            ("dualpipe_v", 3, 1, 2),
            "dualpipe_v needs M ≥ 2P micro-batches to fill the V: M=1, P=3; use M=6",
        ),
        (("zb_v", 4, 8, 1), "zb_v allows v = 2 (model chunks per rank): v=1; use v=2"),
        (("dualpipe_v", 4, 8, 3), "v=3; use v=2"),
        (("gpipe", 4, 8, 2), "gpipe allows v = 1 (model chunks per rank): v=2; use v=1"),
        (("1f1b", 0, 8), "P (pipeline ranks)=0 must be a whole number ≥ 1; use 1 or more"),
        (("1f1b", 4, 0), "M (micro-batches)=0 must be a whole number ≥ 1; use 1 or more"),
        (("1f1b", 4, 2.5), "M (micro-batches)=2.5 must be a whole number ≥ 1; use 1 or more"),
        (("pipedream", 4, 8), "schedule='pipedream' is unknown: use one of gpipe, 1f1b"),
        (("gpipe", 1000, 1000), "2,000,000 ops, over the 1,000,000-op limit"),
    ],
)
def test_input_rules_state_numbers_rule_and_fix(args, expected):
    with pytest.raises(ValueError) as err:
        simulate(*args)
    assert expected in str(err.value)


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        ({"forward_s": 0.0}, "forward_s=0.0 must be a finite number > 0; use e.g. 1.0 seconds"),
        ({"backward_input_s": -1.0}, "backward_input_s=-1.0 must be a finite number > 0"),
        ({"backward_weight_s": float("inf")}, "backward_weight_s=inf must be a finite number > 0"),
        ({"p2p_s": -0.5}, "p2p_s=-0.5 must be a finite number ≥ 0; use e.g. 0.0 seconds"),
        ({"overlap_s": 0}, "overlap_s=0 must be a finite number > 0"),
        ({"forward_s": "1"}, "forward_s='1' must be a finite number > 0"),
    ],
)
def test_durations_are_validated(kwargs, expected):
    with pytest.raises(ValueError, match=expected):
        simulate("1f1b", 2, 2, **kwargs)


def test_deadlock_names_rank_and_op():
    # Rank 1 runs B0 before its own F0: it waits on itself, and rank 0 waits on rank 1.
    order = ScheduleOrder(
        schedule="bad",
        num_ranks=2,
        num_microbatches=1,
        num_chunks=1,
        stage_to_rank=(0, 1),
        rank_actions=((("F", 0, 0), ("B", 0, 0)), (("B", 1, 0), ("F", 1, 0))),
    )
    with pytest.raises(ValueError, match="deadlock") as err:
        simulate_order(order)
    msg = str(err.value)
    assert "rank 1 waits forever at 1B0 for 1F0" in msg
    assert "rank 0 waits forever at 0B0 for 1B0/1I0" in msg and "2 of 2 ranks stuck" in msg


def test_deadlock_weight_before_input_grad_and_missing_op():
    order = ScheduleOrder(
        schedule="bad",
        num_ranks=1,
        num_microbatches=1,
        num_chunks=1,
        stage_to_rank=(0,),
        rank_actions=((("F", 0, 0), ("W", 0, 0), ("I", 0, 0)),),
    )
    with pytest.raises(ValueError, match="rank 0 waits forever at 0W0 for 0I0"):
        simulate_order(order)
    # Stage 1's F of mb 1 is missing from rank 1's list: rank 1 never gets past ...
    order = ScheduleOrder(
        schedule="bad",
        num_ranks=2,
        num_microbatches=2,
        num_chunks=1,
        stage_to_rank=(0, 1),
        rank_actions=(
            (("F", 0, 0), ("F", 0, 1), ("B", 0, 0), ("B", 0, 1)),
            (("F", 1, 0), ("B", 1, 0), ("B", 1, 1)),
        ),
    )
    with pytest.raises(ValueError, match="rank 1 waits forever at 1B1 for 1F1"):
        simulate_order(order)


# ---------------------------------------------------------------- result object and export


def test_result_is_frozen_and_ops_read_only():
    r = simulate("1f1b", 2, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.makespan_s = 0.0
    with pytest.raises(ValueError):
        r.ops.start_s[0] = 5.0
    op = r.ops[0]
    assert (op.rank, op.stage, op.chunk, op.microbatch, op.kind) == (0, 0, 0, 0, "F")
    assert (op.start_s, op.end_s, op.overlapped) == (0.0, 1.0, False)
    assert list(r.ops)[-1] == r.ops[len(r.ops) - 1]
    assert len(r.ops) == 8 and r.label == "1F1B"


def test_chunk_and_stage_fields():
    r = simulate("zb_v", 2, 4, 2)
    stages_on_rank = {(op.rank, op.stage, op.chunk) for op in r.ops}
    assert stages_on_rank == {(0, 0, 0), (0, 3, 1), (1, 1, 0), (1, 2, 1)}
    r = simulate("interleaved_1f1b", 2, 2, 3)
    assert {(op.rank, op.stage, op.chunk) for op in r.ops} == {
        (0, 0, 0),
        (0, 2, 1),
        (0, 4, 2),
        (1, 1, 0),
        (1, 3, 1),
        (1, 5, 2),
    }


def test_chrome_trace_structure():
    r = simulate("zb_h1", 3, 4, forward_s=2e-3, backward_input_s=1e-3, backward_weight_s=1e-3)
    trace = to_chrome_trace(r)
    json.dumps(trace)  # serialisable as is
    events = trace["traceEvents"]
    boxes = [e for e in events if e["ph"] == "X"]
    names = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    assert len(boxes) == len(r.ops) == 3 * 4 * 3
    assert sorted(e["tid"] for e in names) == [0, 1, 2]
    assert names[0]["args"]["name"] == "rank 0"
    first = boxes[0]  # rank 0's first op: F of mb 0, 0 to 2 ms
    assert (first["name"], first["tid"], first["pid"], first["ts"], first["dur"]) == (
        "F m0 c0",
        0,
        0,
        0.0,
        2000.0,
    )
    assert first["cat"] == "F" and first["args"]["microbatch"] == 0
    assert {e["name"].split()[0] for e in boxes} == {"F", "I", "W"}
    # Every box sits on its rank's track with its simulated start in microseconds.
    for e, op in zip(boxes, r.ops):
        assert e["tid"] == op.rank and e["ts"] == pytest.approx(op.start_s * 1e6)
        assert e["name"] == f"{op.kind} m{op.microbatch} c{op.chunk}"


def test_dataframe_and_csv():
    r = simulate("dualpipe_v", 2, 4, 2)
    df = to_dataframe(r)
    assert list(df.columns) == [
        "rank",
        "stage",
        "chunk",
        "microbatch",
        "kind",
        "start_s",
        "end_s",
        "duration_s",
        "overlapped",
    ]
    assert len(df) == len(r.ops)
    assert df["overlapped"].sum() == 2 * 6  # 3 + 3 pairs in the hand-written orders above
    back = pd.read_csv(io.StringIO(to_csv(r)))
    assert back.shape == df.shape
    assert np.allclose(back["end_s"], df["end_s"]) and list(back["kind"]) == list(df["kind"])


def test_bubble_sweep_skips_invalid_m_and_matches_formula():
    sw = bubble_sweep("interleaved_1f1b", 4, (2, 4, 6, 8, 16), num_chunks=2)
    assert sw.microbatches == (4, 8, 16)  # M = 2, 6 break "M a multiple of P"
    for m, a in zip(sw.microbatches, sw.simulated):
        assert a == pytest.approx(3 / (2 * m + 3))
    assert sw.curve_microbatches == tuple(range(1, 17))
    assert sw.curve[7] == pytest.approx(3 / 19)
    g = bubble_sweep("gpipe", 8, (8, 64))
    assert g.simulated == pytest.approx((7 / 15, 7 / 71))


@pytest.mark.parametrize(
    "schedule,v,expected",
    [
        ("interleaved_1f1b", 1, (2, "Interleaved: needs v ≥ 2, runs v = 2.")),
        ("interleaved_1f1b", 3, (3, "")),
        ("looped_bfs", 4, (4, "")),
        ("1f1b", 3, (1, "1F1B: one stage per rank, v unused.")),
        ("zb_v", 1, (2, "ZB-V: V placement, v forced to 2.")),
    ],
)
def test_effective_v_clamps_to_the_schedules_chunk_rule(schedule, v, expected):
    assert effective_v(schedule, v) == expected
    check_chunks(schedule, expected[0])  # the clamped v always passes the chunk rule


def test_short_labels_are_todays_url_values():
    short = {k: info.short_label for k, info in SCHEDULES.items()}
    assert short == {
        "gpipe": "GPipe",
        "1f1b": "1F1B",
        "interleaved_1f1b": "Interleaved",
        "zb_h1": "ZB-H1",
        "zb_v": "ZB-V",
        "dualpipe_v": "DualPipeV",
        "looped_bfs": "Looped BFS",
    }
    assert len(set(short.values())) == len(short)
    # The page lists them in this order (the bubble-vs-M figure assigns dashes by position).
    assert list(short) == [
        "gpipe",
        "1f1b",
        "interleaved_1f1b",
        "zb_h1",
        "zb_v",
        "dualpipe_v",
        "looped_bfs",
    ]
