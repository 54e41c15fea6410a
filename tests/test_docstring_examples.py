"""Every ``Examples`` section in skdp's docstrings must run and print what it says."""

import doctest
import importlib
import pkgutil

import pytest

import skdp

MODULES = sorted(
    name for _, name, _ in pkgutil.walk_packages(skdp.__path__, prefix="skdp.")
    if name != "skdp.__main__"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
