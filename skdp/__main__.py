"""Command line: ``skdp demo``, ``skdp serve``, ``skdp label``, ``skdp --version``
(or ``python -m skdp …``)."""

from __future__ import annotations

import argparse
import sys

_GETTING_STARTED = """\
skdp: differentially private learners for scikit-learn.

Try:
  skdp demo            each private learner next to its non-private baseline (< 60 s)
  skdp demo --quick    a shorter run of the same rows
  skdp --version       the installed version
  skdp versions        versions of skdp and of what it runs on (for bug reports)
  skdp serve MODEL.pkl a fitted private predictor over HTTP (pip install "skdp[serve]")
  skdp label MODEL.pkl PUBLIC.csv   private labels for a public set (train a student)

In Python:
  from skdp import DPDecisionListClassifier, PrivacyBudget
"""


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="skdp", description="Differentially private learners for scikit-learn."
    )
    parser.add_argument("--version", action="version", version=f"skdp {__version__}")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="run the demo: privacy spent and accuracy vs baselines")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--quick", action="store_true", help="smaller data, fewer rows")
    demo.add_argument("--verbose", action="store_true",
                      help="also print each row's paper-level details")
    sub.add_parser("version", help="print the version")
    sub.add_parser("versions", help="print versions of skdp and its dependencies")
    serve = sub.add_parser(
        "serve", help="serve a fitted private predictor over HTTP (bearer tokens)",
        description="Serve a pickled, fitted PrivatePredictor or SubsampleAggregatePredictor: "
        "POST /v1/predict, GET /v1/budget, /healthz, /docs. Tokens: --tokens FILE (one per "
        "line, # comments) or $SKDP_SERVE_TOKENS.")
    serve.add_argument("model", metavar="MODEL.pkl", help="the pickled fitted predictor")
    serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--tokens", metavar="FILE", default=None,
                       help="bearer tokens, one per line (default: $SKDP_SERVE_TOKENS)")
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument("--quota", type=int, default=None, metavar="ROWS",
                       help="rows each token may have answered (default: no quota)")
    label = sub.add_parser(
        "label", help="label a public CSV privately, to train a student model on",
        description="Answer every row of a public, unlabeled CSV with a pickled, fitted "
        "PrivatePredictor or SubsampleAggregatePredictor; any model trained on the labels "
        "is private by post-processing. The answers are charged to the predictor's "
        "budget (rows answered before are free). Exit status 3: the budget or a cap ran "
        "out; the labels released before it are written.")
    label.add_argument("model", metavar="MODEL.pkl", help="the pickled fitted predictor")
    label.add_argument("public", metavar="PUBLIC.csv",
                       help="public rows, the model's columns (header optional, required "
                       "if it was fitted on a DataFrame)")
    label.add_argument("--out", metavar="LABELS.csv", default=None,
                       help="where to write the labels (default: standard output)")
    return parser


def _label(args: argparse.Namespace) -> int:
    from .exceptions import BudgetExhaustedError
    from .serve._label import label_file

    try:
        n = label_file(args.model, args.public, args.out)
    except (ValueError, TypeError, OSError) as exc:  # the files: nothing was spent
        print(f"skdp label: {exc}", file=sys.stderr)
        return 2
    except BudgetExhaustedError as exc:
        done = getattr(exc, "n_answered", 0)
        print(f"skdp label: {exc} The {done} labels released before it were written.",
              file=sys.stderr)
        return 3
    if args.out is not None:
        print(f"skdp label: {n} labels written to {args.out}.", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        print(_GETTING_STARTED, end="")
        return 0
    if args.command == "version":
        from . import __version__

        print(__version__)
        return 0
    if args.command == "versions":
        from ._show_versions import show_versions

        show_versions()
        return 0
    if args.command == "serve":
        from .serve import TokenError, serve

        try:
            serve(args.model, host=args.host, port=args.port, tokens=args.tokens,
                  workers=args.workers, quota=args.quota)
        except (TokenError, TypeError, OSError) as exc:
            print(f"skdp serve: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.command == "label":
        return _label(args)
    from ._demo import run_demo

    run_demo(seed=args.seed, out=sys.stdout, quick=args.quick, verbose=args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
