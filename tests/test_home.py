"""Home (issue 15 §1): a still of a real ring all-reduce, a 30-minute path, the unit switch."""

import numpy as np
import pytest

from app_pages.common import Settings
from core.collectives import example_inputs, ring_all_reduce, tree_all_reduce
from figures.home import ring_still_caption, ring_still_figure, step_titles
from tests.test_pages import PAGES, assert_clean, chart_specs, run_app


@pytest.fixture(scope="module")
def still():
    inputs = example_inputs(4, 4)
    return inputs, ring_all_reduce(inputs), ring_still_figure(ring_all_reduce(inputs))


def test_the_still_shows_every_step_of_the_real_run(still):
    inputs, _, fig = still
    cells, numbers, rs, ag = fig["data"]
    grid = np.array([[np.nan if v is None else v for v in row] for row in cells["z"]])
    panels = [grid[:, 5 * t : 5 * t + 4] for t in range(7)]  # 4 chunks + a gap per panel
    assert np.all(panels[0] == 1)  # at the start each GPU holds only its own input
    assert np.all(panels[-1] == 4)  # at the end every copy sums all four
    assert np.all(np.isnan(grid[:, 4::5]))  # the gaps between panels stay empty
    # after reduce-scatter (panel 3) exactly one chunk per GPU holds all four inputs
    assert (panels[3] == 4).sum(axis=1).tolist() == [1, 1, 1, 1]
    last = numbers["text"][-16:]  # the final panel's numbers: the column sums, on every GPU
    assert last == [str(v) for v in np.tile(inputs.sum(axis=0), 4)]
    # each step every GPU receives one chunk: 3 reduce-scatter and 3 all-gather steps × 4 GPUs,
    # each outline a closed rectangle of 5 points and a gap
    assert len(rs["x"]) == len(ag["x"]) == 3 * 4 * 6
    assert fig["layout"]["xaxis"]["ticktext"] == step_titles(4) == [
        "start", "RS 1", "RS 2", "RS 3", "AG 1", "AG 2", "AG 3"
    ]  # fmt: skip


def test_the_caption_counts_steps_and_bytes(still):
    _, trace, _ = still
    text = ring_still_caption(trace)
    # int64 inputs: a 4-element buffer is 32 bytes; each GPU sends 6 one-element chunks = 48 bytes
    assert "sent 48 bytes, 1.50× its 32-byte buffer" in text
    assert "After 3 reduce-scatter steps" in text


def test_the_still_needs_a_ring_all_reduce():
    with pytest.raises(ValueError, match="ring all-reduce"):
        ring_still_figure(tree_all_reduce(example_inputs(4, 4)))


def test_home_shows_the_still_the_path_and_the_unit_switch():
    at = run_app()
    assert_clean(at)
    (spec,) = chart_specs(at)
    assert spec["layout"]["title"]["text"].startswith("A real ring all-reduce: 4 GPUs")
    assert "A 30-minute path" in [s.value for s in at.subheader]
    steps = [m.value for m in at.markdown if m.value.startswith("**") and " min** — " in m.value]
    minutes = [int(s.split(" · ")[1].split(" min")[0]) for s in steps]
    assert sum(minutes) == 30 and steps[0].startswith("**1 · ")
    assert any("Units and display are in the sidebar" in i.value for i in at.info)
    assert len(at.get("page_link")) == len(PAGES)  # every page once, path or not
    for label in ("GB", "GiB"):
        at = run_app(params={"mem": label})
        note = next(i.value for i in at.info if "Units and display" in i.value)
        assert f"Now: **{label}**" in note
    # the example link carries the unit that is not the default (a default never needs a link)
    default = {"binary": "GiB", "decimal": "GB"}[Settings().memory_units.value]
    assert f"?mem={default}`" not in note and "?mem=" in note
