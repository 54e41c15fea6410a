"""``skdp serve``: private prediction as a service over HTTP.

``skdp serve MODEL.pkl [--host 127.0.0.1] [--port 8000] [--tokens FILE] [--workers N]
[--quota ROWS]`` serves a fitted :class:`~skdp.prediction.PrivatePredictor`,
:class:`~skdp.prediction.SubsampleAggregatePredictor` or PERP predictor
(:class:`~skdp.prediction.RectanglesPERPClassifier`,
:class:`~skdp.prediction.DecisionStumpPERPClassifier`; ``pip install "skdp[serve]"``).
Yan's predictor and subsample-and-aggregate remember released answers (a row asked
again is answered the same, free); a PERP predictor answers every row as the next
query of its everlasting stream (a row asked again is a new query, charged its δ(i)).
Starlette on uvicorn: a small, well-kept ASGI stack (uvicorn's process manager gives
``--workers``), with no model layer or validation framework between the request and
the predictor, so every check that touches request data is ours and prints no value.

* ``POST /v1/predict`` ``{"X": [[…], …]}`` → ``{"y": […], "proba": [[…], …]}``, in
  order; each answer leaves only after its charge is committed to the ledger and the
  predictor's state is saved (:meth:`~skdp.prediction.PrivatePredictor.make_durable`).
* ``GET /v1/budget`` → spent, remaining, queries answered, hard queries left (and the
  caller's quota); ``GET /healthz``; ``GET /openapi.json`` and ``GET /docs``.
* Bearer tokens (:mod:`skdp.serve._tokens`): 401 without one; per-token quotas of
  answered rows (``--quota``), counted in the saved state so every worker and replica
  shares them; tokens are never logged.
* 429 with ``{"error": "budget_exhausted" | "cap_reached" | "quota_exceeded", …}`` and
  nothing released; 422 for bad input, naming positions, never values.
* The predictor's state lives in its ledger's store: SQLite (workers on one machine)
  or PostgreSQL (replicas on several machines, each with ``SKDP_LEDGER_KEY``).
"""

from __future__ import annotations

import os

from ._app import MODEL_ENV, QUOTA_ENV, TOKENS_FILE_ENV, create_app, load_model
from ._tokens import TOKENS_ENV, TokenError, load_tokens

__all__ = ["TOKENS_ENV", "TokenError", "create_app", "load_model", "load_tokens", "serve"]


def serve(model_path: str, host: str = "127.0.0.1", port: int = 8000,
          tokens: str | None = None, workers: int = 1, quota: int | None = None) -> None:
    """Run the service until interrupted (see the module docstring).

    The model and tokens are checked here, in the parent, so a mistake stops the
    server before it listens; each worker then loads them again (from the paths in
    its environment, never the tokens themselves on a command line).
    """
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError('skdp serve needs Starlette and uvicorn: pip install "skdp[serve]"'
                          ) from None
    load_tokens(tokens)
    path = os.path.abspath(model_path)
    load_model(path)  # fails early on a wrong file; creates the state record once
    os.environ[MODEL_ENV] = path
    if tokens is not None:
        os.environ[TOKENS_FILE_ENV] = os.path.abspath(tokens)
    else:
        os.environ.pop(TOKENS_FILE_ENV, None)
    if quota is not None:
        os.environ[QUOTA_ENV] = str(int(quota))
    else:
        os.environ.pop(QUOTA_ENV, None)
    uvicorn.run("skdp.serve._app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level="info", server_header=False)
