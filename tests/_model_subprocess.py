"""Run a script against a pickled model in a fresh interpreter (a restart, another
machine's process): the durable-state tests of Yan's predictor and of PERP."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def in_new_process(tmp_path, model_bytes, script):
    """Run ``script`` in a fresh interpreter with ``clf`` loaded from the pickle; it
    leaves its results in ``out`` (pickled back)."""
    model, out = tmp_path / "model.pkl", tmp_path / "out.pkl"
    model.write_bytes(model_bytes)
    code = textwrap.dedent(f"""
        import pickle, warnings
        import numpy as np
        warnings.simplefilter("ignore")
        clf = pickle.loads(open({str(model)!r}, "rb").read())
        out = {{}}
    """) + textwrap.dedent(script) + f"\nopen({str(out)!r}, 'wb').write(pickle.dumps(out))\n"
    env = {**os.environ, "PYTHONPATH": ROOT}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return pickle.loads(out.read_bytes())
