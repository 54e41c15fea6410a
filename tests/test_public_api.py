"""The public surface: subpackages as attributes, PEP 561 marker, show_versions."""

import importlib
import pathlib

import pytest

import skdp

SUBPACKAGES = ("accounting", "audit", "compat", "datasets", "decision_list", "exceptions",
               "hypotheses", "linear", "mechanisms", "metrics", "model_selection", "online",
               "prediction", "preprocessing", "streams")


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_every_subpackage_is_an_attribute(name):
    assert getattr(skdp, name) is importlib.import_module(f"skdp.{name}")


def test_py_typed_ships_with_the_package():
    assert (pathlib.Path(skdp.__file__).parent / "py.typed").is_file()


def test_show_versions_prints_skdp_and_numpy(capsys):
    skdp.show_versions()
    out = capsys.readouterr().out
    assert f"skdp: {skdp.__version__}" in out and "numpy:" in out
