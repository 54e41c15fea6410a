"""skdp's own docstring sections, known to scikit-learn's docstring parser.

skdp docstrings carry numpydoc-style "Privacy" and "Utility" sections (see
CONTRIBUTING.md). scikit-learn's HTML representation — what a notebook shows for an
estimator — parses the class docstring with its vendored copy of numpydoc to build the
parameter tooltips, and numpydoc warns ``UserWarning: Unknown section Privacy`` for any
section outside its fixed list: one warning per estimator class on a newcomer's first
display. Registering the two names as (empty) sections of that parser silences exactly
that warning and changes nothing else it parses (the tooltips read "Parameters" and
"Attributes"). The docs build rewrites the sections itself (docs/conf.py).
"""

CUSTOM_SECTIONS = ("Privacy", "Utility")


def register_sections() -> None:
    """Add :data:`CUSTOM_SECTIONS` to scikit-learn's vendored numpydoc (if present)."""
    try:
        from sklearn.externals._numpydoc.docscrape import NumpyDocString
    except ImportError:  # pragma: no cover - another scikit-learn layout: nothing to do
        return
    for name in CUSTOM_SECTIONS:
        NumpyDocString.sections.setdefault(name, [])


register_sections()
