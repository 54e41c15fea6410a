"""Throughput of the core mechanisms in :mod:`skdp.mechanisms` against plain numpy.

Each case times an skdp call and a plain-numpy reference doing the same job,
interleaved in one run (see ``_report.compare``), and reports the medians and the
throughput ratio skdp/reference (> 1: skdp is faster). The references skip
validation and, where noted, exactness: they are the "what would I write by hand"
baseline, not a privacy-equivalent implementation.

Targets (issue): exact discrete Laplace ≥ 10⁶ samples/s at every scale;
AboveThreshold answers 10⁶ queries in one ``process`` call in < 1 s.

Run ``python benchmarks/mechanisms.py`` (full, < 2 min on 2 cores) or
``--quick`` (smoke run, < 15 s). See ``benchmarks/README.md``.
"""

import math
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from _report import (  # benchmarks/ is on sys.path when this file runs as a script
    bar_chart,
    compare,
    format_rate,
    make_parser,
    median,
    output_dir,
    rng_for,
    write_report,
)

from skdp.mechanisms import (
    AboveThreshold,
    discrete_laplace,
    exponential_mechanism,
    laplace_mechanism,
    laplace_noise,
)

NAME = "mechanisms"
N = 10**6

DISCRETE_LAPLACE_TARGET = 1e6  # samples per second, every scale
ABOVE_THRESHOLD_TARGET = 1.0  # seconds for 10⁶ queries in one process() call


@dataclass
class Case:
    group: str
    name: str
    n: int  # units of work per call (samples, candidates, queries, draws)
    unit: str
    run: object  # () -> None, the skdp call
    reference: object  # () -> None, the plain-numpy call
    reference_name: str
    target: str = ""  # "rate" (≥ 10⁶/s) or "time" (< 1 s per call); "" for none
    result: dict = field(default_factory=dict)


# ------------------------------------------------------------------ the cases
def laplace_cases(seed):
    rng = rng_for(seed, "laplace")
    values = rng.normal(size=N)
    ref_rng = rng_for(seed, "laplace/ref")
    return [
        Case(
            "Laplace", "laplace_noise", N, "samples",
            lambda: laplace_noise(1.0, size=N, random_state=rng),
            lambda: ref_rng.laplace(0.0, 1.0, size=N),
            "rng.laplace",
        ),
        Case(
            "Laplace", "laplace_mechanism", N, "values",
            lambda: laplace_mechanism(values, 1.0, random_state=rng),
            lambda: values + ref_rng.laplace(0.0, 1.0, size=N),
            "values + rng.laplace",
        ),
    ]


def discrete_laplace_cases(seed):
    cases = []
    for scale in (0.5, 2.0, 20.0):
        rng = rng_for(seed, f"discrete_laplace/{scale}")
        ref_rng = rng_for(seed, f"discrete_laplace/{scale}/ref")
        p = -math.expm1(-1.0 / scale)  # 1 − α, α = exp(−1/scale)

        def reference(p=p, ref_rng=ref_rng):
            return ref_rng.geometric(p, size=N) - ref_rng.geometric(p, size=N)

        cases.append(
            Case(
                "discrete Laplace", f"discrete_laplace scale={scale:g} (exact)", N, "samples",
                lambda scale=scale, rng=rng: discrete_laplace(scale, size=N, random_state=rng),
                reference,
                "geometric − geometric (float, inexact)",
                target="rate",
            )
        )
    return cases


def _softmax_choice(scores, scale, rng, size=None):
    logits = scores / scale
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return rng.choice(scores.size, size=size, p=p)


def exponential_cases(seed):
    cases = []
    epsilon, sensitivity = 1.0, 1.0
    scale = 2.0 * sensitivity / epsilon  # non-monotone selection scale, as in skdp
    for n in (10**3, 10**6):
        scores = rng_for(seed, f"exp/scores/{n}").integers(0, 1000, size=n).astype(float)
        ref_rng = rng_for(seed, f"exp/{n}/ref")
        for method in ("gumbel", "permute_and_flip"):
            rng = rng_for(seed, f"exp/{n}/{method}")
            cases.append(
                Case(
                    "exponential", f"exp. mech. {method}, 1 draw, n={n:.0e}", n, "candidates",
                    lambda s=scores, m=method, r=rng: exponential_mechanism(
                        s, epsilon, sensitivity, method=m, random_state=r
                    ),
                    lambda s=scores, r=ref_rng: _softmax_choice(s, scale, r),
                    "softmax + rng.choice",
                )
            )
    scores = rng_for(seed, f"exp/scores/{N}").integers(0, 1000, size=N).astype(float)
    rng = rng_for(seed, "exp/size1000")
    ref_rng = rng_for(seed, "exp/size1000/ref")
    cases.append(
        Case(
            "exponential", "exp. mech. gumbel, size=1000, n=1e+06", 1000, "draws",
            lambda: exponential_mechanism(
                scores, epsilon, sensitivity, size=1000, random_state=rng
            ),
            lambda: _softmax_choice(scores, scale, ref_rng, size=1000),
            "softmax + rng.choice(size=1000)",
        )
    )
    return cases


def _svt_reference(values, threshold, epsilon, max_positives, rng):
    """AboveThreshold by hand: the same noise scales, vectorised, no bookkeeping."""
    eps1 = eps2 = epsilon / 2
    noisy_threshold = threshold + rng.laplace(0.0, 1.0 / eps1)
    noisy = values + rng.laplace(0.0, 2.0 * max_positives / eps2, size=values.size)
    above = noisy >= noisy_threshold
    if max_positives == 1:
        stop = int(np.argmax(above)) + 1 if above.any() else values.size
    else:
        positives = np.flatnonzero(above)
        stop = positives[max_positives - 1] + 1 if positives.size >= max_positives else values.size
    return above[:stop]


def above_threshold_cases(seed):
    epsilon = 1.0
    data_rng = rng_for(seed, "svt/values")
    # c = 1, nothing fires: background N(0, 1) against a threshold of 10⁴
    # (query noise Lap(4)), so every one of the 10⁶ queries is answered.
    quiet = data_rng.normal(size=N)
    # c = 100, queries that fire: 100 spikes of 10⁶ spread evenly, the last one at
    # the end, against a threshold of 10⁴ (query noise Lap(400)); the 100th ⊤ is
    # the last query, so again all 10⁶ queries are answered.
    firing = np.zeros(N)
    firing[np.linspace(N // 100, N - 1, 100).astype(int)] = 1e6
    threshold = 1e4

    def make_process(values, c, rng):
        def run():
            svt = AboveThreshold(threshold, epsilon, max_positives=c, random_state=rng)
            answers = svt.process(values)
            assert answers.size == N and svt.n_positives == (c if c > 1 else 0), svt
        return run

    cases = []
    for label, values, c in (("no ⊤, c=1", quiet, 1), ("100 ⊤, c=100", firing, 100)):
        rng = rng_for(seed, f"svt/{c}")
        ref_rng = rng_for(seed, f"svt/{c}/ref")
        cases.append(
            Case(
                "AboveThreshold", f"AboveThreshold.process, {label}", N, "queries",
                make_process(values, c, rng),
                lambda v=values, c=c, r=ref_rng: _svt_reference(v, threshold, epsilon, c, r),
                "vectorised noise + compare + argmax",
                target="time",
            )
        )

    # simulate: 100 independent runs × 10⁴ queries = 10⁶ query answers.
    runs, n_q = 100, 10**4
    sim_values = firing[: n_q].copy()
    sim_values[:: n_q // 10] = 1e6
    rng = rng_for(seed, "svt/simulate")
    ref_rng = rng_for(seed, "svt/simulate/ref")

    def simulate_reference():
        noisy_t = threshold + ref_rng.laplace(0.0, 2.0 / epsilon, size=(runs, 1))
        noisy = sim_values + ref_rng.laplace(0.0, 4.0 * 10 / epsilon, size=(runs, n_q))
        above = noisy >= noisy_t
        before = np.cumsum(above, axis=1) - above
        return np.where(before < 10, above, -1).astype(np.int8)

    cases.append(
        Case(
            "AboveThreshold", "AboveThreshold.simulate, 100 runs × 1e4, c=10", runs * n_q,
            "query answers",
            lambda: AboveThreshold.simulate(
                sim_values, runs, threshold, epsilon, max_positives=10, random_state=rng
            ),
            simulate_reference,
            "vectorised noise + compare + cumsum",
        )
    )

    # Interactive use: one query per call (per-call overhead, not bulk throughput).
    svt = AboveThreshold(threshold, epsilon, random_state=rng_for(seed, "svt/test"))
    ref_rng = rng_for(seed, "svt/test/ref")
    noisy_t = threshold + ref_rng.laplace(0.0, 2.0 / epsilon)
    cases.append(
        Case(
            "AboveThreshold", "AboveThreshold.test, 1 query per call", 1, "queries",
            lambda: svt.test(0.0),
            lambda: 0.0 + ref_rng.laplace(0.0, 4.0 / epsilon) >= noisy_t,
            "scalar rng.laplace + compare",
        )
    )
    return cases


# ------------------------------------------------------------------- running
def evaluate(case, repeats, min_time):
    run_times, ref_times = compare(case.run, case.reference, repeats=repeats, min_time=min_time)
    t_run, t_ref = median(run_times), median(ref_times)
    rate, ref_rate = case.n / t_run, case.n / t_ref
    if case.target == "rate":
        target = f"≥ {format_rate(DISCRETE_LAPLACE_TARGET)} samples/s"
        status = "PASS" if rate >= DISCRETE_LAPLACE_TARGET else "FAIL"
    elif case.target == "time":
        target = f"< {ABOVE_THRESHOLD_TARGET:g} s per 10⁶ queries"
        status = "PASS" if t_run < ABOVE_THRESHOLD_TARGET else "FAIL"
    else:
        target, status = "", ""
    case.result = {
        "group": case.group,
        "case": case.name,
        "n": case.n,
        "unit": case.unit,
        "skdp_median_s": t_run,
        "skdp_min_s": min(run_times),
        "skdp_max_s": max(run_times),
        "skdp_per_s": rate,
        "reference": case.reference_name,
        "ref_median_s": t_ref,
        "ref_min_s": min(ref_times),
        "ref_max_s": max(ref_times),
        "ref_per_s": ref_rate,
        "ratio": rate / ref_rate,
        "repeats": repeats,
        "target": target,
        "status": status,
        # markdown-only, formatted
        "n_fmt": f"{case.n:,}",
        "skdp_rate_fmt": f"{format_rate(rate)} {case.unit}/s",
        "ref_rate_fmt": f"{format_rate(ref_rate)} {case.unit}/s",
        "time_fmt": _format_time(t_run),
        "ratio_fmt": f"{rate / ref_rate:.2f}",
    }
    return case.result


def _format_time(seconds):
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-4:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


MD_COLUMNS = {
    "case": "case",
    "n_fmt": "n / call",
    "time_fmt": "skdp time / call",
    "skdp_rate_fmt": "skdp throughput",
    "reference": "numpy reference",
    "ref_rate_fmt": "reference throughput",
    "ratio_fmt": "skdp / ref",
    "target": "target",
    "status": "result",
}
CSV_COLUMNS = [
    "group", "case", "n", "unit", "skdp_median_s", "skdp_min_s", "skdp_max_s", "skdp_per_s",
    "reference", "ref_median_s", "ref_min_s", "ref_max_s", "ref_per_s", "ratio", "repeats",
    "target", "status",
]
GROUP_COLORS = {
    "Laplace": "tab:blue",
    "discrete Laplace": "tab:orange",
    "exponential": "tab:green",
    "AboveThreshold": "tab:purple",
}


def main(argv=None):
    parser = make_parser(__doc__.splitlines()[0])
    args = parser.parse_args(argv)
    repeats, min_time = (3, 0.02) if args.quick else (5, 0.1)
    out = output_dir(args)

    start = time.perf_counter()
    cases = [
        *laplace_cases(args.seed),
        *discrete_laplace_cases(args.seed),
        *exponential_cases(args.seed),
        *above_threshold_cases(args.seed),
    ]
    rows = []
    for case in cases:
        rows.append(evaluate(case, repeats, min_time))
        print(
            f"  {case.name:<50} {rows[-1]['skdp_rate_fmt']:>22}  ratio {rows[-1]['ratio_fmt']}",
            file=sys.stderr,
        )
    elapsed = time.perf_counter() - start

    failed = [r["case"] for r in rows if r["status"] == "FAIL"]
    notes = [
        f"Median of {repeats} interleaved timings per case (each ≥ {min_time:g} s of calls), "
        f"seed {args.seed}{', --quick' if args.quick else ''}; benchmark wall time "
        f"{elapsed:.0f} s.",
        "skdp / ref is the throughput ratio (> 1: skdp faster). References are plain numpy "
        "without validation; they are baselines, not private equivalents.",
        "The discrete Laplace reference (difference of two `rng.geometric` draws) is "
        "inexact: it goes through floating point. skdp's sampler (Canonne, Kamath & Steinke "
        "2020) uses only integer draws.",
        "The exponential-mechanism reference (max-shifted softmax + `rng.choice`) samples "
        "the same distribution as `method='gumbel'`; permute-and-flip is a different "
        "(better-utility) rule, compared against the same baseline.",
        "Targets: " + ("all met." if not failed else "FAILED: " + "; ".join(failed) + "."),
    ]

    def plot(path):
        bar_chart(
            path,
            [r["case"] for r in rows],
            [r["ratio"] for r in rows],
            title="skdp.mechanisms: throughput relative to a plain numpy reference",
            xlabel="throughput ratio skdp / reference (log scale; > 1: skdp faster)",
            log=True,
            reference=1.0,
            colors=[GROUP_COLORS[r["group"]] for r in rows],
        )

    write_report(
        NAME, rows, MD_COLUMNS, out_dir=out, title="Mechanism throughput: skdp vs numpy",
        notes=notes, plot=plot, csv_columns=CSV_COLUMNS,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
