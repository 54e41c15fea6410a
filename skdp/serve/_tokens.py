"""Bearer tokens of ``skdp serve``: where they come from and how they are checked.

Tokens come from a file (``--tokens FILE``: one token per line, blank lines and
``#`` comments ignored) or from the environment variable ``SKDP_SERVE_TOKENS``
(tokens separated by whitespace or commas). None is built in: a server without
tokens refuses to start. A token is kept only as its SHA-256 digest, looked up in a
set (so no comparison leaks a prefix through timing); the per-token quota counts,
saved with the predictor's encrypted state, are keyed by that digest. A token is
never printed, logged or stored in clear.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping

__all__ = ["TOKENS_ENV", "TokenError", "load_tokens", "token_digest"]

TOKENS_ENV = "SKDP_SERVE_TOKENS"
_MIN_CHARS = 16


class TokenError(ValueError):
    """No usable token (the message never shows one)."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _parse(text: str, comments: bool) -> list[str]:
    tokens: list[str] = []
    for line in text.splitlines():
        if comments:
            line = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
        tokens.extend(t for t in re.split(r"[\s,]+" if not comments else r"\s+", line.strip())
                      if t)
    return tokens


def load_tokens(path: str | None = None,
                environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The digests of the accepted tokens (from ``path``, else the environment).

    Raises :class:`TokenError` when there are none, or when one is shorter than
    16 characters (a guessable token); the message names the line, never the token.
    """
    if environ is None:
        environ = os.environ
    if path is not None:
        with open(path, encoding="utf-8") as handle:
            tokens = _parse(handle.read(), comments=True)
        where = f"the tokens file {path}"
    else:
        tokens = _parse(environ.get(TOKENS_ENV, ""), comments=False)
        where = f"${TOKENS_ENV}"
    if not tokens:
        raise TokenError(
            f"no bearer tokens in {where}: skdp serve answers nobody without one. Put one "
            f"token per line in a file (--tokens FILE) or set {TOKENS_ENV}; e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'.")
    for i, token in enumerate(tokens, 1):
        if len(token) < _MIN_CHARS:
            raise TokenError(f"token #{i} in {where} is shorter than {_MIN_CHARS} characters "
                             "(guessable); use e.g. secrets.token_urlsafe(32).")
    return frozenset(token_digest(t) for t in tokens)
