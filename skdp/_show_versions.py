"""``skdp.show_versions()``: what to paste into a bug report (as ``sklearn.show_versions``)."""

from __future__ import annotations

import importlib.metadata
import platform
import sys

__all__ = ["show_versions"]

# What skdp runs on, then what its optional features use (ledger, tests, benchmarks, docs).
_DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "psycopg", "dask", "distributed",
                 "dp-accounting", "hypothesis", "pytest", "matplotlib", "sphinx")


def _versions() -> tuple[dict[str, str], dict[str, str]]:
    from . import __version__

    system = {
        "skdp": __version__,
        "python": sys.version.replace("\n", " "),
        "executable": sys.executable,
        "machine": platform.platform(),
    }
    packages = {}
    for name in _DEPENDENCIES:
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = "not installed"
    return system, packages


def show_versions() -> None:
    """Print versions of skdp, Python, the platform and skdp's dependencies.

    Examples
    --------
    >>> import skdp
    >>> skdp.show_versions()  # doctest: +ELLIPSIS
    System:
            skdp: ...
    """
    system, packages = _versions()
    for title, entries in (("System", system), ("Python dependencies", packages)):
        print(f"{title}:")
        width = max(len(k) for k in entries)
        for key, value in entries.items():
            print(f"{key.rjust(width + 4)}: {value}")
