"""Property tests: every op obeys the dependency rules; a brute-force simulator agrees."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.pipeline import SCHEDULES, build_order, simulate

FAST = settings(max_examples=60, deadline=None)
TIMES = st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0])


@st.composite
def cases(draw):
    """A valid (schedule, P, M, v) plus durations and latency."""
    name = draw(st.sampled_from(sorted(SCHEDULES)))
    info = SCHEDULES[name]
    p = draw(st.integers(1, 5))
    v = draw(st.sampled_from(info.allowed_v[:3]))
    if info.placement == "v":
        m = draw(st.integers(2 * p, 2 * p + 5))
    elif name == "interleaved_1f1b":
        m = p * draw(st.integers(1, 3))
    else:
        m = draw(st.integers(1, 9))
    f, i, w = draw(TIMES), draw(TIMES), draw(TIMES)
    lat = draw(st.sampled_from([0.0, 0.0, 0.1, 0.5]))
    overlap = draw(st.sampled_from([None, f + i + w, max(f, i + w)]))
    return name, p, m, v, f, i, w, lat, overlap


def brute_force(order, dur, lat):
    """Second, naive simulator: sweep ranks until nothing changes, dicts keyed by op tuples."""
    s2r = order.stage_to_rank
    last = len(s2r) - 1
    end, times, pos, clock = {}, {}, [0] * order.num_ranks, [0.0] * order.num_ranks

    def hop(a, b):
        return lat if s2r[a] != s2r[b] else 0.0

    def ready(kind, s, b):
        if kind == "F":
            if s == 0:
                return 0.0
            return end[("F", s - 1, b)] + hop(s - 1, s) if ("F", s - 1, b) in end else None
        if kind == "W":
            return end.get(("G", s, b))
        if ("F", s, b) not in end or (s < last and ("G", s + 1, b) not in end):
            return None
        return max(end[("F", s, b)], end[("G", s + 1, b)] + hop(s, s + 1) if s < last else 0.0)

    progress = True
    while progress:
        progress = False
        for r, acts in enumerate(order.rank_actions):
            while pos[r] < len(acts):
                a = acts[pos[r]]
                subs = [("F",) + a[1:3], ("B",) + a[3:5]] if a[0] == "FB" else [a]
                deps = [ready(*x) for x in subs]
                if any(d is None for d in deps):
                    break
                start = max([clock[r]] + deps)
                stop = start + dur[a[0]]
                for kind, s, b in subs:
                    times[(kind, s, b)] = (start, stop)
                    end[("G" if kind in "BI" else kind, s, b)] = stop
                clock[r], pos[r], progress = stop, pos[r] + 1, True
    return times


@FAST
@given(cases())
def test_simulator_agrees_with_brute_force(case):
    name, p, m, v, f, i, w, lat, overlap = case
    r = simulate(name, p, m, v, f, i, w, lat, overlap)
    o = f + i + w if overlap is None else overlap
    dur = {"F": f / v, "B": (i + w) / v, "I": i / v, "W": w / v, "FB": o / v}
    expected = brute_force(build_order(name, p, m, v), dur, lat)
    got = {(op.kind, op.stage, op.microbatch): (op.start_s, op.end_s) for op in r.ops}
    assert got.keys() == expected.keys()
    for key, (t0, t1) in expected.items():
        assert got[key] == pytest.approx((t0, t1)), key


@FAST
@given(cases())
def test_dependency_invariants_hold_for_every_op(case):
    name, p, m, v, f, i, w, lat, overlap = case
    r = simulate(name, p, m, v, f, i, w, lat, overlap)
    order = build_order(name, p, m, v)
    s2r, last, eps = order.stage_to_rank, len(order.stage_to_rank) - 1, 1e-9
    ops = {(op.kind, op.stage, op.microbatch): op for op in r.ops}
    grad = {(s, b): op for (k, s, b), op in ops.items() if k in "BI"}
    for (kind, s, b), op in ops.items():
        assert s2r[s] == op.rank
        if kind == "F" and s > 0:
            prev = ops[("F", s - 1, b)]
            assert op.start_s >= prev.end_s + (lat if s2r[s - 1] != op.rank else 0) - eps
        if kind in "BI":
            assert op.start_s >= ops[("F", s, b)].end_s - eps
            if s < last:
                nxt = grad[(s + 1, b)]
                assert op.start_s >= nxt.end_s + (lat if nxt.rank != op.rank else 0) - eps
        if kind == "W":
            assert op.start_s >= ops[("I", s, b)].end_s - eps
    # A rank never runs two slots at once (the two halves of an overlapped pair share one slot).
    for rank in range(p):
        mine = sorted({(op.start_s, op.end_s) for op in r.ops if op.rank == rank})
        assert all(a[1] <= b[0] + eps for a, b in zip(mine, mine[1:]))
        assert r.busy_s[rank] == pytest.approx(sum(t1 - t0 for t0, t1 in mine))
        assert r.idle_s[rank] == pytest.approx(r.makespan_s - r.busy_s[rank])
    assert r.makespan_s == pytest.approx(max(op.end_s for op in r.ops))
    assert r.bubble_fraction == pytest.approx(sum(r.idle_s) / (p * r.makespan_s))
    assert -eps <= r.span_bubble < 1.0


@FAST
@given(cases())
def test_peak_activations_by_counting_intervals(case):
    # One activation is held from its F's start to its B's end (or W's end when split):
    # at each F start, count intervals that contain that instant.
    name, p, m, v, f, i, w, lat, overlap = case
    r = simulate(name, p, m, v, f, i, w, lat, overlap)
    ops = list(r.ops)
    held = {}
    for op in ops:
        key = (op.stage, op.microbatch)
        if op.kind == "F":
            held.setdefault(key, [None, None])[0] = op.start_s
        elif op.kind in "BW":
            held.setdefault(key, [None, None])[1] = op.end_s
    for rank in range(p):
        spans = [
            held[(op.stage, op.microbatch)] for op in ops if op.rank == rank and op.kind == "F"
        ]
        peak = max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)
        assert r.peak_activations[rank] == peak
