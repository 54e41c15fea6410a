"""Pieces shared by the PERP audits (``test_perp_audit.py``, ``test_perp_sharp_audit.py``)."""

import numpy as np

from skdp.audit import audit_mechanism
from skdp.prediction import RectanglesPERPClassifier
from skdp.prediction._perp_phase import _SteppedChallengeBT


class AuditedRectangles(RectanglesPERPClassifier):
    """The estimator with its *utility* guard (rows needed by Lemma B.7) lowered.

    The designs are a few thousand hand-placed rows, fewer than 4d·m/α; the guard
    only decides whether the data are used at all and has no part in the privacy
    argument, so lowering it keeps the audited mechanism intact (and fast).
    """

    def _rows_needed(self, params, n_features):
        return 2


class NoiselessChallengeBT(_SteppedChallengeBT):
    """Broken building block: ChallengeBT whose BetweenThresholds adds no noise."""

    @property
    def _bt_query_noise_scale(self):
        return 0.0


def query_sampler(cls, data, stream, n_g, params, star):
    """Transcripts of fresh predictors answering ``stream``, with x* = ``star`` inserted
    after the first ``n_g`` queries (``present``) or not; x*'s own answer is withheld."""
    with_star = np.insert(stream, n_g, [star], axis=0)

    def sample(present, n, rng):
        out = np.empty((n, stream.shape[0]), dtype=np.int8)
        for i in range(n):
            clf = cls(random_state=rng, **params).fit(*data)
            if present:
                out[i] = np.delete(clf.predict(with_star), n_g)  # x*'s answer not released
            else:
                out[i] = clf.predict(stream)
        return out

    return sample


def query_audit(cls, design, n_samples, seed, n_probes=5, alpha=1e-6):
    """Audit a query record x* at 0.55 (see the designs); returns (result, phase-1 q)."""
    data, stream, n_g, params, q = design
    sample = query_sampler(cls, data, stream, n_g, params, 0.55)
    probes = [lambda t: t[:, -n_probes] == 1, lambda t: t[:, -n_probes:].mean(axis=1) > 0.5]
    result = audit_mechanism(sample, True, False, n_samples=n_samples, events=probes,
                             alpha=alpha, delta=q.delta, random_state=seed)
    return result, q
