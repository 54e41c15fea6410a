"""Sphinx configuration for the skdp documentation.

Build (from the repository root, after ``pip install ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The example gallery is rendered but *not executed* by default, so the build is
fast and deterministic in CI. Set ``SKDP_DOCS_RUN_EXAMPLES=1`` to execute the
``plot_*`` examples and embed their figures and output.

No extension here needs the network (intersphinx is deliberately not enabled).
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

# MathJax is loaded from a CDN by the *browser*; the build itself needs no network.

# -- Example gallery (sphinx-gallery) ----------------------------------------

RUN_EXAMPLES = os.environ.get("SKDP_DOCS_RUN_EXAMPLES", "0").strip() == "1"

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
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
}

# -- HTML output ---------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"skdp {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "auto_examples/index": []}
html_show_sourcelink = False

# -- Docstring pre-processing ----------------------------------------------------
#
# skdp docstrings carry a numpydoc-style "Privacy" section (see CONTRIBUTING.md),
# and some a "Utility" section.
# numpydoc knows only its fixed set of sections and silently *drops* any other one
# (it emits a plain Python UserWarning, which ``sphinx -W`` does not see). The
# guarantee is the most important part of a mechanism's docs, so we rewrite that
# section (and "Utility") into an admonition placed at the end of the extended summary,
# *before* numpydoc parses the docstring.

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


# skdp-specific docstring sections, rendered as admonitions of the same title.
CUSTOM_SECTIONS = ("Privacy", "Utility")


def privacy_section_to_admonition(app, what, name, obj, options, lines):
    """Turn every ``Privacy`` (or other custom) section into an admonition."""
    while True:
        start = next(
            (
                i
                for i in range(len(lines) - 1)
                if lines[i].strip() in CUSTOM_SECTIONS and _is_section_header(lines, i)
            ),
            None,
        )
        if start is None:
            return
        end = start + 2
        while end < len(lines) and not _is_section_header(lines, end):
            end += 1
        body = lines[start + 2 : end]
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        title = lines[start].strip()
        del lines[start:end]
        css = "important" if title == "Privacy" else "note"
        block = [f".. admonition:: {title}", f"   :class: {css}", ""]
        block += ["   " + line if line.strip() else "" for line in body]
        block += [""]
        first_section = next(
            (i for i in range(len(lines)) if _is_section_header(lines, i)), len(lines)
        )
        if first_section > 0 and lines[first_section - 1].strip():
            block.insert(0, "")
        lines[first_section:first_section] = block


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
    app.connect("autodoc-process-docstring", privacy_section_to_admonition, priority=400)
    app.connect("autodoc-process-docstring", escape_absolute_value_bars, priority=410)
    app.connect("builder-inited", _numpydoc_warnings_to_sphinx)
