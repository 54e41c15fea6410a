"""Where skdp's examples write their figures: one directory, one name per script.

Every ``examples/plot_<name>.py`` saves its figure with::

    fig.savefig(figure_path("plot_<name>"))

so that running the examples (by hand, in the test suite or in the documentation
build) leaves ``plot_<name>.png`` files side by side in :func:`output_dir`, and
nothing in the current working directory.

The directory is ``$SKDP_OUTPUT_DIR`` when that environment variable is set (the
documentation build sets it to ``docs/_build/examples_output``), else
``skdp_output`` in the current working directory. It is created on first use.
Writing figures involves no private data, so this module has no privacy
consequence.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["OUTPUT_DIR_ENV", "figure_path", "output_dir"]

#: Environment variable that overrides the output directory.
OUTPUT_DIR_ENV = "SKDP_OUTPUT_DIR"

_DEFAULT_DIR = "skdp_output"
_NAME = re.compile(r"[A-Za-z0-9_-]+")


def output_dir() -> Path:
    """Return the directory examples write into, creating it if needed.

    Returns
    -------
    path : pathlib.Path
        ``$SKDP_OUTPUT_DIR`` if set and not empty, else ``./skdp_output``.

    Examples
    --------
    >>> from skdp.output import output_dir
    >>> output_dir().is_dir()
    True
    """
    path = Path(os.environ.get(OUTPUT_DIR_ENV, "").strip() or _DEFAULT_DIR)
    path.mkdir(parents=True, exist_ok=True)
    return path


def figure_path(name: str) -> Path:
    """Return ``output_dir() / (name + ".png")`` for an example's figure.

    Parameters
    ----------
    name : str
        The example's file name without ``.py``, e.g. ``"plot_winnow"``: letters,
        digits, ``_`` and ``-`` only (no directories, no extension).

    Returns
    -------
    path : pathlib.Path
        Where to save the figure.

    Raises
    ------
    ValueError
        If ``name`` is not a plain file stem.

    Examples
    --------
    >>> from skdp.output import figure_path
    >>> figure_path("plot_winnow").name
    'plot_winnow.png'
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            "figure_path(name) takes the example's file stem, e.g. 'plot_winnow' "
            "(letters, digits, '_' and '-'; no directory or extension)."
        )
    return output_dir() / f"{name}.png"
