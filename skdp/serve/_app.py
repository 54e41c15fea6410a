"""The ASGI application of ``skdp serve`` (Starlette; see ``skdp.serve``)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import pickle
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ..exceptions import BudgetExhaustedError, CapReachedError, StaleStateError
from ._tokens import TOKENS_ENV, load_tokens, token_digest

__all__ = ["MODEL_ENV", "QUOTA_ENV", "TOKENS_FILE_ENV", "create_app", "load_model"]

MODEL_ENV = "SKDP_SERVE_MODEL"
TOKENS_FILE_ENV = "SKDP_SERVE_TOKENS_FILE"
QUOTA_ENV = "SKDP_SERVE_QUOTA"
#: Most rows one request may ask (a larger batch is split by the client).
MAX_ROWS = 10_000
#: Largest request body accepted, in bytes.
MAX_BODY = 16 * 1024 * 1024


class _Refusal(Exception):
    """An HTTP error with a JSON body (the message never quotes request data)."""

    def __init__(self, status: int, error: str, message: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.headers = headers


def load_model(path: str) -> Any:
    """Load a fitted predictor from its pickle and make its running mechanism durable.

    Only load a pickle you made: unpickling runs code. The predictor must answer with
    released scores (:class:`~skdp.prediction.PrivatePredictor`,
    :class:`~skdp.prediction.SubsampleAggregatePredictor`,
    :class:`~skdp.prediction.RectanglesPERPClassifier`,
    :class:`~skdp.prediction.DecisionStumpPERPClassifier`).
    """
    return unpickle_predictor(path).make_durable()


def unpickle_predictor(path: str) -> Any:
    """The fitted predictor in a pickle (not yet durable: no store is touched)."""
    with open(path, "rb") as handle:
        model = pickle.load(handle)  # the operator's own model file
    if not hasattr(model, "make_durable") or not hasattr(model, "budget_"):
        raise TypeError(
            f"{path} holds a {type(model).__name__}; skdp serve and skdp label need a "
            "fitted PrivatePredictor, SubsampleAggregatePredictor or PERP predictor.")
    return model


def _rows(body: Any, n_features: int) -> np.ndarray:
    """``body["X"]`` as a float array, or a 422 that names positions, never values."""
    if not isinstance(body, dict) or "X" not in body:
        raise _Refusal(422, "bad_input", 'the body must be a JSON object {"X": [[...], ...]}.')
    rows = body["X"]
    if not isinstance(rows, list) or not rows:
        raise _Refusal(422, "bad_input", "X must be a non-empty list of rows.")
    if len(rows) > MAX_ROWS:
        raise _Refusal(422, "bad_input", f"X has {len(rows)} rows; at most {MAX_ROWS} per "
                       "request.")
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != n_features:
            got = f"{len(row)} entries" if isinstance(row, list) else "not a list"
            raise _Refusal(422, "bad_input", f"row {i} of X must be a list of {n_features} "
                           f"numbers ({got}).")
        for j, value in enumerate(row):
            # bool is an int in Python but not a feature value; JSON's NaN/Infinity
            # (which Python's parser accepts) are not finite.
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value)):
                raise _Refusal(422, "bad_input", f"X[{i}][{j}] is not a finite number.")
    return np.asarray(rows, dtype=np.float64)


def _refusal_of(exc: BudgetExhaustedError) -> _Refusal:
    """429: which limit refused the call. Nothing of the call is released."""
    cause = exc.__cause__
    if isinstance(cause, CapReachedError) or (
            not isinstance(cause, BudgetExhaustedError) and type(exc) is not BudgetExhaustedError):
        error = "cap_reached"  # a planned count (queries, hard queries, instances) is used
    else:
        error = "budget_exhausted"  # a ledger cannot pay
    return _Refusal(429, error, str(exc) + " No answer of this request was released.")


class _Service:
    """The predictor, its lock-free read paths and the quota, for one worker process."""

    def __init__(self, model: Any, tokens: frozenset[str], quota: int | None) -> None:
        self.model = model
        self.tokens = tokens
        self.quota = quota
        self._lock = threading.Lock()

    def authorize(self, header: str | None) -> str:
        if not header or not header.startswith("Bearer "):
            raise _Refusal(401, "unauthorized", "an Authorization: Bearer <token> header is "
                           "required.", {"WWW-Authenticate": "Bearer"})
        digest = token_digest(header[len("Bearer "):].strip())
        if digest not in self.tokens:
            raise _Refusal(401, "unauthorized", "the bearer token is not accepted.",
                           {"WWW-Authenticate": "Bearer"})
        return digest

    def _gate(self, digest: str):
        quota = self.quota

        def gate(state: Any, n: int):
            used = getattr(state, "quotas", {}).get(digest, 0)
            if quota is not None and used + n > quota:
                raise _Refusal(429, "quota_exceeded",
                               f"this token's quota of {quota} rows has {quota - used} left; "
                               f"the request asks {n}. No answer was released.")

            def commit() -> None:
                quotas = dict(getattr(state, "quotas", {}))
                quotas[digest] = used + n
                state.quotas = quotas

            return commit

        return gate

    def predict(self, digest: str, X: np.ndarray) -> dict[str, Any]:
        model = self.model
        with self._lock:
            try:
                scores = model._scores(X, model._proba, gate=self._gate(digest))
            except BudgetExhaustedError as exc:
                raise _refusal_of(exc) from None
            except StaleStateError:
                # Other replicas kept saving between this one's load and save (only
                # without the record's lock, e.g. a replica of an older skdp): retry.
                raise _Refusal(503, "busy", "the predictor's state kept moving on in other "
                               "replicas; nothing was released. Retry the request.",
                               {"Retry-After": "1"}) from None
        labels = model._labels(scores)
        proba = model._proba(scores)
        return {"y": labels.tolist(), "proba": proba.tolist()}

    def status(self, digest: str) -> dict[str, Any]:
        model = self.model
        state_of = lambda: model._state  # noqa: E731

        def read() -> dict[str, Any]:
            state = model._state
            answers = getattr(state, "answers", None)
            if answers is None:  # PERP: no answer memory, every row is the next query
                answered = int(getattr(state, "n_answered", 0))
            else:
                answered = int(sum(r[0].size for r in answers.runs))
            hard_left = None
            if getattr(state, "teachers", None) is not None and hasattr(model,
                                                                        "max_hard_queries_"):
                hard_left = max(0, int(model.max_hard_queries_) - int(model.n_hard_queries_))
            queries_left = None
            if hasattr(model, "n_queries_used_"):
                queries_left = max(0, int(model.n_queries) - int(model.n_queries_used_))
            used = getattr(state, "quotas", {}).get(digest, 0)
            return {"answered": answered, "hard_left": hard_left,
                    "queries_left": queries_left, "quota_used": used}

        with self._lock:
            info = model._state._durable.read(state_of, read)
        return {
            **_ledger_totals(model.budget_),
            # The user's budget the predictor also charges (shared with other uses).
            "budget": None if model.budget is None else _ledger_totals(model.budget),
            "queries_answered": info["answered"],
            "hard_queries_left": info["hard_left"],
            "planned_queries_left": info["queries_left"],
            "quota": {"limit": self.quota, "used": info["quota_used"]},
        }


def _ledger_totals(budget: Any) -> dict[str, Any]:
    spent, remaining = budget.spent, budget.remaining
    return {"spent": {"epsilon": spent.epsilon, "delta": spent.delta},
            "remaining": {"epsilon": remaining.epsilon, "delta": remaining.delta},
            "total": {"epsilon": budget.epsilon, "delta": budget.delta}}


def _openapi(n_features: int, classes: list[Any]) -> dict[str, Any]:
    error = {"type": "object", "properties": {"error": {"type": "string"},
                                              "message": {"type": "string"}}}
    errors = {
        "401": {"description": "no or unknown bearer token",
                "content": {"application/json": {"schema": error}}},
        "422": {"description": "bad input (the message names positions, never values)",
                "content": {"application/json": {"schema": error}}},
        "429": {"description": "budget_exhausted, cap_reached or quota_exceeded: nothing "
                               "of the request was released",
                "content": {"application/json": {"schema": error}}},
    }
    row = {"type": "array", "items": {"type": "number"}, "minItems": n_features,
           "maxItems": n_features}
    return {
        "openapi": "3.1.0",
        "info": {"title": "skdp private prediction service", "version": "1",
                 "description": "Each answer is released only after its privacy charge is "
                                "committed to the predictor's ledger; the transcript of all "
                                "answers is differentially private with respect to the "
                                "training data."},
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/predict": {"post": {
                "summary": "Answer queries privately (rows answered before are free)",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["X"],
                    "properties": {"X": {"type": "array", "items": row,
                                         "maxItems": MAX_ROWS}}}}}},
                "responses": {"200": {"description": f"labels from {classes} and [P(c0), "
                                                     "P(c1)] per row, in order",
                                      "content": {"application/json": {"schema": {
                                          "type": "object", "properties": {
                                              "y": {"type": "array"},
                                              "proba": {"type": "array", "items": {
                                                  "type": "array",
                                                  "items": {"type": "number"}}}}}}}},
                              **errors}}},
            "/v1/budget": {"get": {
                "summary": "Privacy spent and left, queries answered, hard queries left",
                "responses": {"200": {"description": "the ledger's state"},
                              "401": errors["401"]}}},
            "/healthz": {"get": {"summary": "liveness (no token needed)", "security": [],
                                 "responses": {"200": {"description": "ok"}}}},
        },
    }


_DOCS_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<title>skdp private prediction service</title></head><body>
<h1>skdp private prediction service</h1>
<p>OpenAPI 3.1 description: <a href="/openapi.json">/openapi.json</a>.
Every request to <code>/v1/*</code> needs <code>Authorization: Bearer &lt;token&gt;</code>.</p>
<pre>{spec}</pre></body></html>"""


def create_app(model: Any, tokens: frozenset[str], quota: int | None = None) -> Any:
    """The Starlette app serving ``model`` (already durable) to holders of ``tokens``
    (SHA-256 digests, :func:`~skdp.serve._tokens.load_tokens`), each allowed ``quota``
    rows (``None``: no quota)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse
    from starlette.routing import Route

    service = _Service(model, tokens, quota)
    # One thread answers for this worker: answering is serialised by the state's lock
    # anyway, and each thread holds its own store connections (PostgreSQL: two per
    # thread), which a pool of dozens of threads per replica would multiply.
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="skdp-serve")

    async def in_worker_thread(fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)
    spec = _openapi(int(model.n_features_in_), np.asarray(model.classes_).tolist())

    def refused(exc: _Refusal) -> JSONResponse:
        return JSONResponse({"error": exc.error, "message": exc.message},
                            status_code=exc.status, headers=exc.headers)

    async def predict(request: Request) -> JSONResponse:
        try:
            digest = service.authorize(request.headers.get("authorization"))
            length = request.headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
                raise _Refusal(413, "too_large", f"the body may hold at most {MAX_BODY} bytes.")
            raw = await request.body()
            if len(raw) > MAX_BODY:
                raise _Refusal(413, "too_large", f"the body may hold at most {MAX_BODY} bytes.")
            try:
                body = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                raise _Refusal(422, "bad_input", "the body is not valid JSON.") from None
            X = _rows(body, int(model.n_features_in_))
            return JSONResponse(await in_worker_thread(service.predict, digest, X))
        except _Refusal as exc:
            return refused(exc)

    async def budget(request: Request) -> JSONResponse:
        try:
            digest = service.authorize(request.headers.get("authorization"))
            return JSONResponse(await in_worker_thread(service.status, digest))
        except _Refusal as exc:
            return refused(exc)

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def openapi(request: Request) -> JSONResponse:
        return JSONResponse(spec)

    async def docs(request: Request) -> HTMLResponse:
        import html

        return HTMLResponse(_DOCS_PAGE.format(spec=html.escape(json.dumps(spec, indent=2))))

    return Starlette(routes=[
        Route("/v1/predict", predict, methods=["POST"]),
        Route("/v1/budget", budget, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/docs", docs, methods=["GET"]),
    ])


def app_from_env() -> Any:
    """The app of one uvicorn worker: model, tokens and quota from the environment that
    ``skdp serve`` set (tokens: the file's path, or ``SKDP_SERVE_TOKENS`` itself)."""
    tokens = load_tokens(os.environ.get(TOKENS_FILE_ENV) or None)
    quota = os.environ.get(QUOTA_ENV)
    return create_app(load_model(os.environ[MODEL_ENV]), tokens,
                      None if not quota else int(quota))


__all__ += ["TOKENS_ENV", "app_from_env"]
