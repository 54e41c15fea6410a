"""
One privacy budget across a dask cluster
========================================

A private learner streamed through dask-ml's ``Incremental`` on a 2-worker
``LocalCluster``, then a ``GridSearchCV`` over the dask joblib backend — and every
release, on whichever worker process it ran, is charged to ONE shared
:class:`~skdp.PrivacyBudget` (a SQLite ledger here; ``postgresql://…`` for several
machines). When the budget cannot pay for the next fit, the search stops with
:class:`~skdp.BudgetExhaustedError` instead of running it.

Needs ``pip install dask[distributed] dask-ml``.
"""

import pathlib
import tempfile
import warnings

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster
from joblib import parallel_backend
from sklearn.model_selection import GridSearchCV

from skdp import DPWinnowClassifier, PrivacyBudget, TestingSeed

warnings.simplefilter("ignore")  # keep the example's output to the numbers

rng = np.random.default_rng(0)
n, d = 20_000, 20
X = rng.choice([-1.0, 1.0], size=(n, d))
y = (X[:, 0] > 0).astype(int)  # the label is the first feature

ledger = pathlib.Path(tempfile.mkdtemp()) / "budget.sqlite"
budget = PrivacyBudget(epsilon=20.0, delta=1e-4, store=f"sqlite:///{ledger}")

if __name__ == "__main__":  # worker processes re-import this file
    from dask_ml.wrappers import Incremental

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster):
        # 1. Stream dask blocks through partial_fit: each block is one charged update.
        Xd = da.from_array(X, chunks=(5_000, d))
        yd = da.from_array(y, chunks=5_000)
        model = DPWinnowClassifier(epsilon=2.0, delta=1e-6, margin=1.0, bounds=(-1, 1),
                                   classes=[0, 1], budget=budget, random_state=TestingSeed(0))
        inc = Incremental(model).fit(Xd, yd, classes=[0, 1])
        print(f"Incremental: accuracy {inc.score(X, y):.3f}; ledger now {budget.spent}")

        # 2. A grid search on the cluster: every fit of every fold charges the same ledger.
        search = GridSearchCV(model, {"epsilon": [1.0, 2.0]}, cv=3)
        with parallel_backend("dask"):
            search.fit(X, y)
        print(f"GridSearchCV: best {search.best_params_}, ledger now {budget.spent}")

        # 3. A second search the remaining budget cannot pay for is refused.
        try:
            with parallel_backend("dask"):
                GridSearchCV(model, {"epsilon": [4.0, 8.0]}, cv=3,
                             error_score="raise").fit(X, y)
        except Exception as exc:  # BudgetExhaustedError, possibly wrapped by dask
            print(f"third run refused: {type(exc).__name__}")
        print(f"spent in all: {budget.spent} of (ε={budget.epsilon}, δ={budget.delta})")
