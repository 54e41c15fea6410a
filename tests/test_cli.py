import io
import subprocess
import sys

from skdp.__main__ import main
from skdp._demo import run_demo


def test_demo_prints_table_and_budget():
    out = io.StringIO()
    rows = run_demo(seed=0, out=out)
    text = out.getvalue()
    assert len(rows) >= 4
    for row in rows:
        assert row["what"] in text and row["privacy"].startswith("ε=")
    assert "PrivacyBudget(epsilon=16" in text and "refused, nothing spent" in text
    assert "optimal" in text


def test_main_version(capsys):
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip()


def test_python_dash_m_skdp_demo():
    done = subprocess.run([sys.executable, "-m", "skdp", "demo", "--seed", "1"],
                          capture_output=True, text=True, check=True, timeout=120)
    assert "non-private" in done.stdout
