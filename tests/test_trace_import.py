"""Trace import: the committed demo trace, brute-force checks, and every kind of bad upload.

Expected values come from a second, simpler method: a boolean coverage matrix over every elementary
interval (the real trace) or a 1 µs grid walked in plain Python (synthetic traces), with the
classification rules written out again here, never from the module's own numbers.
"""

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.traces import COMM_ONLY, COMPUTE, IDLE, OVERLAP, analyze, load_trace

ROOT = Path(__file__).resolve().parents[1]
DEMO = sorted((ROOT / "data" / "traces").glob("ddp_gloo_rank*.json.gz"))
DEMO_COMM = {
    "gloo:all_reduce",
    "c10d::allreduce_",
}  # by reading the file: gloo's work + the c10d op


def make(events, **top) -> bytes:
    return json.dumps({"traceEvents": events, **top}).encode()


def ev(name, ts, dur, tid=1, cat="cpu_op", pid=7):
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


def demo():
    return [load_trace(p.read_bytes(), name=p.name) for p in DEMO]


# ---- the committed trace --------------------------------------------------------------------


def test_demo_files_are_small_and_hold_two_ranks():
    assert [p.name for p in DEMO] == ["ddp_gloo_rank0.json.gz", "ddp_gloo_rank1.json.gz"]
    assert all(p.stat().st_size < 300_000 for p in DEMO)
    a = analyze(demo())
    assert [r.rank for r in a.ranks] == [0, 1] and a.aligned
    assert all(r.source == "CPU ops" and r.steps == 3 for r in a.ranks)


def test_demo_collectives_are_what_the_model_implies():
    # 4 × Linear(512, 512): 4 weight matrices of 512·512·4 B = 1 MiB each, bucket_cap_mb=1 → 4
    # buckets
    # per step, each one c10d::allreduce_ (enqueued by DDP) run as one gloo:all_reduce: 3 steps →
    # 12.
    for t in demo():
        assert {n for n, _, _ in t.comm_names} == DEMO_COMM
        assert {n: k for n, k, _ in t.comm_names} == {"gloo:all_reduce": 12, "c10d::allreduce_": 12}
        assert t.skipped == 0


def _coverage_breakdown(raw: dict) -> tuple[float, ...]:
    """Second method: a (segment × event) coverage matrix with the rules restated from scratch."""
    xs = [e for e in raw["traceEvents"] if e.get("ph") == "X" and e.get("cat") != "Trace"]
    s = np.array([e["ts"] for e in xs], float)
    e_ = s + np.array([e["dur"] for e in xs], float)
    comm = np.array([e["name"] in DEMO_COMM for e in xs])
    work = np.array([e["cat"] == "cpu_op" for e in xs]) & ~comm
    tid = np.array([e["tid"] for e in xs])
    edges = np.unique(np.r_[s, e_])
    mid, length = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    cov = (s[None, :] <= mid[:, None]) & (mid[:, None] < e_[None, :])
    c_any = cov[:, comm].any(1)
    compute = np.zeros(len(mid), bool)
    for t in np.unique(tid):  # busy on some thread with work that thread is not communicating in
        on = tid == t
        compute |= cov[:, work & on].any(1) & ~cov[:, comm & on].any(1)
    span = e_.max() - s.min()
    return (
        span * 1e-6,
        length[compute].sum() * 1e-6,
        length[c_any].sum() * 1e-6,
        length[compute & c_any].sum() * 1e-6,
    )


@pytest.mark.parametrize("rank", [0, 1])
def test_demo_breakdown_matches_a_coverage_matrix(rank):
    r = analyze(demo()).ranks[rank]
    span, compute, comm, overlap = _coverage_breakdown(
        json.loads(gzip.decompress(DEMO[rank].read_bytes()))
    )
    for got, want in (
        (r.span_s, span),
        (r.compute_s, compute),
        (r.comm_s, comm),
        (r.overlap_s, overlap),
    ):
        assert got == pytest.approx(want, abs=1e-9)
    assert r.compute_s > 0 and r.comm_s > 0 and r.overlap_s > 0  # gloo ran during backward
    assert r.compute_s + r.comm_s + r.idle_s - r.overlap_s == pytest.approx(r.span_s, abs=1e-9)
    assert (
        r.comm_s <= sum(us for _, _, us in r.comm_names) * 1e-6
    )  # a union never exceeds its parts


@pytest.mark.parametrize("rank", [0, 1])
def test_demo_timeline_tiles_the_span_and_matches_the_totals(rank):
    r = analyze(demo()).ranks[rank]
    assert r.bin_s == 0.0
    s, e, st_ = r.seg_start_s, r.seg_end_s, r.seg_state
    assert s[0] == pytest.approx(r.start_s, abs=1e-12) and e[-1] == pytest.approx(
        r.start_s + r.span_s
    )
    assert np.allclose(s[1:], e[:-1], atol=1e-12) and (st_[1:] != st_[:-1]).all()
    d = e - s
    assert d[st_ == OVERLAP].sum() == pytest.approx(r.overlap_s, abs=1e-9)
    assert d[(st_ == COMPUTE) | (st_ == OVERLAP)].sum() == pytest.approx(r.compute_s, abs=1e-9)
    assert d[(st_ == COMM_ONLY) | (st_ == OVERLAP)].sum() == pytest.approx(r.comm_s, abs=1e-9)
    assert d[st_ == IDLE].sum() == pytest.approx(r.idle_s, abs=1e-9)


def test_drawing_cap_bins_the_timeline():
    a = analyze(demo(), max_segments=120)
    for r in a.ranks:
        assert len(r.seg_state) <= 60 and r.bin_s == pytest.approx(r.span_s / 60)
        assert r.seg_end_s[-1] - r.seg_start_s[0] == pytest.approx(r.span_s)
        assert r.compute_s == analyze(demo()).ranks[r.rank].compute_s  # totals stay exact


# ---- synthetic traces against a 1 µs grid ---------------------------------------------------


def _grid(events) -> tuple[int, int, int, int]:
    """(span, compute, comm, overlap) in µs, walking every microsecond with the rules in words."""
    is_comm = lambda e: any(k in e["name"] for k in ("gloo", "c10d", "all_reduce", "nccl"))  # noqa: E731
    lo, hi = min(e["ts"] for e in events), max(e["ts"] + e["dur"] for e in events)
    counts = [hi - lo, 0, 0, 0]
    for t in range(lo, hi):
        on = [e for e in events if e["ts"] <= t < e["ts"] + e["dur"]]
        comm = any(is_comm(e) for e in on)
        compute = any(
            e["cat"] == "cpu_op"
            and not is_comm(e)
            and not any(is_comm(o) and o["tid"] == e["tid"] for o in on)
            for e in on
        )
        counts[1] += compute
        counts[2] += comm
        counts[3] += compute and comm
    return tuple(counts)


SYNTH = [
    ev("ProfilerStep#1", 0, 150, cat="user_annotation"),  # a wrapper: span only
    ev("aten::linear", 5, 95),
    ev("aten::addmm", 10, 10),
    ev("aten::addmm", 30, 20),  # nested
    ev("c10d::allreduce_", 60, 10),  # comm inside aten::linear
    ev("gloo:all_reduce", 40, 80, tid=2, cat="user_annotation"),
    ev("aten::broadcast_tensors", 125, 5),  # shape work, not a collective
    ev("Optimizer.step#SGD.step", 132, 10, cat="user_annotation"),
]


def test_synthetic_trace_matches_the_grid():
    r = analyze([load_trace(make(SYNTH), name="s")]).ranks[0]
    span, compute, comm, overlap = _grid(SYNTH)
    # By hand: compute = aten::linear [5, 100) minus its c10d op [60, 70) = 85, plus
    # broadcast_tensors
    # [125, 130) = 90 (wrappers are not compute); comm = gloo [40, 120) ∪ [60, 70) = 80; overlap =
    # [40, 60) + [70, 100) = 50; span [0, 150).
    assert (span, compute, comm, overlap) == (150, 90, 80, 50)
    assert r.span_s * 1e6 == pytest.approx(span)
    assert r.compute_s * 1e6 == pytest.approx(compute) and r.comm_s * 1e6 == pytest.approx(comm)
    assert r.overlap_s * 1e6 == pytest.approx(overlap)
    assert r.idle_s * 1e6 == pytest.approx(span - compute - comm + overlap)


EVENT = st.builds(
    lambda name, ts, dur, tid: ev(name[0], ts, dur, tid=tid, cat=name[1]),
    st.sampled_from(
        [
            ("aten::mm", "cpu_op"),
            ("aten::add_", "cpu_op"),
            ("c10d::allreduce_", "cpu_op"),
            ("gloo:all_reduce", "user_annotation"),
            ("record_fn", "user_annotation"),
            ("nccl:all_reduce", "user_annotation"),
        ]
    ),
    st.integers(0, 120),
    st.integers(0, 40),
    st.integers(1, 3),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(EVENT, min_size=1, max_size=25))
def test_any_cpu_trace_matches_the_grid(events):
    span, compute, comm, overlap = _grid(events)
    if span == 0:  # only zero-length events at one instant: nothing to split, and it says so
        with pytest.raises(ValueError, match="span 0"):
            analyze([load_trace(make(events), name="h")])
        return
    r = analyze([load_trace(make(events), name="h")]).ranks[0]
    got = np.array([r.span_s, r.compute_s, r.comm_s, r.overlap_s]) * 1e6
    assert got == pytest.approx([span, compute, comm, overlap], abs=1e-6)
    assert r.compute_s + r.comm_s + r.idle_s - r.overlap_s == pytest.approx(r.span_s, abs=1e-9)


def test_gpu_kernels_replace_cpu_ops():
    events = [
        ev("aten::mm", 0, 500),  # host side: ignored
        ev("sm90_gemm", 100, 50, tid=7, cat="kernel", pid=0),
        ev("sm90_gemm", 160, 60, tid=7, cat="kernel", pid=0),
        ev("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 140, 100, tid=20, cat="kernel", pid=0),
        ev("Memcpy DtoH", 300, 10, tid=7, cat="gpu_memcpy", pid=0),
    ]
    r = analyze([load_trace(make(events), name="g")]).ranks[0]
    assert r.source == "GPU kernels"
    # Kernel span [100, 240): compute [100,150)+[160,220) = 110, comm [140, 240) = 100,
    # overlap [140,150)+[160,220) = 70, idle 140 − (110 + 100 − 70) = 0.
    assert np.array(
        [r.span_s, r.compute_s, r.comm_s, r.overlap_s, r.idle_s]
    ) * 1e6 == pytest.approx([140, 110, 100, 70, 0], abs=1e-6)


def test_ranks_from_distributed_info_and_clock_alignment():
    a = load_trace(
        make(
            [ev("aten::mm", 0, 100)], distributedInfo={"rank": 1}, baseTimeNanoseconds=1_000_050_000
        ),
        name="a",
    )
    b = load_trace(
        make([ev("aten::mm", 0, 100)], baseTimeNanoseconds=1_000_000_000), name="b", default_rank=0
    )
    an = analyze([a, b])
    assert [r.rank for r in an.ranks] == [0, 1] and an.aligned
    assert an.ranks[1].start_s == pytest.approx(50e-6)  # 50,000 ns later on the shared clock
    far = analyze(
        [
            load_trace(make([ev("aten::mm", 0, 100)]), name="x"),
            load_trace(make([ev("aten::mm", 1e12, 100)]), name="y", default_rank=1),
        ]
    )
    assert not far.aligned and [r.start_s for r in far.ranks] == [0.0, 0.0]


def test_bare_event_list_is_accepted():
    assert analyze([load_trace(json.dumps(SYNTH).encode(), name="bare")]).ranks[
        0
    ].span_s == pytest.approx(150e-6)


# ---- bad uploads: a ValueError that names the problem and the fix -------------------------------


def bad(data, match, **kw):
    with pytest.raises(ValueError, match=match) as err:
        load_trace(data, name=kw.pop("name", "t.json"), **kw)
    return str(err.value)


def test_malformed_and_truncated_json():
    assert "Expecting value" in bad(b'{"traceEvents": [} ', "not valid JSON")
    whole = gzip.decompress(DEMO[0].read_bytes())
    assert "export the trace again" in bad(whole[: len(whole) // 2], "ends early")
    assert "truncated" in bad(DEMO[0].read_bytes()[:-100], "gzip stream ends early")
    bad(b"\x1f\x8bnot gzip at all", "not a valid gzip file")
    bad(b"  \n", "file is empty")
    bad(b"[" * 100_000, "nested too deeply")
    bad(b'{"traceEvents": ["\xff"]}', "not valid JSON")


def test_not_a_trace():
    for doc in (b"42", b'"text"', b'{"events": []}', b'{"traceEvents": {"a": 1}}'):
        bad(doc, "not a Chrome trace")
    bad(b"[1, 2, 3]", "no complete")
    bad(make([{"ph": "B", "name": "x", "ts": 1}]), "no complete")
    with pytest.raises(ValueError, match="expected the file's bytes"):
        load_trace("a string", name="s")


def test_oversized_upload_names_the_limit_and_the_fix():
    msg = bad(
        b"\x1f\x8b" + os.urandom(26_000_000),
        "file is 26 MB gzipped, larger than the limit of 25 MB",
    )
    assert "trim the trace to a few steps" in msg and "schedule(" in msg
    assert "gzip it" in bad(
        b" " * 2_000, "0.002 MB, larger than the limit of 0.001 MB", max_bytes=1_000
    )
    bad(
        make([ev("aten::mm", i, 1) for i in range(11)]),
        "more than 10 events \\(the limit\\)",
        max_events=10,
    )


def test_gzip_bomb_stops_at_the_limit():
    # 31 gzip members of 10 MB of spaces (valid JSON whitespace): 310 MB from 0.3 MB, well under
    # the 25 MB upload limit. Inflation stops 1 MB past the limit (20 MB here, to keep the test
    # fast; the default is 300 MB).
    bomb = gzip.compress(b" " * 10_000_000, compresslevel=9) * 31
    assert len(bomb) < 400_000
    msg = bad(bomb, "unzips to more than 20 MB", max_uncompressed_bytes=20_000_000)
    assert "trim the trace" in msg and "0.3 MB" in msg


def test_hostile_values():
    bad(b'{"traceEvents": [{"ph": "X", "ts": NaN, "dur": 1}]}', "not valid JSON")
    bad(b'[{"ph": "X", "ts": 1e999, "dur": 1}]', "non-numeric, negative or non-finite")
    bad(b'[{"ph": "X", "ts": 1, "dur": 1' + b"9" * 5000 + b"}]", "not valid JSON")
    events = [
        {"ph": "X", "ts": "NaN", "dur": 1},
        {"ph": "X", "ts": [1], "dur": {"a": 1}},
        {"ph": "X", "ts": True, "dur": 1},
        {"ph": "X", "ts": 1, "dur": -5},
        {"ph": "X", "ts": int("9" * 400), "dur": 1},
    ]
    assert "all 5 complete" in bad(make(events), "nothing to analyse")
    mixed = load_trace(
        make(events + [ev(None, 0, 10), ev(5, 1, 2, tid={"x": 1}, cat=["?"])]), name="m"
    )
    assert mixed.skipped == 5 and len(mixed.ts_us) == 2
    for rank in ("<script>alert(1)</script>", -1, True, 10**7, 1.5):
        msg = bad(
            make([ev("aten::mm", 0, 1)], distributedInfo={"rank": rank}), "distributedInfo.rank"
        )
        assert "<" not in msg and "whole number" in msg


def test_names_from_the_file_are_kept_as_text_and_file_names_are_made_safe():
    name = "<img src=x onerror=alert(1)> all_reduce [x](javascript:1)"
    t = load_trace(make([ev(name, 0, 10)]), name="![t](http://e.vil/x.png)<b>.json")
    assert t.comm_names[0][0] == name  # shown only through st.dataframe / plain text
    assert t.name == "__t__http___e.vil_x.png__b_.json"
    msg = bad(b"{", "ends early", name="<script>x</script>[a](b)")
    assert msg.startswith("`_script_x__script__a__b_`: ") and "<" not in msg and "[" not in msg


def test_analyze_rejects_nothing_and_duplicate_ranks():
    with pytest.raises(ValueError, match="no trace to analyse"):
        analyze([])
    t = load_trace(make([ev("aten::mm", 0, 1)]), name="one.json")
    with pytest.raises(ValueError, match="both say rank 0: upload one file per rank"):
        analyze([t, t])
    with pytest.raises(ValueError, match="span 0 µs"):
        analyze([load_trace(make([ev("aten::mm", 5, 0)]), name="zero.json")])
