"""The documentation a newcomer sees: sources checked always, the built site in a browser.

The source checks run in the default suite (a few seconds: the quickstart fits one
small model). The browser test needs a built site (``docs/_build/html``, or
``$SKDP_DOCS_HTML``) and Debian's ``chromium``; without either it is skipped with the
reason. CI (``.ci/run``) builds the docs, then runs this file, so it really runs
there; the full-page screenshots it saves at desktop width under
``docs/_build/screenshots`` (or ``$SKDP_DOCS_SCREENSHOTS``) are the artifacts to look
at: the landing page, the choosing page, the privacy-model page and two class pages.
On each of them a script measures the laid-out page: no table may be wider than the
content column or scroll inside it (cut off), no figure wider than the column or
shown at less than MIN_FIGURE_SCALE of its pixel width.
"""

import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from sklearn.base import BaseEstimator

import skdp

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HTML = Path(os.environ.get("SKDP_DOCS_HTML", DOCS / "_build" / "html"))
SCREENSHOTS = Path(os.environ.get("SKDP_DOCS_SCREENSHOTS", DOCS / "_build" / "screenshots"))
CLASS_PAGE = "api/generated/skdp.decision_list.DPDecisionListClassifier.html"
# The pages a newcomer reads first, screenshotted at desktop width (CI artifacts) and
# checked for layout: no table wider than its container, no figure wider than the
# content column or shrunk so far that its labels cannot be read.
SCREENSHOT_PAGES = {
    "landing": "index.html",
    "choosing": "user_guide/choosing.html",
    "privacy_model": "user_guide/privacy_model.html",
    "class_page": CLASS_PAGE,
    "class_page_continual": "api/generated/skdp.streams.ContinualReleaseClassifier.html",
}
DESKTOP_WIDTH = 1280
# A figure shown at less than this fraction of its pixel width has labels below ~9 px
# (benchmarks/_plot.py draws 8.5-pt text at 120 dpi, ~14 px at full size).
MIN_FIGURE_SCALE = 0.6

ESTIMATORS = sorted(
    name
    for name in skdp.__all__
    if inspect.isclass(getattr(skdp, name)) and issubclass(getattr(skdp, name), BaseEstimator)
)


def _index_rst():
    return (DOCS / "index.rst").read_text(encoding="utf-8")


def _section(text, title):
    """The body of the reST section ``title`` (up to the next underlined title)."""
    pattern = rf"^{re.escape(title)}\n-+\n(.*?)(?=^\S[^\n]*\n[-=]+\n|\Z)"
    match = re.search(pattern, text, re.S | re.M)
    assert match, f"no section {title!r} in docs/index.rst"
    return match.group(1)


# -- sources -------------------------------------------------------------------


def test_landing_page_table_lists_every_exported_estimator():
    table = _section(_index_rst(), "Estimators")
    missing = [
        name for name in ESTIMATORS if not re.search(rf":class:`~skdp\.\w+\.{name}`", table)
    ]
    assert ESTIMATORS and not missing, f"estimators missing from the landing table: {missing}"


def test_landing_page_quickstart_runs(tmp_path, monkeypatch):
    body = _section(_index_rst(), "Quickstart")
    block = re.search(r"\.\. code-block:: python\n\n((?:   .*\n|\n)+)", body)
    assert block, "no python code block in the Quickstart"
    code = "\n".join(line[3:] for line in block.group(1).splitlines())
    lines = [line for line in code.splitlines() if line.strip()]
    assert len(lines) <= 14, f"the quickstart has {len(lines)} lines"
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/index.rst quickstart", "exec"), {})


def test_docs_figures_exist():
    for rst in [DOCS / "index.rst", *sorted((DOCS / "user_guide").glob("*.rst"))]:
        for target in re.findall(r"^\.\. (?:figure|image):: (\S+)", rst.read_text("utf-8"), re.M):
            assert (rst.parent / target).is_file(), f"{rst.name}: missing figure {target}"


def test_every_example_saves_its_figure_under_its_own_name():
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert examples
    for path in examples:
        calls = re.findall(r"figure_path\(\"([^\"]+)\"\)", path.read_text("utf-8"))
        assert calls == [path.stem], f"{path.name} saves {calls}, expected [{path.stem!r}]"


def _plot_helper():
    path = ROOT / "benchmarks" / "_plot.py"
    spec = importlib.util.spec_from_file_location("skdp_bench_plot", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_figure_layout_check_catches_overlaps(tmp_path):
    """benchmarks/_plot.py refuses to save a figure a reader cannot read: the check
    finds the issue's two defects on a figure drawn the old way, none on the new way."""
    pytest.importorskip("matplotlib")  # a benchmark dependency, not in the test extra
    _plot = _plot_helper()
    plt = _plot._pyplot()
    eps = [0.5, 1, 2, 4, 8]
    fig, ax = plt.subplots(figsize=(3, 2))  # old: default log ticks, legend inside
    for k in range(4):
        ax.plot(eps, [0.6 + 0.05 * k + 0.01 * e for e in eps], marker="o", label=f"m{k}")
    ax.set_xscale("log")
    ax.legend(loc="center")
    found = _plot.layout_problems(fig)
    plt.close(fig)
    assert any("tick labels" in p for p in found) and any("legend" in p for p in found), found
    with _plot.figure(tmp_path / "ok.png", 1) as (fig, (ax,)):
        for k in range(4):
            ax.plot(eps, [0.6 + 0.05 * k + 0.01 * e for e in eps], marker="o", label=f"m{k}")
        _plot.epsilon_axis(ax, eps)
        _plot.legend_below(fig, [ax])
    assert (tmp_path / "ok.png").is_file()
    with (pytest.raises(ValueError, match="legend covers data"),
          _plot.figure(tmp_path / "bad.png", 1) as (fig, (ax,))):
        ax.plot(eps, eps, label="data")
        ax.legend(loc="center")
    assert not (tmp_path / "bad.png").exists()


def _conf(monkeypatch, tmp_path):
    monkeypatch.setenv("SKDP_OUTPUT_DIR", str(tmp_path))  # conf.py sets it by default
    spec = importlib.util.spec_from_file_location("skdp_docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_math_is_rendered_offline(monkeypatch, tmp_path):
    conf = _conf(monkeypatch, tmp_path)
    assert "sphinx-mathjax-offline" in conf.extensions
    assert "sphinx-mathjax-offline" in (ROOT / "pyproject.toml").read_text("utf-8")


def test_privacy_section_summary_before_parameters_and_argument_in_notes(
    monkeypatch, tmp_path
):
    conf = _conf(monkeypatch, tmp_path)
    argument = " ".join(["word"] * 80)
    lines = [
        "Summary line.",
        "",
        "Privacy",
        "-------",
        "(ε, δ)-DP for the whole stream against neighbours that differ in one row "
        "(Paper, Thm 1): " + argument + ".",
        "",
        "Second paragraph of the proof.",
        "",
        "Parameters",
        "----------",
        "x : int",
        "    A parameter.",
    ]
    conf.privacy_sections(None, "class", "X", None, None, lines)
    text = "\n".join(lines)
    summary = text.index(".. admonition:: Privacy\n")
    assert summary < text.index("Parameters\n----------") < text.index("Notes\n-----")
    assert text.index("Notes\n-----") < text.index(".. admonition:: Privacy: the argument")
    box = text[summary : text.index("Parameters\n")]
    assert "the whole stream" in box and "word word" not in box
    assert "Second paragraph of the proof." in text.split("Notes\n-----")[1]


# -- the built site, in a real browser ----------------------------------------


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _browser_or_skip():
    # .ci/run sets SKDP_REQUIRE_DOCS_BROWSER=1 after building the docs: fail, not skip.
    missing = pytest.fail if os.environ.get("SKDP_REQUIRE_DOCS_BROWSER") == "1" else pytest.skip
    if not (HTML / "index.html").is_file():
        missing(
            f"no built docs at {HTML}: build them first (python -m sphinx -W -b html docs "
            "docs/_build/html) or set SKDP_DOCS_HTML; .ci/run does this before running this test"
        )
    browser = _chromium()
    if browser is None:
        missing("no chromium: apt-get install -y chromium (.ci/run installs it)")
    return browser


def _chromium_run(browser, page, *args):
    # --proxy-server to a closed port: any network request fails, so whatever
    # renders, renders offline.
    command = [
        browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
        "--proxy-server=127.0.0.1:9", "--virtual-time-budget=15000", *args,
        (HTML / page).as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


class _VisibleText(HTMLParser):
    """Prose of a DOM: text outside <script>, <style>, MathJax's own output and code
    (a literal such as ``\\(`` or ``x^{2}`` in code is meant to be read raw)."""

    SKIP = {"script", "style", "mjx-container", "mjx-assistive-mml", "code", "pre"}

    def __init__(self):
        super().__init__()
        self.depth, self.parts, self.mathjax = 0, [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "mjx-container":
            self.mathjax += 1
        if tag in self.SKIP:
            self.depth += 1

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.depth = max(self.depth - 1, 0)

    def handle_data(self, data):
        if not self.depth:
            self.parts.append(data)


# Measures the rendered page (after MathJax typesets) and writes the result into the
# DOM, which --dump-dom then prints: chromium's command line cannot evaluate a script.
_LAYOUT_SCRIPT = """
<script>
(function () {
  function box(el) { const r = el.getBoundingClientRect(); return [r.left, r.right, r.width]; }
  function name(el) {  // the table's first cell, or the figure's file
    const inner = el.querySelector("img") || el.querySelector("th, td");
    const text = inner && (inner.getAttribute("src") || inner.textContent);
    return '"' + (text || el.tagName).trim().replace(/\\s+/g, " ").slice(0, 60) + '"';
  }
  function measure() {
    const column = document.querySelector("article.bd-article") || document.body;
    const [left, right] = box(column);
    const problems = [];
    for (const table of column.querySelectorAll("table")) {
      const [l, r] = box(table);
      if (r > right + 1 || l < left - 1)
        problems.push("table wider than the column: " + name(table));
      let up = table.parentElement;
      while (up && up !== column) {
        if (up.scrollWidth > up.clientWidth + 1) {
          problems.push("table cut off (scrolls " + (up.scrollWidth - up.clientWidth) +
                        " px): " + name(table));
          break;
        }
        up = up.parentElement;
      }
    }
    for (const img of column.querySelectorAll("img")) {
      const [l, r, w] = box(img);
      if (r > right + 1 || l < left - 1)
        problems.push("figure wider than the column: " + name(img.parentElement));
      if (img.naturalWidth > 0 && w / img.naturalWidth < %(min_scale)s)
        problems.push("figure shown at " + (w / img.naturalWidth).toFixed(2) +
                      " of its width (labels unreadable): " + img.getAttribute("src"));
    }
    const out = document.createElement("pre");
    out.id = "skdp-layout";
    out.textContent = JSON.stringify({
      problems: problems, height: document.documentElement.scrollHeight,
      column: right - left});
    document.body.appendChild(out);
  }
  window.addEventListener("load", function () {
    const ready = window.MathJax && MathJax.startup && MathJax.startup.promise;
    (ready || Promise.resolve()).then(function () { setTimeout(measure, 200); });
  });
})();
</script>
"""


def _layout(browser, page):
    """The rendered DOM of ``page`` at desktop width, and the layout measured in it:
    problems (tables cut off, figures too wide or too shrunk) and the page's height."""
    source = HTML / page
    probe = source.with_name(f"_skdp_layout_{source.name}")  # same folder: same links
    script = _LAYOUT_SCRIPT % {"min_scale": MIN_FIGURE_SCALE}
    probe.write_text(source.read_text("utf-8").replace("</body>", script + "</body>"), "utf-8")
    try:
        dom = _chromium_run(browser, probe.relative_to(HTML),
                            f"--window-size={DESKTOP_WIDTH},1000", "--dump-dom")
    finally:
        probe.unlink()
    found = re.search(r'<pre id="skdp-layout">(.*?)</pre>', dom, re.S)
    assert found, f"{page}: the layout probe did not run"
    return dom[: found.start()] + dom[found.end() :], json.loads(unescape(found.group(1)))


def _render(browser, page, screenshot, height=None):
    """The page's DOM and visible text; saves a desktop-width screenshot of the whole
    page (``height`` None: the page's measured height) and checks its layout."""
    dom, layout = _layout(browser, page)
    height = height or min(int(layout["height"]) + 40, 16_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _chromium_run(browser, page, f"--window-size={DESKTOP_WIDTH},{height}",
                  f"--screenshot={screenshot}")
    assert screenshot.is_file() and screenshot.stat().st_size > 10_000
    assert not layout["problems"], f"{page} at {DESKTOP_WIDTH} px: {layout['problems']}"
    parser = _VisibleText()
    parser.feed(dom)
    return dom, "".join(parser.parts), parser.mathjax


def test_landing_page_in_browser():
    browser = _browser_or_skip()
    source = (HTML / "index.html").read_text("utf-8")
    assert "mathjax/tex-chtml.js" in source and "cdn.jsdelivr" not in source
    dom, text, rendered = _render(browser, "index.html", SCREENSHOTS / "landing.png")
    assert "\\(" not in text and "\\[" not in text, "raw LaTeX left on the landing page"
    assert rendered >= source.count('class="math') >= 1, "formulas not rendered by MathJax"
    table = re.search(r'<table[^>]*skdp-estimator-table.*?</table>', dom, re.S)
    assert table, "the estimator table is not on the landing page"
    # Each estimator links to its class page (a name alone is an unresolved reference).
    linked = re.findall(r'<a [^>]*href="api/generated/skdp\.\w+\.(\w+)\.html', table.group(0))
    missing = [name for name in ESTIMATORS if name not in linked]
    assert not missing, f"not linked from the rendered estimator table: {missing}"
    assert re.search(r'<img[^>]+decision_lists\.png', dom), "the landing figure is missing"


def test_class_page_in_browser():
    browser = _browser_or_skip()
    dom, text, _ = _render(browser, CLASS_PAGE, SCREENSHOTS / "class_page.png")
    assert "\\(" not in text, "raw LaTeX left on the class page"
    title = re.search(r"<h1[^>]*>(.*?)</h1>", dom, re.S)
    assert title and "DPDecisionListClassifier" in re.sub(r"<[^>]+>", "", title.group(1))
    summary = dom.find("skdp-privacy-summary")
    parameters = dom.find(">Parameters<")
    argument = dom.find('admonition-title">Privacy: the argument<')
    assert -1 < summary < parameters < argument, "privacy summary / Parameters / argument order"


@pytest.mark.parametrize("shot", ["choosing", "privacy_model", "class_page_continual"])
def test_page_layout_in_browser(shot):
    """The other pages of SCREENSHOT_PAGES: no raw LaTeX, no table cut off, figures
    within the column and legible (the landing and class pages are checked above)."""
    browser = _browser_or_skip()
    page = SCREENSHOT_PAGES[shot]
    _, text, _ = _render(browser, page, SCREENSHOTS / f"{shot}.png")
    raw = [tex for tex in ("\\(", "\\[", "^{") if tex in text]
    assert not raw, f"raw LaTeX {raw} left on {page} (write it as :math:`...`)"


# Every other page of the user guide, and the API and development pages: the same
# layout and raw-TeX checks, without a screenshot.
_USER_GUIDE = {f"user_guide/{path.stem}.html" for path in (DOCS / "user_guide").glob("*.rst")}
OTHER_PAGES = [*sorted(_USER_GUIDE - set(SCREENSHOT_PAGES.values())), "api.html",
               "development.html"]


@pytest.mark.parametrize("page", OTHER_PAGES)
def test_other_pages_layout_in_browser(page):
    browser = _browser_or_skip()
    dom, layout = _layout(browser, page)
    assert not layout["problems"], f"{page} at {DESKTOP_WIDTH} px: {layout['problems']}"
    parser = _VisibleText()
    parser.feed(dom)
    text = "".join(parser.parts)
    raw = [tex for tex in ("\\(", "\\[", "^{") if tex in text]
    assert not raw, f"raw LaTeX {raw} left on {page} (write it as :math:`...`)"


def test_gallery_pages_show_figures_and_output():
    browser = _browser_or_skip()
    examples = sorted(path.stem for path in (ROOT / "examples").glob("plot_*.py"))
    pages = {stem: (HTML / "auto_examples" / f"{stem}.html") for stem in examples}
    html = {stem: page.read_text("utf-8") for stem, page in pages.items() if page.is_file()}
    assert sorted(html) == examples, "a gallery page is missing"
    executed = {stem for stem, text in html.items() if f"sphx_glr_{stem}_001.png" in text}
    if not executed and os.environ.get("SKDP_REQUIRE_DOCS_BROWSER") != "1":
        pytest.skip("docs built without SKDP_DOCS_RUN_EXAMPLES=1: the gallery shows code only")
    assert executed == set(examples), f"no figure on {sorted(set(examples) - executed)}"
    no_output = [stem for stem, text in html.items() if "sphx-glr-script-out" not in text]
    assert not no_output, f"no printed output on {no_output}"
    # Their figures fit the column and are not shrunk past legibility (as on the pages above).
    problems = {stem: _layout(browser, f"auto_examples/{stem}.html")[1]["problems"]
                for stem in examples}
    problems = {stem: found for stem, found in problems.items() if found}
    assert not problems, f"gallery pages at {DESKTOP_WIDTH} px: {problems}"
    # Each example must run in under a minute (its page states the time it took).
    for stem, text in html.items():
        took = re.search(r"running time of the script:\D*(\d+) minutes ([\d.]+) seconds", text)
        assert took, f"{stem}: no running time on its page"
        seconds = 60 * int(took.group(1)) + float(took.group(2))
        assert seconds < 60, f"{stem} ran {seconds:.0f} s in the docs build (limit 60 s)"
