"""Sphinx configuration for the skdp documentation.

Build (from the repository root, after ``pip install ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Set ``SKDP_DOCS_RUN_EXAMPLES=1`` to execute the ``plot_*`` examples and embed
their figures and output (CI does; each example runs in well under a minute);
without it the gallery shows the code only. Executed examples save their figures
(``skdp.output.figure_path``) under ``docs/_build/examples_output``.

Neither the build nor the built pages need the network: intersphinx is not
enabled, and formulas are rendered by a copy of MathJax shipped inside the html
(``sphinx-mathjax-offline``), not by a CDN.
"""

import os
import re
import sys
import warnings
from pathlib import Path

DOCS_DIR = Path(__file__).resolve().parent
REPO_ROOT = DOCS_DIR.parent

# Document the checkout the docs live in, even when another skdp is installed.
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(DOCS_DIR))  # _gallery_checks, the gallery's image scraper


def _read_version():
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, flags=re.MULTILINE)
    return match.group(1) if match else "unknown"


# -- Project information -----------------------------------------------------

project = "skdp"
author = "The skdp developers"
copyright = "The skdp developers"
release = _read_version()
version = release

# -- General configuration ---------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # ships MathJax into _static: math renders offline
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
root_doc = "index"
default_role = "literal"

# autodoc / autosummary: API pages are generated from the docstrings into
# docs/api/generated/ (git-ignored) on every build.
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections carry the types

# numpydoc
numpydoc_show_class_members = False  # class pages list their own members (template)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# MathJax: ``sphinx-mathjax-offline`` copies MathJax 3 into ``_static/mathjax`` and
# points ``mathjax_path`` there, so the built pages render formulas without network.

# -- Example gallery (sphinx-gallery) ----------------------------------------

RUN_EXAMPLES = os.environ.get("SKDP_DOCS_RUN_EXAMPLES", "0").strip() == "1"
# Executed examples save their figures here (skdp.output.figure_path), not in examples/.
os.environ.setdefault("SKDP_OUTPUT_DIR", str(DOCS_DIR / "_build" / "examples_output"))



sphinx_gallery_conf = {
    "examples_dirs": str(REPO_ROOT / "examples"),
    "gallery_dirs": str(DOCS_DIR / "auto_examples"),
    # Only ``plot_*`` files are ever executed, and only when asked to.
    "filename_pattern": r"/plot_",
    "plot_gallery": "True" if RUN_EXAMPLES else "False",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    # sphinx-gallery's matplotlib scraper after benchmarks/_plot.py's overlap check
    # (docs/_gallery_checks.py): an example whose figure has overlapping tick labels or a
    # legend over its data fails the build.
    "image_scrapers": ("_gallery_checks",),
    "min_reported_time": 0,  # every page states its run time (the docs test reads it)
    # The summary page of execution times loads its table script from a CDN; the
    # docs stay offline without it (each example's page shows its own time).
    "write_computation_times": False,
}

# -- HTML output ---------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"skdp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    # No "On this page" column on the landing page: its table and figure get the width.
    "secondary_sidebar_items": {"**": ["page-toc"], "index": []},
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# No section navigation on the pages whose wide tables and benchmark figures need the
# width: with it the column is ~620 px at 1280 px, and the choosing page's 900-px
# figures and the 7-8 column tables of the others scroll sideways (cut off).
# tests/test_docs_build.py checks every user-guide page at 1280 px.
WIDE_PAGES = ["user_guide/choosing", "user_guide/audit_power", "user_guide/model_selection"]
html_sidebars = {"index": [], "auto_examples/index": [], "api/generated/*": [],
                 **{page: [] for page in WIDE_PAGES}}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["skdp.css"]

# -- Docstring pre-processing ----------------------------------------------------
#
# skdp docstrings carry a numpydoc-style "Privacy" section (see CONTRIBUTING.md),
# and some a "Utility" section.
# numpydoc knows only its fixed set of sections and silently *drops* any other one
# (it emits a plain Python UserWarning, which ``sphinx -W`` does not see). The
# guarantee is the most important part of a mechanism's docs, so *before* numpydoc
# parses the docstring we rewrite "Privacy" into a short summary box before Parameters
# plus the full argument at the start of Notes, and "Utility" into a box in Notes.

_SECTION_UNDERLINE = re.compile(r"^(-{3,}|={3,})$")


def _is_section_header(lines, i):
    if i + 1 >= len(lines):
        return False
    title, underline = lines[i].rstrip(), lines[i + 1].rstrip()
    return (
        bool(title.strip())
        and not title.startswith(" ")
        and bool(_SECTION_UNDERLINE.match(underline))
        and len(underline) == len(title)
    )


# skdp-specific docstring sections (see CONTRIBUTING.md).
CUSTOM_SECTIONS = ("Privacy", "Utility")

# A class page shows a *short* privacy summary before Parameters and the full,
# paper-level argument after them (inside the numpydoc "Notes" section). The summary
# is the section's first paragraph when that is short, else its first sentence
# (cut at the first top-level ". " or ": "), else its first SUMMARY_WORDS words.
SUMMARY_WORDS = 60
_ABBREVIATIONS = ("al", "Thm", "Def", "App", "Alg", "Eq", "Sec", "Prop", "Cor", "e.g", "i.e",
                  "cf", "vs", "resp", "Fig", "Ch", "p", "pp", "No", "Lem")


def _section_bounds(lines, title):
    """(start, end) line indices of the first numpydoc section ``title``, or None."""
    start = next(
        (
            i
            for i in range(len(lines) - 1)
            if lines[i].strip() == title and _is_section_header(lines, i)
        ),
        None,
    )
    if start is None:
        return None
    end = start + 2
    while end < len(lines) and not _is_section_header(lines, end):
        end += 1
    return start, end


def _strip_blank_edges(body):
    body = list(body)
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return body


def _sentences(text):
    """Split at top-level sentence ends (". " + capital, at least 6 words) and at
    ": " after at least 12 words (not inside brackets or ``literals``)."""
    depth, quote, start = 0, False, 0
    for k, char in enumerate(text):
        if char == "`":
            quote = not quote
        if quote:
            continue
        if char in "([":
            depth += 1
        elif char in ")]":
            depth = max(depth - 1, 0)
        elif depth == 0 and k + 2 < len(text) and text[k + 1] == " " and char in ".:":
            head = text[start:k]
            word = head.rsplit(" ", 1)[-1].lstrip("(")
            if char == "." and (word in _ABBREVIATIONS or not text[k + 2].isupper()):
                continue
            if len(head.split()) >= (6 if char == "." else 12):
                yield head.strip() + "."
                start = k + 2
    if text[start:].strip():
        yield text[start:].strip()


# A summary must state the guarantee: it runs up to the first sentence that names it.
_GUARANTEE = re.compile(r"DP\b|[Pp]rivate|[Pp]rivacy|everlasting")


def _first_sentence(text):
    """The first sentences of ``text`` up to and including one that names the
    guarantee (the whole first sentence if none does)."""
    sentences = list(_sentences(text))
    for k, sentence in enumerate(sentences):
        if _GUARANTEE.search(sentence):
            return " ".join(sentences[: k + 1])
    return sentences[0] if sentences else text


def privacy_summary(body):
    """The short privacy statement shown before Parameters (rST, one paragraph).

    Returns ``(summary, complete)`` where ``complete`` says the summary is the whole
    section (then the section is not repeated after Parameters)."""
    paragraphs, current = [], []
    for line in body:
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    if not paragraphs:
        return "", True
    first = " ".join(paragraphs[0])
    plain = not any(line.startswith(("..", "* ", "- ", ">>>")) for line in paragraphs[0])
    if plain and len(first.split()) <= SUMMARY_WORDS:
        return first, len(paragraphs) == 1
    summary = _first_sentence(first) if plain else ""
    words = summary.split()
    if len(words) > SUMMARY_WORDS:
        # Cut at a word where inline markup (``code``, *emphasis*) and brackets close.
        def is_open(head):
            return any(head.count(c) % 2 for c in "`*") or head.count("(") > head.count(")")

        cut = SUMMARY_WORDS
        while cut > 0 and is_open(" ".join(words[:cut])):
            cut -= 1
        summary = " ".join(words[:cut]) + " …"
    return summary, False


def _indented(body):
    return ["   " + line if line.strip() else "" for line in body]


def _insert_before_first_section(lines, block):
    first_section = next((i for i in range(len(lines)) if _is_section_header(lines, i)), len(lines))
    if first_section > 0 and lines[first_section - 1].strip():
        block = ["", *block]
    lines[first_section:first_section] = block


def _append_to_notes(lines, block):
    """Put ``block`` at the start of the Notes section (created if missing)."""
    notes = _section_bounds(lines, "Notes")
    if notes is None:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", "Notes", "-----", "", *block]
    else:
        lines[notes[0] + 2 : notes[0] + 2] = ["", *block]


def privacy_sections(app, what, name, obj, options, lines):
    """Render ``Privacy`` as a short summary box before Parameters plus the full
    argument in Notes, and ``Utility`` in Notes (numpydoc would drop both)."""
    found = {}
    for title in CUSTOM_SECTIONS:
        bounds = _section_bounds(lines, title)
        if bounds is not None:
            found[title] = _strip_blank_edges(lines[bounds[0] + 2 : bounds[1]])
            del lines[bounds[0] : bounds[1]]
    notes = []
    if "Privacy" in found:
        summary, complete = privacy_summary(found["Privacy"])
        more = "" if complete else " The full argument is in *Privacy: the argument* under Notes."
        box = [".. admonition:: Privacy", "   :class: important skdp-privacy-summary", ""]
        box += _indented([summary + more, ""])
        _insert_before_first_section(lines, box)
        if not complete:
            notes += [".. admonition:: Privacy: the argument", "   :class: important", ""]
            notes += [*_indented(found["Privacy"]), ""]
    if "Utility" in found:
        notes += [".. admonition:: Utility", "   :class: note", ""]
        notes += [*_indented(found["Utility"]), ""]
    if notes:
        _append_to_notes(lines, notes)


# Docstrings use plain-text maths such as ``exp(-|z| / b)``; in reStructuredText a
# ``|z|`` is a substitution reference and fails the build. Escape such pipes in
# prose (never inside literals, roles, doctests, literal blocks or tables).
_INLINE_MARKUP = re.compile(r"(``.+?``|:[\w:+.-]+:`[^`]*`|`[^`]*`_{0,2})")
_ABSOLUTE_VALUE = re.compile(r"(?<![\\|])\|([^|\s](?:[^|]*?[^|\s])?)\|(?![|_])")


def _escape_prose_pipes(line):
    parts = _INLINE_MARKUP.split(line)
    for k in range(0, len(parts), 2):  # even parts are outside inline markup
        parts[k] = _ABSOLUTE_VALUE.sub(r"\\|\1\\|", parts[k])
    return "".join(parts)


def escape_absolute_value_bars(app, what, name, obj, options, lines):
    """Escape ``|x|`` written as absolute values so docutils does not read them
    as substitution references."""
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith((">>>", "...", "|", "+", "..")):
            if stripped.startswith(".. ") and stripped.rstrip().endswith("::"):
                literal_indent = indent
            continue
        if "|" in line:
            lines[i] = _escape_prose_pipes(line)
        if stripped.rstrip().endswith("::"):
            literal_indent = indent


def _numpydoc_warnings_to_sphinx(app):
    """Report numpydoc's parse warnings (e.g. an unknown section, whose content it
    drops) through Sphinx, so that ``-W`` turns them into build failures."""
    from sphinx.util import logging as sphinx_logging

    logger = sphinx_logging.getLogger("numpydoc")
    previous = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, UserWarning) and "numpydoc" in str(filename):
            logger.warning("numpydoc: %s", message)
        else:
            previous(message, category, filename, lineno, file, line)

    warnings.showwarning = showwarning
    # Report every occurrence, not just the first one per line of numpydoc.
    warnings.filterwarnings("always", category=UserWarning, module=r"numpydoc")


def _register_privacy_section():
    """Let numpydoc parse ``Privacy`` as a known section (numpydoc re-parses raw
    docstrings, e.g. for signatures); its content is rendered by the hook above."""
    from numpydoc.docscrape import NumpyDocString

    for title in CUSTOM_SECTIONS:
        NumpyDocString.sections.setdefault(title, [])


def setup(app):
    _register_privacy_section()
    # numpydoc's own handler runs at the default priority 500; run before it.
    app.connect("autodoc-process-docstring", privacy_sections, priority=400)
    app.connect("autodoc-process-docstring", escape_absolute_value_bars, priority=410)
    app.connect("builder-inited", _numpydoc_warnings_to_sphinx)
