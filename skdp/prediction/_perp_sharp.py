"""RectanglesPERP's ``"sharp"`` schedule: partitioned slices, svt Stopper, margin thresholds.

Issue 16 asked where the 10⁹ labelled rows of the ``"practical"`` preset at
ε = 1, d = 2 come from. Every copy's slice must hold m ≳ k points (a halted copy
restarts on the ≈ k queries it called "medium", and m outside points must read
"high"), while the BetweenThresholds noise is σ = (4/ε_0)·√(k'·ln(4/δ_0)) and the
thresholds sit several σ apart — so k ≈ (A·4·√ln(4/δ_0)/ε_0)², quadratic in every
factor. ``"practical"`` has A ≈ 93 (Δ ≥ σ·ln(8d·t_p/β_p) ≈ 31σ from a union bound
over all 2d·t_p ≈ 10¹¹ answers, and m ≥ 3Δ), ε_0 = ε/(2d) and δ_0 = δ_p/(8d)
≈ 4·10⁻¹⁹ (δ_p ≈ δ*/t_p is forced by Σ_i δ(i) ≤ δ* over t_p ≈ 3.5·10¹⁰ queries);
k ≈ 9·10⁷ and n = 4d·m/α ≈ 7.5·10⁹. This module's schedule changes five things:

1. **Slices from a random partition** (privacy). Every positive is assigned, by
   independent fair dice, to one of 2d parts; Right_j / Left_j take the m
   largest / smallest j-th coordinates of *their own* part. One record then sits
   in one part and changes one slice by at most one replacement, so each copy
   runs at ε_bt = (1 − s)·ε with δ_0 = δ_p — not ε/(2d), δ_p/(8d) — at the price
   of a 2d times larger sample (each strip must hold m points *of its part*).
2. **ChallengeBT with the svt Stopper** (privacy; :class:`~skdp.mechanisms.
   ChallengeBT` ``stopper="svt"``): k' − k = ⌈(4/ε_s)·ln(2/δ_0)⌉ instead of
   (8/ε_0)·ln(2/δ_0)·ln(T/δ_0), and only Thm 4.3's gap 4σ; ε_s = s·ε with the
   share s ∈ {1/8, …, 1/128} that needs the least k, phase by phase.
3. **Margins, not union bounds** (utility only): t_l = σ·ln(4t_p/k_p) — the
   expected number of count-0 queries a copy wrongly calls "medium" over the
   phase is ≤ t_p·½e^{−t_l/σ} = k_p/8 — t_u = t_l + 4σ, m_p = t_u + σ·ln(4t_p/k_p)
   (the same for the count-m outside queries), k_p ≥ m_p + (4/ε_s)·ln(4(t_p+1)/β_p)
   (a halted copy holds ≳ m_p mediums). An outside query is called "inside" only
   if its noise is below −(m_p − t_l) ≤ −(4 + ln(4t_p/k_p))·σ: probability
   ≤ e^{−12} at the sizes used, far below α_p. **Restarts on the m nearest
   mediums** (issue 26; utility, privacy unchanged — case (ii)(2) of the Lemma): a
   halted copy restarts on the m_p "medium" queries nearest its side's boundary,
   not on all of D_c. Alg. 5 restarts on all of D_c (≈ k_p ≫ m_p points) with the
   same t_l, t_u; with margins, up to k_p/8 count-0 queries are expected to be
   wrongly called "medium" — deep inside the target — and an adversary can repeat
   them; two such points in D_c made the interior "medium" and the error
   cascaded (ε = 1000, d = 2, m = 3–6, t_l ≈ 1.6, challenge adversary: blocks at
   0.29, 0.44, 0.34, 0.35 error, seeds 11, 1, 2, 3; now ≤ 0.03; at ε = 100,
   300 000 queries: 0.068–0.069 → 0.062–0.064).
4. **The sample pays for the ranks that err, not the slice** (utility only): a
   copy answers "outside" for the r_p = m_p − t_l + σ_p extreme ranks of its
   part, not for all m_p (:func:`strip_rows`), so n ≥ (2d)²·r_1/α_1 and
   t_p ≥ (2d)²·r_{p+1}/(γ·α_{p+1}).
5. **δ-schedule: the initial sample at δ(0) = δ*/4** (privacy). Initial-sample
   records are held by the 2d initial copies only, so those copies run at
   δ_0 = δ*/4 instead of δ_1 ≈ δ*/(4t_1) (:func:`solve_initial_copies`), and
   their BetweenThresholds at the whole ε (their Stopper's ε_s is charged to the
   query records whose "medium" bits it counts); their k covers a restart with
   phase 1's parameters. Every query still gets δ_p, the
   stream Σ_p t_p·δ_p ≤ δ*/2, the sample δ*/4: Σ_i δ(i) ≤ 3δ*/4 over an
   unbounded horizon, as before — only the split between δ(0) and the queries'
   δ(i), which Def. 3.8 leaves free, changes.
6. **The error split** (utility only): errors are one-sided and nested — phase
   p + 1 is cut from the positives phase p answered, inside phase p's box — so
   the error at any time is at most the sum of what each phase added, ≤ α_p
   for phase p; Σ_p α_p ≤ α is all the argument uses. α_1 = 3α/4 and
   α_p = α/2^(p+1) afterwards (:func:`phase_alpha`; Alg. 6 halves from α/2)
   cut n by 1/3 at the price of a ~2× longer first phase (t_1 pays 1/α_2).

Measured effect (δ* = 10⁻⁶, α = 0.1, β = 0.05, γ = 0.5, first-phase rows):
ε = 1, d = 2: 2.7·10⁷ (practical 7.5·10⁹, paper 6.4·10¹²); ε = 4, d = 2: 1.7·10⁶;
ε = 1, d = 1: 5.3·10⁶. Where the rest comes from: n = (2d)²·r/α_1 with
r = (t_u − t_l) + (m − t_u) + σ ≈ (4 + ln(4t_1/k) + 1)·σ_0 ≈ 13·σ_0, and the
initial copies' σ_0 = (4/ε)·√(k'·ln(16/δ*)) has k' ≥ m_1 (a halted initial
copy restarts with phase 1's parameters), where phase 1's own fixed point
k_1 ≈ (21·4·√ln(4/δ_1)/ε_bt)² runs at δ_1 ≈ δ*/(4t_1) ≈ 4·10⁻¹⁶ (forced by
Σ_i δ(i) ≤ δ* over its t_1 ≈ 6·10⁸ queries). So n ∝ c², c = 4 the constant
of Thm 4.3's noise (and its gap 4σ = 16/ε·√…): reaching 10⁷ at ε = 1, d = 2
needs c ≈ 2, i.e. a sharper BetweenThresholds privacy theorem; every other
factor here is a margin of a few σ or a logarithm.

7. **The ``"charged"`` preset** (privacy of the copies' inner BetweenThresholds
   only): the same schedule, but each phase's copies (and the initial copies)
   take whichever of two analyses of the *same* BetweenThresholds needs less —
   Thm 4.3 (σ = 4/ε_bt·√(k'·ln(4/δ_0)), gap 4σ) or the charged lemma of
   :mod:`skdp.mechanisms._charged_calibration` (the least σ it certifies for
   (ε_bt, δ_0/2, k') with gap 3σ, :data:`GAP_RATIOS`), recorded as
   ``bt_calibration``. The lemma gives c ≈ 2.15 instead of 4 in phase 1 at ε = 1
   (σ ≈ c/ε_bt·√(k'·ln(2/δ_0)); c ≈ 2.26 at ε = 4, 2.7 at ε = 16, as k' shrinks),
   so n drops ≈ 3.9× at ε = 1 (ε = 1, d = 2:
   6.9·10⁶ rows, t_1 = 1.5·10⁸; ε = 4: 5.1·10⁵), ≈ 2.2× at ε = 16; at ε = 100
   Thm 4.3 is the sharper one (the lemma needs its Rényi order λ ≥ 1, which
   caps what it certifies per query) and the preset equals ``"sharp"``.
   Measured split of the gain at ε = 1, d = 2 (single gap ratio g): n =
   7.21·10⁶ (g = 2), 6.92·10⁶ (g = 2.5 or 3), 7.09·10⁶ (g = 3.5). What is left
   (ε = 1, d = 2, n = 16·r_0/α_1 = 6.93·10⁶): r_0 = 12.9σ_0 = the gap 3σ_0 + the
   margin ln(4t_1/k) = 8.9σ_0 + σ_0, σ_0 = 2516 (k' = 85 765 ≥ m_1 + tail, phase
   1's σ_1 = 3876 at δ_1 = 1.6·10⁻¹⁵). Changing one factor at a time: margin
   ln(t/k) 0.79× (ln(16t/k) 1.23×) — a utility argument, not made here; α_1 =
   0.85α 0.96× (t_1 ×1.8), 0.5α 1.32×; the Stopper share or β = 0.1 ≤ 0.1 %;
   doubling every δ (δ* = 2·10⁻⁶) 0.97×, δ(0) = δ*/2 0.98× — so no δ schedule can
   buy more than a few per cent (a δ(i) decreasing within phase 1 does not help:
   a restart late in the phase may hold any of its queries, so its copy needs
   the smallest δ(i) of the phase anyway).

*Lemma (privacy of the sharp schedule; ``"sharp"`` and ``"charged"``).* Neighbours
are those of Stemmer's Fig. 1 / Def. 3.8: the initial samples S⁰, S¹ differ by adding
or removing one labelled record (challenge round 0), or the query of round i ≥ 1 is
x_i in one world and ⊥ in the other. Assume

(a) every copy — initial, phase p, restarted — is a ChallengeBT with the svt
    Stopper: Stopper ε_s, inner BetweenThresholds (ε_bt, δ_0/2) with cutoff k',
    certified by Thm 4.3 (gap 4σ) or by the charged lemma, k ≥ 4·ln(4/δ_0) and
    k' − k ≥ (4/ε_s)·ln(2/δ_0) (ChallengeBT re-checks all of it);
(b) phase p's copies and restarts have ε_bt,p + ε_s,p ≤ ε and δ_0 = δ_p; the
    initial copies ε_bt,0 ≤ ε, δ_0 = δ*/4 and ε_s,0 + ε_bt,1 ≤ ε;
(c) each phase draws, for every positive of its sample, an independent uniform
    part in {0, …, 2d − 1}; the copy of part c holds the m extremes on its axis of
    part c only; a restart holds the m extremes, on its axis and side, of its own
    D_c (the copy's "medium" queries since its last (re-)execution);
(d) t_p·δ_p ≤ δ*/2^(p+1).

Then for every adaptive adversary, horizon T and challenge index i, the views satisfy
Def. 3.8 with δ(0) = δ*/4 and δ(i) = δ_p for every query of phase p, so
Σ_i δ(i) ≤ δ*/4 + Σ_p δ*/2^(p+1) = 3δ*/4 ≤ δ* however long the stream runs.

*Proof* (reviewed independently for issue 26; Thm 4.6's simulation: Sim runs the
adversary and everything that does not depend on the challenge bit b, and outputs ⊥
when the challenge is not in round i — Stemmer's View-bar, which handles the
conditioning on r* = i; Helper runs what depends on b and is (ε, δ(i))-DP in b).
Two facts are used throughout.

F1 (one slice, per-query sensitivity 1). Let S be a part's values on axis j and
S′ = S plus or minus one value. On the m largest (Right_j) or smallest (Left_j) values
of S, ``_Copy.count`` answers max(0, min(m, |S|) − #{v ∈ S : v ≥ x}) (Right_j: the
slice's values below x) or max(0, min(m, |S|) − #{v ∈ S : v ≤ x}) (Left_j: above x);
min(m, |S|) and the count in S each move by at most 1, in the same direction, and
max(0, ·) is 1-Lipschitz, so every query value moves by at most 1, although the slice itself
may change by a replacement (one value in, one evicted). Thm 4.3's proof (Bun,
Steinke & Ullman 2017; Cohen & Lyu 2023) and the charged lemma use the two datasets
only through the query values, |f(D) − f(D′)| ≤ 1 for every query asked (the
charged lemma is stated so), hence apply to such a pair, and so does ChallengeBT's
lemma built on them.

F2 (one copy depends on b). When one interactive mechanism M depends on b and the
copies running concurrently with it do not (their data and coins are b-free), the
adversary can run those copies itself: the system is M facing a larger adversary,
no concurrent-composition theorem is needed (unlike ``"practical"``, whose 2d
copies all move with one record), and its privacy is M's.

*Case i = 0 (initial record r).* Copies hold positives only: a negative r changes
nothing. A positive r gets a die c; couple the other records' dice (i.i.d. and
data-free; that the number of dice drawn follows |S| changes nothing under ideal
randomness, every later draw being fresh in both worlds). Given the dice only the
initial copy of part c sees a different slice, with per-query sensitivity 1 (F1);
by (a) and ChallengeBT's lemma it is (ε_bt,0, δ*/4)-DP — whatever ε_s,0, its
Stopper reading only "medium" bits, functions of the BetweenThresholds transcript
and of the queries. Everything else — the other initial copies, restarts (which
hold queries), phase 2 (cut from phase-1 queries answered "inside"), the labels,
the public counters — is b-free given that copy's transcript (F2). A mixture over c
of (ε_bt,0, δ*/4)-indistinguishable pairs is one, and ε_bt,0 ≤ ε: (ε, δ(0)).

*Case i ≥ 1, in phase p.* Sim runs the mechanism itself up to the walk of round i
(the current copies' data do not depend on b) and then walks x_i through the copies
itself, drawing their BetweenThresholds noise (the ⊥ world draws none; the noise
streams are i.i.d., so every later query gets fresh noise in both worlds); the
challenge round's answer is not in the view. Exactly one of:

(i) *no copy answered "medium".* A BetweenThresholds with fixed thresholds keeps no
    state but its ⊤ count (the never-halting inner one none at all), its Stopper got
    a 0 (⊥: nothing), and ChallengeBT's Flag is reset by the next stopping query:
    the copies' states are equal in both worlds. A query answered "outside" (a
    "high") is never used again: the views coincide. A query answered "inside" is in
    phase p's D; Helper cuts phase p + 1's slices from D^b and runs the copy of x_i's
    part — as in case 0, with phase p + 1's copies: (ε_bt,p+1, δ_{p+1}), and
    δ_{p+1} = δ_p/6 ≤ δ_p. x_i is in no restart (restarts hold "medium" queries) and
    in no later phase (phase p + 2 is cut from phase p + 1's queries).
(ii) *copy c answered "medium"* (the walk stops there: x_i is labelled "outside"
    and not put in D). The worlds differ in copy c's Stopper, which holds one more 1
    from round i on, and in D_c, which holds x_i; the inner BetweenThresholds has no
    state to differ. Helper runs (1) copy c's svt Stopper. Unlike Stemmer's
    memoryless Stopper — which Helper may instantiate afresh "on m + b ones", as
    Thm 4.6 does — the svt Stopper keeps its threshold noise ρ, correlated with its
    earlier ⊥ answers. So Helper runs the Stoppers of all copies alive at round i
    from their instantiation (their bits before round i are b-free, supplied by
    Sim; equivalently, it draws ρ from its posterior given copy c's earlier
    answers, a b-free computation) and adds the bit b, at round i, to copy c's —
    the one Sim's walk named; the other Stoppers stay b-free (F2). Copy c's is the
    Stopper lemma's setting (one bit of an adaptively fed stream differs; monotone
    AboveThreshold, Lyu, Su & Li 2017): pure ε_s,c-DP. (2) If copy
    c halts before phase p ends, its restart on the m extremes of D_c^b — a
    ChallengeBT with phase p's parameters; D_c changes by one record, so by F1
    (S = D_c) every count moves by at most 1 — is (ε_bt,p, δ_p)-DP. (2) starts
    when (1) has answered ⊤ and halted, so this is sequential adaptive
    composition: (ε_s,c + ε_bt,p, δ_p) ≤ (ε, δ_p) by (b), where ε_s,c = ε_s,p, or
    ε_s,0 when copy c is an initial copy (then p = 1). If phase p
    ends first, D_c is discarded: (1) alone. Everything else is b-free (F2).

(d) sums the δ(i) as stated. ∎

*What the code computes (checked in the same review).* ``RectanglesRun``:
``_partition`` draws the dice per phase from the run's generator,
``_partition_copies`` gives part 2j to Right_j and 2j + 1 to Left_j (m extremes of
that part), ``_Copy.count`` is F1's count; ``_challenge_bt`` passes (ε_bt =
``epsilon_instance``, δ_0 = ``delta_instance``, ε_s = ``stopper_epsilon``, k, T =
t_p + 1, t_l, t_u, σ) to ChallengeBT, which recomputes k' and re-certifies
(σ, t_u − t_l, k') at (ε_bt, δ_0/2); the initial copies are used in phase 1 only, and
``_reexecute`` restarts with the *current* phase's parameters on the m extremes of
``pending`` (the copy's "medium" queries; ``_extremes``, as the slices) and starts
the new copy with an empty ``pending``; ``_segment`` stops each walk at the first
answer that is not "low", sends "medium" queries to ``pending`` only and "inside"
ones to the next phase's sample only. Here: ``_solve_share`` sets ε_bt = (1 − s)·ε,
ε_s = s·ε, δ_0 = δ_p; :func:`solve_initial_copies` ε_bt = ε, δ_0 = δ*/4, and only
shares with s·ε ≤ ε − ε_bt,1; ``_solve_phase`` sets δ_p = (δ*/2^(p+1))/t_p (the
geometric DeltaSchedule's phase budget); :meth:`PERPParameters.violations` checks
(b), (d), δ(0) + δ*/2 ≤ δ* and each phase's certificate (:func:`sharp_checks`). The
ledger charges (ε, δ*/4) at the first data-dependent answer and each query its δ(i):
per-record bookkeeping of Def. 3.8, not a composition. At the defaults (ε = 1,
δ* = 10⁻⁶, α = 0.1, β = 0.05, γ = 0.5, d = 2) ``"charged"`` has every phase and the
initial copies on the charged lemma, ε_bt = 0.96875, ε_s = 0.03125 (initial copies:
ε_bt = 1), δ_1 = 1.62·10⁻¹⁵, t_1 = 154,378,926 and 6,928,097 first-phase rows. The
review found every step of the previous text true and corrected it in three places,
none changing a number: a query sliced into phase p + 1 is protected by that phase's
δ_{p+1} (not δ_p); the svt Stopper has memory, so Helper cannot instantiate it afresh
as Thm 4.6 does (case (ii)(1)); and F1 (a replacement in a slice, not an add/remove)
is what the BetweenThresholds proofs are applied to. It made F2 (no concurrent
composition is needed), the simulated walk of round i, the dice coupling and the
ideal-randomness assumption explicit. Sim's walk is a fresh, b-free draw: in world
1 it is the real walk; in world 0 Helper, given b = 0, reproduces the ⊥ run exactly
whichever case it names, so the simulation is perfect in both worlds. ChallengeBT's
lemma itself uses an ideal mechanism that outputs a marker when its inner
BetweenThresholds halts first (see its docstring).
The audit ``tests/privacy/test_perp_sharp_audit.py`` runs both presets end to end
(fit and a stream; passes), and its broken twin — parts assigned by row *position*
(data-dependent parts) with noiseless BetweenThresholds — fails it; the svt
Stopper, ChallengeBT and charged lemmas have their own audits and twins
(``tests/privacy/test_charged_between_thresholds_audit.py`` for the last).
"""

import math
from dataclasses import replace

from ..mechanisms._charged_calibration import charged_epsilon, charged_noise_scale

__all__ = ["GAP_RATIOS", "SHARP_PRESETS", "STOPPER_SHARE", "STOPPER_SHARES", "initial_rows",
           "parts", "phase_alpha", "rows_needed", "sharp_checks", "solve_initial_copies",
           "solve_sharp_phase", "strip_rows"]

#: Presets on this module's schedule: ``"sharp"`` (Thm 4.3's BetweenThresholds) and
#: ``"charged"`` (the same schedule, BetweenThresholds calibrated by the lemma in
#: :mod:`skdp.mechanisms._charged_calibration`; see 7. above).
SHARP_PRESETS = ("sharp", "charged")
#: ``"charged"``: the gaps t_u − t_l = g·σ tried (g trades the gap, which the strip
#: rows pay once, against the noise σ, which every margin pays). Measured at ε = 1,
#: d = 2: first-phase rows 7.21·10⁶ (g = 2), 6.92·10⁶ (2.5, 3), 7.09·10⁶ (3.5); one g.
GAP_RATIOS = (3.0,)

#: Fraction s of ε given to the svt Stopper under explicit overrides (audits, tests).
STOPPER_SHARE = 0.0625
#: The shares s tried otherwise; each phase takes the one that needs the least k (the
#: initial copies: the fewest strip rows). s only trades ε_bt = (1 − s)·ε against
#: k' − k = (4/(sε))·ln(2/δ_0) and the Stopper tail; ε_bt + ε_s = ε for every s.
STOPPER_SHARES = (0.125, 0.0625, 0.03125, 0.015625, 0.0078125)


def parts(d):
    """Number of parts of the slice partition: one per copy."""
    return 2 * d


def phase_alpha(alpha, p):
    """α_p: the error phase p may add (3α/4, then α/2^(p+1); Σ_p α_p = α, see 6.)."""
    return 0.75 * alpha if p == 1 else alpha / 2 ** (p + 1)


def rows_needed(d, nxt, alpha_p, beta_p):
    """D-points phase p must see: (2d)²·r_{p+1}/α_{p+1} and 2d·8d·ln(2d/β_p)/α_p."""
    return parts(d) * max(2 * d * strip_rows(nxt) / nxt.alpha,
                          8 * d * math.log(2 * d / beta_p) / alpha_p)


def initial_rows(d, first, alpha, beta):
    """The initial sample: (2d)²·r_0/α_1 (r_0 of the initial copies) and 2d·8d·ln(2d/β)/α."""
    return parts(d) * max(2 * d * strip_rows(first) / phase_alpha(alpha, 1),
                          8 * d * math.log(2 * d / beta) / alpha)


def strip_rows(q):
    """r_p = m_p − t_l + σ_p: the ranks of a slice whose queries read "outside".

    A D-query inside the target is answered "outside" by Left_j only if its count
    (the rank from the slice's extreme end) plus noise reaches t_l: in expectation
    at most m_p − t_l + σ_p ranks of the part's positives (Σ_{i≥1} P(Lap(σ) ≥ i)
    ≤ σ). Their mass is r_p·2d/n (the part holds n·P(pos)/(2d) positives, each
    rank 1/that of the positive mass), so the 2d copies err on ≤ (2d)²·r_p/n of D,
    ≤ α_1 when n ≥ (2d)²·r_1/α_1 — and likewise t_p for phase p + 1.
    """
    return max(q.slice_size - q.threshold + q.bt_noise_scale, 1.0)


def _margin(length, k):
    """ln(4·t_p/k_p), at least 1: the per-side margin in units of σ."""
    return max(math.log(4.0 * length / k), 1.0)


def _stopper_tail(q):
    """(4/ε_s)·ln(4(t_p+1)/β_p): |ρ| + max |ν| of the svt Stopper, w.p. ≥ 1 − β_p/4."""
    return 4.0 / q.stopper_epsilon * math.log(4.0 * (q.length + 1) / q.beta)


def solve_sharp_phase(probe, overrides, k_floor=0, bt_epsilon=None, shares=STOPPER_SHARES,
                      calibration="stemmer"):
    """Fill in the copy parameters of one phase (``probe`` holds p, α_p, β_p, δ_p, t_p).

    ``probe.epsilon_instance`` is the global ε; ``k_floor``: a least k (the initial
    copies' k must cover a phase-1 restart); ``bt_epsilon``: the BetweenThresholds'
    ε when it is not (1 − s)·ε (the initial copies run theirs at ε, see
    :func:`solve_initial_copies`). Without overrides every share in
    :data:`STOPPER_SHARES` is solved and the least k kept (the initial copies:
    the fewest strip rows, which set n); ``shares``: the shares allowed;
    ``calibration``: the copies' BetweenThresholds analysis, ``"stemmer"`` (Thm 4.3,
    gap 4σ) or ``"charged"``: whichever of Thm 4.3 and the charged lemma (gap g·σ,
    g ∈ :data:`GAP_RATIOS`) needs less, chosen alike — both analyse the same
    algorithm; the lemma is the sharper one below ε ≈ 50, Thm 4.3 from ε ≈ 60 (the lemma
    needs λ ≥ 1, which caps what it certifies per query).
    """
    ratios = (None, *GAP_RATIOS) if calibration == "charged" else (None,)
    if overrides:
        # m, k or t_l are given: of the analyses, keep the one with the least noise
        # (both are certified for the same copy; at large ε it is Thm 4.3, whose noise
        # the lemma's λ ≥ 1 cannot match), as the search below keeps the least rows.
        candidates = [_solve_share(probe, overrides, k_floor, bt_epsilon, STOPPER_SHARE,
                                   ratio) for ratio in ratios]
        return min(candidates, key=lambda q: q.bt_noise_scale)
    candidates = [_solve_share(probe, overrides, k_floor, bt_epsilon, share, ratio)
                  for share in shares for ratio in ratios]
    return min(candidates, key=lambda q: _objective(q, bt_epsilon))


def _objective(q, bt_epsilon):
    return strip_rows(q) if bt_epsilon is not None else q.max_hard


def _noise_and_gap(eps_bt, delta0, k_prime, ratio):
    """(σ, t_u − t_l) of a copy's inner BetweenThresholds (ε_bt, δ_0/2, k').

    ``ratio`` None: Thm 4.3, σ = 4/ε_bt·√(k'·ln(4/δ_0)) and gap 4σ (widened by 10⁻⁹ so
    that t_u − t_l survives the rounding of t_l + gap; ChallengeBT re-checks it).
    Else the ``"charged"`` lemma: the least σ it certifies with gap ratio·σ.
    """
    if ratio is None:
        sigma = 4.0 / eps_bt * math.sqrt(k_prime * math.log(4.0 / delta0))
        return sigma, 4.0 * sigma * (1 + 1e-9)
    sigma = charged_noise_scale(eps_bt, delta0 / 2.0, k_prime, gap_ratio=ratio)
    return sigma, ratio * sigma


def _solve_share(probe, overrides, k_floor, bt_epsilon, share, ratio=None):
    epsilon = probe.epsilon_instance  # the caller passes the global ε here
    eps_s = share * epsilon
    eps_bt = (1.0 - share) * epsilon if bt_epsilon is None else bt_epsilon
    delta0 = probe.delta
    ell = math.log(4.0 / delta0)
    slack = math.ceil(4.0 / eps_s * math.log(2.0 / delta0))
    k_min = math.ceil(4.0 * ell)
    base = replace(probe, epsilon_instance=eps_bt, delta_instance=delta0, stopper_epsilon=eps_s,
                   stopper_noise_scale=2.0 / eps_s, slice_noise_bound=0.0)

    def numbers(k):
        sigma, gap = _noise_and_gap(eps_bt, delta0, k + slack, ratio)
        margin = sigma * _margin(base.length, k)
        lower = float(overrides["threshold"]) if "threshold" in overrides else margin
        m = overrides.get("slice_size") or math.ceil(lower + gap + margin)
        k_need = overrides.get("max_hard") or math.ceil(max(k_min, m + _stopper_tail(base),
                                                            k_floor))
        return sigma, gap, lower, int(m), max(int(k_need), k_min)

    k = max(int(overrides.get("max_hard", k_min)), k_min)
    for _ in range(10_000):  # k ↦ k_need(k) is increasing and ∝ √k·log: monotone ascent
        *_, k_need = numbers(k)
        if k_need <= k or "max_hard" in overrides:
            break
        k = k_need
    sigma, gap, lower, m, _ = numbers(k)
    return replace(base, slice_size=m, max_hard=k, k_prime=k + slack, threshold=lower,
                   upper_threshold=lower + gap, min_gap=gap, bt_noise_scale=sigma,
                   bt_calibration="stemmer" if ratio is None else "charged")


def solve_initial_copies(first, delta_star, overrides, epsilon, calibration="stemmer"):
    """The initial sample's copies: phase 1's numbers at the record-level δ(0) = δ*/4.

    Initial-sample records are held by these 2d copies only (phase 1's restarted
    copies hold queries, later phases the queries they labelled), so their copies
    may run at δ_0 = δ(0) = δ*/4 instead of δ_1 ≈ δ*/(4t_1) — ln(4/δ_0) ≈ 17
    instead of ≈ 37 at δ* = 10⁻⁶ — and their BetweenThresholds at the whole ε:
    their Stopper only sees "medium" bits, a function of the BetweenThresholds
    transcript, so ε_s is charged to the *query* records those bits come from
    (with the restarted phase-1 copy they join: ε_s + ε_bt,1 ≤ ε), never to an
    initial record (see the Lemma). A halted initial copy restarts with phase 1's
    parameters on its mediums, so its k covers m_1 plus the Stopper tail, and its
    Stopper share is at most phase 1's (ε_s ≤ ε − ε_bt,1).
    """
    probe = replace(first, delta=delta_star / 4.0, epsilon_instance=epsilon)
    floor = 0 if "max_hard" in overrides else first.slice_size + _stopper_tail(first)
    room = (epsilon - first.epsilon_instance) * (1 + 1e-12)
    shares = tuple(s for s in STOPPER_SHARES if s * epsilon <= room)
    return solve_sharp_phase(probe, overrides, k_floor=math.ceil(floor), bt_epsilon=epsilon,
                             shares=shares, calibration=calibration)


def sharp_checks(q, nxt, d, gamma, with_utility, restart=None, epsilon=None):
    """(ok, name) pairs of the sharp schedule's inequalities for phase ``q``.

    ``restart``: for the initial copies, phase 1 (whose parameters a halted one
    restarts with) instead of a next phase. ``epsilon``: the global ε.
    A phase whose copies use the charged lemma (``q.bt_calibration``) has the
    lemma's certificate checked instead of t_u − t_l ≥ 4σ.
    """
    if restart is None:
        split = [(q.epsilon_instance + q.stopper_epsilon <= epsilon * (1 + 1e-12),
                  "ε_bt + ε_s ≤ ε")]
    else:  # an initial record pays ε_bt; a query record ε_s + the restart's ε_bt
        split = [(q.epsilon_instance <= epsilon * (1 + 1e-12), "ε_bt ≤ ε"),
                 (q.stopper_epsilon + restart.epsilon_instance <= epsilon * (1 + 1e-12),
                  "ε_s + ε_bt,1 ≤ ε")]
    checks = [
        *split,
        (q.delta_instance <= q.delta * (1 + 1e-12), "δ_0 ≤ δ_p"),
        (q.max_hard >= 4 * math.log(4 / q.delta_instance), "k_p ≥ 4·ln(4/δ_0)"),
        (q.upper_threshold - q.threshold >= q.min_gap * (1 - 1e-12), "t_u − t_l ≥ 4σ"),
    ]
    if q.bt_calibration == "charged":
        checks[-1] = (charged_epsilon(q.bt_noise_scale, q.upper_threshold - q.threshold,
                                      q.k_prime, q.delta_instance / 2.0)
                      <= q.epsilon_instance * (1 + 1e-12),
                      "the charged lemma certifies (σ, t_u − t_l, k') at (ε_bt, δ_0/2)")
    if with_utility:
        margin = q.bt_noise_scale * _margin(q.length, q.max_hard)
        checks += [
            (q.threshold >= margin * (1 - 1e-12), "t_l ≥ σ·ln(4t_p/k_p)"),
            (q.slice_size >= q.upper_threshold + margin - 1e-9, "m_p ≥ t_u + σ·ln(4t_p/k_p)"),
            (q.max_hard >= q.slice_size + _stopper_tail(q) - 1e-9,
             "k_p ≥ m_p + (4/ε_s)·ln(4(t_p+1)/β_p)"),
        ]
        if restart is not None:  # the initial copies restart with phase 1's parameters
            checks.append((q.max_hard >= restart.slice_size + _stopper_tail(restart) - 1e-9,
                           "k ≥ m_1 + (4/ε_s)·ln(4(t_1+1)/β_1)"))
        else:
            need = rows_needed(d, nxt, q.alpha, q.beta)
            checks.append((q.length * gamma >= need * (1 - 1e-12),
                           "t_p ≥ 2d·max(2d·r_{p+1}/α_{p+1}, 8d·ln(2d/β_p)/α_p)/γ"))
    return checks
