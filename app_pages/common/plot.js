// One chart that stays on the page: app_pages/common/plot.py mounts it (Streamlit components v2,
// no iframe); every rerun that changes the figure calls Plotly.react on the same <div>.
//
// Why not st.plotly_chart: Streamlit 1.67 gives that chart an element id hashed from its spec, so a
// changed figure unmounts the old chart and draws a new one from an empty <div>, then reacts a second
// time for its colour pass (docs/notes/plotly.md §3, §6). Here the component's id is its key, so
// the <div> survives the rerun and Plotly.react redraws only what changed.
//
// A figure whose layout.meta.glide holds a move (figures/collectives/frames.py open_at_step, the
// training step's open_at) is drawn where the move starts, then played once with Plotly.animate.

const wanted = new WeakMap(); // the <div> → the spec it must end up showing (the newest)

async function plotly(lib) {
  // Streamlit's own Plotly chunk sets window.Plotly when it loads (it ends `return window.Plotly=e`).
  if (!window.Plotly) await import(new URL(lib, document.baseURI).href);
  return window.Plotly;
}

const utf8 = new TextDecoder();

// The chart's data is one byte string, "module path \n config JSON \n figure JSON" (plot.py
// `pack` says why bytes); JSON never holds a raw line break, so the first two split it.
function unpack(bytes) {
  const all = utf8.decode(bytes);
  const a = all.indexOf("\n");
  const b = all.indexOf("\n", a + 1);
  return { lib: all.slice(0, a), config: all.slice(a + 1, b), spec: all.slice(b + 1) };
}

export default function ({ data: bytes, parentElement }) {
  const data = unpack(bytes);
  let gd = parentElement.querySelector(".splitlab-chart");
  if (!gd) { // <div data-testid="splitlabChart"><div class="splitlab-chart js-plotly-plot">
    const box = document.createElement("div");
    box.setAttribute("data-testid", "splitlabChart");
    gd = box.appendChild(document.createElement("div"));
    gd.className = "splitlab-chart";
    parentElement.appendChild(box);
  }
  if (wanted.get(gd) === data.spec) return undefined; // the same figure: nothing to draw
  wanted.set(gd, data.spec);
  const fig = JSON.parse(data.spec);
  gd.style.minHeight = `${fig.layout.height}px`; // hold the room while Plotly loads: no jump
  draw(gd, fig, data);
  // On unmount only (Streamlit also calls this when a newer render overtook this one): free the
  // chart's listeners once its <div> has left the page.
  return () => setTimeout(() => gd.isConnected || window.Plotly?.purge(gd), 0);
}

async function draw(gd, fig, data) {
  const P = await plotly(data.lib);
  if (wanted.get(gd) !== data.spec) return; // a newer figure arrived while Plotly loaded
  await P.react(gd, { data: fig.data, layout: fig.layout, frames: fig.frames || [],
                      config: JSON.parse(data.config) });
  gd.__drawn = (gd.__drawn || 0) + 1; // tests: how many draws this <div> has had
  const glide = fig.layout.meta && fig.layout.meta.glide;
  if (!glide || gd.__glided === glide.token || wanted.get(gd) !== data.spec) return;
  gd.__glided = glide.token;
  await P.animate(gd, glide.frames, Object.assign({}, glide.opts, { mode: "immediate" }));
  // benchmarks/ring_frames.py reads __glideDone; tests/e2e/test_collectives_keys.py __glideLanded
  gd.__glideDone = performance.now();
  gd.__glideLanded = glide.token;
}
