"""Screenshots for docs/screens/: what a visitor sees at a laptop (1440×900) and what a projector
shows in presenter mode (1280×720), viewport only (the first screen, before any scrolling).

    python scripts/screens.py                 # the default set below
    python scripts/screens.py self_check:1280:present
    python scripts/screens.py --all           # every registered page, both sizes
    python scripts/screens.py --visuals       # the README's visuals (ring, gantt, step, memory)

A spec is page[?query]:width[:present][=name]; name (without .png) overrides the file's name.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.harness import launch_browser, running_app, wait_for_app_run, wait_for_charts  # noqa: E402

OUT = ROOT / "docs" / "screens"
SIZES = {1440: 900, 1280: 720}
DEFAULT = ["home:1440", "home:1280:present", "self_check:1280:present"]
# The README's "visuals" table: the ring mid reduce-scatter, two schedules on one time axis.
VISUALS = {
    "ring": "collectives?step=3",
    "gantt": "pipeline?sched=GPipe&cmp=true&sched2=ZB-H1",
    "step": "training_step?phase=2",
    "memory": "memory",
}


def _name(path: str, width: int, present: bool) -> str:
    stem = "selfcheck" if path == "self_check" else path or "home"
    return f"{stem}_present_{width}.png" if present else f"{stem}_{width}.png"


def shoot(specs: list[str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    done = []
    with running_app() as url, sync_playwright() as p:
        browser = launch_browser(p)
        for spec in specs:
            spec, _, name = spec.partition("=") if "?" not in spec else _named(spec)
            path, width, *flags = spec.split(":")
            path, _, query = ("" if path == "home" else path).partition("?")
            width, present = int(width), "present" in flags
            query = "&".join(q for q in (query, "present=true" if present else "") if q)
            page = browser.new_page(viewport={"width": width, "height": SIZES[width]})
            page.goto(f"{url}/{path}" + (f"?{query}" if query else ""))
            wait_for_app_run(page, timeout_ms=120_000)
            wait_for_charts(page, timeout_ms=120_000)  # a cold server draws its first charts slowly
            page.wait_for_timeout(1000)  # Plotly lays out after drawing (automargin redraws)
            target = OUT / (
                f"{name}{'_present' if present else ''}_{width}.png"
                if name
                else _name(path, width, present)
            )
            page.screenshot(path=str(target))
            page.close()
            done.append(target)
        browser.close()
    return done


def _named(spec: str) -> tuple[str, str, str]:
    """Split 'page?a=1&b=2:1440:present=name' at the '=' after the last ':' (queries hold '=')."""
    head, _, tail = spec.rpartition(":")
    flag, eq, name = tail.partition("=")
    return f"{head}:{flag}", eq, name


def visuals() -> list[str]:
    return [
        f"{q}:{w}{':present' if w == 1280 else ''}={n}"
        for n, q in VISUALS.items()
        for w in (1440, 1280)
    ]


def every_page() -> list[str]:
    from tests.registry import registered_pages, url_path

    stems = ["home"] + [url_path(p) for p, _ in registered_pages()]
    return [spec for s in stems for spec in (f"{s}:1440", f"{s}:1280:present")]


if __name__ == "__main__":
    args = sys.argv[1:]
    specs = {"--all": every_page, "--visuals": visuals}.get(" ".join(args), lambda: args or DEFAULT)
    for shot in shoot(specs()):
        print(shot.relative_to(ROOT))
