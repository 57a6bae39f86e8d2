"""AppTest for the collectives page: keyboard-step buttons, the URL-bound step, and the A-vs-B
section.

Numbers by hand: a ring step on N = 8 sends S/8 per GPU and takes α + (S/8)/B (NVLink 4 preset:
450 GB/s, 3.4 µs); S = 1 GB by default, shown in binary units (MiB / GiB).
"""

from streamlit.testing.v1 import AppTest

from tests.registry import ROOT, chart_specs, run_page_file


def run(**params: str) -> AppTest:
    return run_page_file(str(ROOT / "app_pages" / "collectives.py"), **params)


def button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def metric(at: AppTest, prefix: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(prefix))


def delta(at: AppTest, prefix: str) -> str:
    return next(m.delta for m in at.metric if m.label.startswith(prefix))


def ring_spec(at: AppTest) -> dict:
    return chart_specs(at)[0]


def title(at: AppTest) -> str:
    return ring_spec(at)["layout"]["title"]["text"]


def notices(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if "was ignored" in w.value]


def versus_tables(at: AppTest) -> list:
    """The A-vs-B tables (the all-to-all cost table is a table too)."""
    return [t.value for t in at.table if "measure" in t.value.columns]


def versus_spec(at: AppTest) -> dict:
    return next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("A vs B"))


def test_buttons_carry_the_keyboard_shortcuts():
    at = run()
    walk = "🚶 Walk me through it"  # the guided walk's start button: no shortcut of its own
    shortcuts = {b.label: b.proto.shortcut for b in at.button if b.label != walk}
    assert shortcuts == {"◀ Back": "left", "Next ▶": "right", "Reset": "home", "▶ Play": ""}


def test_next_advances_the_step_and_the_ring_opens_there():
    at = run()
    assert at.slider(key="step").value == 0 and "step 0 of 14" in title(at)
    button(at, "Next ▶").click().run()
    assert at.slider(key="step").value == 1
    assert at.query_params["step"] == "1"  # the bound slider writes the URL
    assert title(at) == "ring N=8 on NVLink 4 · step 1 of 14 · reduce-scatter"
    button(at, "Next ▶").click().run()
    assert at.slider(key="step").value == 2
    button(at, "Reset").click().run()
    assert at.slider(key="step").value == 0


def test_back_at_zero_stays_at_zero_and_next_stops_at_the_last_step():
    at = run()
    button(at, "◀ Back").click().run()
    assert at.slider(key="step").value == 0
    at = run(n="2", step="2")  # N = 2: steps 0 … 2(N−1) = 2
    button(at, "Next ▶").click().run()
    assert at.slider(key="step").value == 2


def test_deep_linked_step_sets_the_per_step_readouts():
    at = run(step="3")
    assert metric(at, "Step") == "3 of 14"
    assert metric(at, "Bytes sent per GPU") == "1.75 GB"  # all 14 steps: 2·S·7/8 = 1.75e9 B
    # 3 chunks of 1e9/8 B = 375e6 B = 375 MB; 3·(3.4 µs + 125e6 B / 450e9 B/s) = 843.5 µs.
    assert delta(at, "Bytes sent per GPU") == "375 MB by step 3"
    assert delta(at, "Time on NVLink 4") == "844 µs by step 3"
    assert "step 3 of 14 · reduce-scatter" in title(at)
    # The one-line story: RS step 3 (k = 2) has rank 2 send chunk 2 − 2 = 0, holding ranks 0-2.
    assert any(
        m.value.startswith("**step 3 of 14, reduce-scatter: GPU 2 sends chunk 0 (3 contributions)")
        for m in at.markdown
    )


def test_out_of_range_step_in_the_url_falls_back_with_a_notice():
    at = run(n="8", step="99")
    assert at.slider(key="step").value == 14  # clamped to the last of 2(N−1) steps, as N changes do
    assert any(
        "`step=99`" in w.value and "0 to 14" in w.value and "using 14" in w.value
        for w in at.warning
    )
    at = run(n="8", step="-3")
    assert at.slider(key="step").value == 0  # below the range: the default, with a notice
    assert any("`step=-3`" in w.value for w in at.warning)


def test_fewer_gpus_clamp_the_step():
    at = run(step="14")
    assert at.slider(key="step").value == 14
    at.slider(key="n").set_value(3).run()
    assert not at.exception
    assert at.slider(key="step").value == 4  # 2(N−1) for N = 3
    assert "step 4 of 4 · all-gather" in title(at)


def test_a_vs_b_is_off_by_default_and_on_with_its_defaults():
    at = run()
    assert not [s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("A vs B")]
    assert not versus_tables(at) and at.toggle(key="cmp").value is False
    at = run(cmp="true")
    assert (
        at.selectbox(key="alg_a").value == "Ring"
        and at.selectbox(key="alg_b").value == "Binomial tree"
    )
    labels = [b.proto.label for b in at.get("download_button")]
    assert "allreduce_ring_vs_tree_N8.csv (CSV)" in labels


def test_a_vs_b_deep_link_by_label():
    at = run(cmp="true", alg_a="Naive", alg_b="Halving-doubling")
    assert at.selectbox(key="alg_a").value == "Naive"
    assert at.selectbox(key="alg_b").value == "Halving-doubling"
    assert not at.warning
    table = versus_tables(at)[0]
    assert list(table.columns) == ["measure", "A · Naive", "B · Halving-doubling", "B / A"]
    steps = table.set_index("measure").loc["steps"]
    # Naive: 7 gathers + 7 broadcasts; Rabenseifner on 8 = 2^3: 3 halving + 3 doubling steps.
    assert (steps["A · Naive"], steps["B · Halving-doubling"]) == ("14", "6")
    titles = [a["text"] for a in versus_spec(at)["layout"]["annotations"]]
    assert "A · Naive" in titles[0] and "B · Halving-doubling" in titles[1]
    assert any("**Halving-doubling** is" in i.value for i in at.info)


def test_hierarchical_error_shows_for_its_side_only():
    at = run(cmp="true", n="6", alg_b="Hierarchical")
    errors = [e.value for e in at.error]
    assert errors == [
        "6 ranks are not a whole number of nodes of 8 GPUs: the two-level algorithm needs "
        "num_ranks divisible by gpus_per_node; use a multiple of 8"
    ]
    titles = [a["text"] for a in versus_spec(at)["layout"]["annotations"]]
    assert "A · Ring" in titles[0] and "not run" in titles[1]
    assert not versus_tables(at)  # no comparison without both sides


def test_two_tier_toggle_sets_the_hierarchical_node_size():
    at = run(cmp="true", n="8", tier="true", gpn="4", alg_b="Hierarchical")
    assert not at.error, [e.value for e in at.error]
    steps = versus_tables(at)[0].set_index("measure").loc["steps"]
    # 4 GPUs per node × 2 nodes: 3 intra RS + 1 inter RS + 1 inter AG + 3 intra AG = 8 steps.
    assert steps["B · Hierarchical"] == "8"


def test_few_elements_on_many_gpus_still_time_a_whole_tensor():
    # 8 drawn elements on 32 GPUs: most drawn chunks are empty, but bytes and times are those of S =
    # 1 GB
    # split in 32: t = 2·31·3.4 µs + 2·31/32 · 1e9 / 450e9 = 4.52 ms, every GPU sends 2·31/32 GB.
    at = run(n="32", elems="8", step="62")
    assert not at.exception and not at.error
    t = 2 * 31 * 3.4e-6 + 2 * 31 / 32 * 1e9 / 450e9
    assert metric(at, "Time on NVLink 4") == f"{t * 1e3:.3g} ms"
    assert delta(at, "Time on NVLink 4") == f"{t * 1e3:.3g} ms by step 62"  # the steps add up to it
    assert metric(at, "Bytes sent per GPU") == f"{2 * 31 / 32 * 1e9 / 1e9:.3g} GB"
    ring = next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("ring N=32"))
    centre = next(d for d in ring["data"] if d["name"] == "step")["text"][0]
    assert centre.endswith(f" · {t * 1e3:.3g} ms")


def test_next_after_a_deep_link_raises_no_url_notice():
    # The server's copy of the URL still says step=3 after the press: that is not a bad URL value.
    at = run(step="3")
    for expected in (4, 5):
        button(at, "Next ▶").click().run()
        assert at.slider(key="step").value == expected and not notices(at)
    assert at.query_params["step"] == "5" and metric(at, "Step") == "5 of 14"
    assert "step 5 of 14" in title(at)


def test_a_press_that_carries_a_stale_slider_value_still_counts():
    # A press made while the last rerun still runs arrives with the browser's old slider value:
    # the step must move on from the step shown (4), not from the stale value (3).
    at = run(step="3")
    button(at, "Next ▶").click().run()
    at.slider(key="step").set_value(3)
    button(at, "Next ▶").click().run()
    assert at.slider(key="step").value == 5 and not notices(at)
    at.slider(key="step").set_value(9).run()  # a real drag still moves it
    assert at.slider(key="step").value == 9 and "step 9 of 14" in title(at)
    button(at, "◀ Back").click().run()
    assert at.slider(key="step").value == 8


def test_play_toggles_to_pause():
    at = run()
    button(at, "▶ Play").click().run()
    assert [b.label for b in at.button][-1] == "❚❚ Pause"
    button(at, "❚❚ Pause").click().run()
    assert [b.label for b in at.button][-1] == "▶ Play"


def test_fewer_elements_than_gpus_still_give_every_chunk_an_element():
    at = run(n="16", elems="8")
    assert any("Simulating 16 elements per GPU" in c.value for c in at.caption)
    cells = next(d for d in ring_spec(at)["data"] if d["name"] == "chunks")
    assert len(cells["x"]) == 16 * 16


def a2a_spec(at: AppTest) -> dict:
    return next(s for s in chart_specs(at) if s["layout"]["title"]["text"].startswith("all-to-all"))


def cost_table(at: AppTest):
    return next(t.value for t in at.table if "busbw factor" in t.value.columns)


def test_all_to_all_section_at_the_defaults():
    at = run()
    assert at.slider(key="a2a").value == 0
    assert a2a_spec(at)["layout"]["title"]["text"] == "all-to-all N=8 · after step 0 of 7"
    table = cost_table(at).set_index("collective")
    # by hand (N = 8, S = 1 GB, NVLink 4): 7·3.4 µs + (7/8)·1e9/450e9 = 1.97 ms; ring all-reduce
    # 14·3.4 µs + 2·(7/8)·1e9/450e9 = 3.94 ms, the ring section's own total
    assert table.loc["all-to-all (pairwise)", "time, one link"] == "1.97 ms"
    assert table.loc["all-reduce (ring)", "time, one link"] == "3.94 ms"
    assert table.loc["all-to-all (pairwise)", "busbw factor"] == "0.875"
    assert any("7/8 at N = 8" in i.value for i in at.info)


def test_all_to_all_step_is_url_bound_and_clamped_when_n_shrinks():
    at = run(a2a="5")
    assert (
        at.slider(key="a2a").value == 5
        and "after step 5 of 7" in a2a_spec(at)["layout"]["title"]["text"]
    )
    at.slider(key="n").set_value(4).run()
    assert not at.exception and at.slider(key="a2a").value == 3
    assert "after step 3 of 3" in a2a_spec(at)["layout"]["title"]["text"]


def test_two_tier_adds_the_nic_columns():
    at = run(n="16", tier="true")
    table = cost_table(at).set_index("collective")
    # 2 nodes × 8: each GPU sends S·(2−1)/2 = 500 MB over the NICs at 50 GB/s → 10.1 ms
    assert table.loc["all-to-all (pairwise)", "through the NICs per GPU"] == "500 MB"
    assert table.loc["all-to-all (pairwise)", "two-tier time"] == "10.1 ms"
    assert table.loc["all-reduce (ring)", "through the NICs per GPU"] == "125 MB"


def opened(at: AppTest) -> AppTest:
    """Open the lazy "Check a sum by eye" expander (its grid is built only when open)."""
    at.session_state["sum_eye"] = True
    return at.run()


def test_sum_by_eye_is_built_only_when_opened():
    at = run()
    assert not at.dataframe  # closed: no grid sent on a move (issue 18)
    frame = opened(at).dataframe[0].value  # N = 8 GPUs, 8 elements each: all fit
    assert list(frame.index) == [f"GPU {r}" for r in range(8)] + ["sum (every GPU)"]
    assert list(frame.columns) == [f"element {i}" for i in range(8)]
    assert (frame.iloc[:8].sum() == frame.iloc[8]).all()  # the sum row is the column sums


def test_sum_by_eye_at_16_gpus_is_twelve_columns_wide():
    at = opened(run(n="16"))  # 8 elements asked, 16 simulated (one per chunk)
    frame = at.dataframe[0].value
    assert list(frame.columns) == [f"element {i}" for i in range(12)]
    assert len(frame) == 17 and frame.index[-1] == "sum (every GPU)"
    assert any("Elements 0 … 11 of 16 shown" in c.value for c in at.caption)
    assert (frame.iloc[:16].sum() == frame.iloc[16]).all()  # the sum row is the column sums
    at = opened(run(n="4", elems="6"))  # 5 columns fit: the GPUs and the sum, one per element
    frame = at.dataframe[0].value
    assert list(frame.columns) == ["GPU 0", "GPU 1", "GPU 2", "GPU 3", "sum (every GPU)"]
    assert len(frame) == 6


# Fragment guards (issue 18): a control reruns only its section, against a real server
# (tests/fragments.py; AppTest always reruns the whole script).
import pytest  # noqa: E402

from tests.fragments import shared_app  # noqa: E402

PAGE = "app_pages.common:start_page"  # once per whole-page run, never by a fragment


@pytest.fixture(scope="module")
def app():
    return shared_app()


def test_all_to_all_step_reruns_only_its_fragment(app):
    tab = app.open("collectives")
    with app.counting() as calls:
        tab.move("a2a", 3)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0
    assert (
        calls["app_pages.common.coll_view:comparison"] == 0
    )  # the enclosing fragment did not rerun
    assert calls["app_pages.common.a2a_view:drawing"] == 1
    assert tab.charts == ["a2a_blocks"]
    assert "a2a" in tab.url_bound


def test_two_tier_toggle_reruns_the_algorithms_fragment_not_the_ring(app):
    tab = app.open("collectives")
    with app.counting() as calls:
        tab.move("tier", True)
    assert tab.fragment_run and not tab.exceptions
    assert calls[PAGE] == 0 and calls["figures.collectives:open_at_step"] == 0
    assert "by_n" in tab.charts and "ring" not in tab.charts and "bytes" not in tab.charts
    assert "tier" in tab.url_bound


def test_charts_keep_their_place_when_n_passes_the_simulated_elements(app):
    """At N > elements per GPU a note appears above the ring; were it a new element, every chart
    below it would move one place and the browser would draw each from scratch (issue 18:
    Streamlit's frontend renders a block's children by position)."""
    tab = app.open("collectives")  # N = 8, 8 elements per GPU: no note
    before = dict(tab.paths)
    tab.move("n", 9)  # 9 > 8: the note
    assert tab.paths == before and len(before) >= 5
