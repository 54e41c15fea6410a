"""Private model selection: hyperparameter search whose cost does not grow with the grid.

* :class:`PrivateRandomizedSearchCV` — the random-stopping search of Liu & Talwar (STOC
  2019) and Papernot & Steinke (ICLR 2022): private candidates, private validation scores,
  only the best released, charged once for the whole search.
* :class:`SearchPlan` — what a search charges, computed from public parameters.

For scikit-learn's own ``GridSearchCV`` with private scores, see
:func:`skdp.metrics.make_private_scorer`.
"""

from ._search import PrivateRandomizedSearchCV, SearchPlan
from ._stopping import Stopping

__all__ = ["PrivateRandomizedSearchCV", "SearchPlan", "Stopping"]
