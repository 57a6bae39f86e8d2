"""Presenter mode's page styling: every text element readable from the back of a hall.

The figures get their projector theme in figures.theme (via common.chart); this is the rest of the
page, as CSS on Streamlit's own `data-testid` hooks (Streamlit 1.67's DOM) and the `st-key-<key>`
class a keyed container carries. tests/e2e/test_presenter_browser.py measures the result at
1280×720: body text, captions, tables, expander labels, select values and lists ≥ 20 px, the
takeaway larger still; the first chart comes right after the takeaway, above the controls.
"""

from __future__ import annotations

BODY_PX = 22  # paragraphs, lists, tables, labels, select values: ≥ 20 px measured at 1280×720
SMALL_PX = 20  # captions, help text, slider tick values: the smallest text on a slide
TAKEAWAY_PX = 26  # the slide's headline

_MAIN = '[data-testid="stMain"]'
_BODY = ", ".join(
    f"{_MAIN} {sel}"
    for sel in (
        "p",
        "li",
        "td",
        "th",
        "label",
        "summary",
        "input",
        "textarea",
        "button",
        "code",
        '[data-testid="stMarkdownContainer"]',
        '[data-baseweb="select"] div',
        '[data-testid="stTable"] *',
        '[data-testid="stMetricLabel"] *',
        '[data-testid="stMetricDelta"] *',
        '[data-testid="stIconEmoji"]',
        '[data-testid="stAlertDynamicIcon"]',
    )
)
_SMALL = ", ".join(
    f"{_MAIN} {sel}"
    for sel in (
        '[data-testid="stCaptionContainer"]',
        '[data-testid="stCaptionContainer"] *',
        '[data-testid="stSliderThumbValue"]',
        '[data-testid="stSliderTickBarMin"]',
        '[data-testid="stSliderTickBarMax"]',
    )
)

# The slide: the page's head (title, question, takeaway: common.start_page keys it slide_head),
# then its first chart, then the controls and the rest, by flex order on the main column (pages
# with no such head, e.g. Home, keep their order). 4 rem on top clears Streamlit's header bar.
# The first chart often sits inside containers: a section's `st.fragment` is a block of its own
# (Streamlit 1.67 wraps it: stLayoutWrapper > stVerticalBlock), and a fragment may hold another
# (the ring's inside the collectives controls'). So on the path down to the first chart, each
# block's first child holding a chart goes first, for up to _DEPTH nested blocks; a chart that
# belongs after the text, e.g. the quiz's scoreboard, sits in a container keyed slide_after.
_TOP = '[data-testid="stMainBlockContainer"] > [data-testid="stVerticalBlock"]'
_CHART = 'div:has([data-testid="splitlabChart"])'
_AFTER = ":has(> .st-key-slide_after)"  # a container keyed slide_after keeps its place
_FIRST = f"{_CHART}:not({_AFTER}):not({_CHART}:not({_AFTER}) ~ div)"  # a block's first chart
_DEPTH = 4
_PATH = [f"{_TOP}:has(.st-key-slide_head) > {_FIRST}"]
for _ in range(_DEPTH - 1):
    _PATH.append(f'{_PATH[-1]} > [data-testid="stVerticalBlock"] > {_FIRST}')

PRESENTER_CSS = f"""<style>
  {_MAIN} {{ font-size: {BODY_PX}px; }}
  {_BODY} {{ font-size: {BODY_PX}px !important; line-height: 1.4; }}
  {_SMALL} {{ font-size: {SMALL_PX}px !important; line-height: 1.35; }}
  {_MAIN} h1 {{ font-size: 3rem !important; }}
  {_MAIN} h2, {_MAIN} h3 {{ font-size: 2.1rem !important; }}
  {_MAIN} h4 {{ font-size: 1.7rem !important; }}
  {_MAIN} [data-testid="stMetricValue"] {{ font-size: 2.6rem; }}
  {_MAIN} [class*="st-key-takeaway"] p {{
    font-size: {TAKEAWAY_PX}px !important; line-height: 1.3; }}
  {_MAIN} .katex {{ font-size: 1.25em; }}
  {_MAIN} [data-testid="stMainBlockContainer"] {{ padding-top: 4rem; }}
  {_TOP} > :is(.st-key-slide_head, div:has(> .st-key-slide_head)) {{ order: -2; }}
  {", ".join(_PATH)} {{ order: -1; }}
</style>"""
