import io
import subprocess
import sys

import pytest

import skdp
from skdp.__main__ import main
from skdp._demo import WIDTH, run_demo


def test_demo_prints_rows_in_plain_words_and_budget():
    out = io.StringIO()
    rows = run_demo(seed=0, out=out)
    text = out.getvalue()
    assert len(rows) >= 4
    for row in rows:
        assert row["what"].split()[0] in text and row["privacy"].startswith("ε=")
    assert "PrivacyBudget(epsilon=16" in text and "refused, nothing spent" in text
    assert "In all the demo spent ε=" in text
    assert "optimal" in text


def test_demo_fits_a_terminal_and_quick_skips_the_extras():
    out = io.StringIO()
    run_demo(seed=2, out=out, quick=True, verbose=True)
    lines = out.getvalue().splitlines()
    # Bytes, not characters: stricter, and what `awk length` measures in a C locale.
    assert max(len(line.encode()) for line in lines) <= WIDTH
    assert not any(line.startswith("composition") for line in lines)


def test_main_version(capsys):
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == skdp.__version__


def test_dash_dash_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"skdp {skdp.__version__}"


def test_bare_skdp_says_what_to_type(capsys):
    assert main([]) == 0
    text = capsys.readouterr().out
    assert "skdp demo" in text and "--version" in text


def test_versions_lists_dependencies(capsys):
    assert main(["versions"]) == 0
    text = capsys.readouterr().out
    for name in ("skdp", "python", "numpy", "scipy", "scikit-learn"):
        assert name in text


def test_python_dash_m_skdp_demo():
    done = subprocess.run([sys.executable, "-m", "skdp", "demo", "--seed", "1", "--quick"],
                          capture_output=True, text=True, check=True, timeout=600)
    assert "non-private" in done.stdout
