"""Command line: ``skdp demo`` (or ``python -m skdp demo``)."""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="skdp", description="Differentially private learners for scikit-learn."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the demo: privacy spent and accuracy vs baselines")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sub.add_parser("version", help="print the version")
    args = parser.parse_args(argv)

    if args.command == "version":
        from . import __version__

        print(__version__)
        return 0
    from ._demo import run_demo

    run_demo(seed=args.seed, out=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
