"""Dawid and Skene's (1979) EM estimate of each annotator's confusion matrix and each item's true label.

Pure numpy over plain (item, annotator, label) triples, no database, so every number can be checked by hand
(tests/test_annotate_dawid_skene.py does, and checks it against crowd-kit's `DawidSkene`).

The model: item j has a true label z_j with prior P(z_j = c) = p_c; annotator w answers label k with probability
pi_w[c, k] given truth c, independently of everything else. EM, as crowd-kit runs it:

- **Initialisation**: T_j = the share of item j's answers that give each label (majority vote as probabilities),
  then the anchored items' rows are replaced (below), p = mean of T over items, and one M-step.
- **M-step**: pi_w[c, k] = (sum over items j that w answered with k of T_j[c] + `smoothing`), each row c
  normalised over k; p = mean of T over items (floored at 1e-10).
- **E-step**: T_j[c] proportional to p_c * prod over j's answers (w, k) of pi_w[c, k], computed in logs.
- **Anchors**: items whose truth is known (gold items, admin decisions) have T_j set to that truth after every
  E-step (crowd-kit's `true_labels`); a truth that is a set of labels is spread evenly over them.
- **Convergence**: stop when no posterior moved by more than `tol` in an iteration, or after `max_iter`.

Derived here: an annotator's **competence** is the probability that their answer equals the truth on an item
drawn from the prior, sum_c p_c pi_w[c, c] (1 for a perfect annotator, 1/K for one answering at random, 0 for one
always wrong). An item's **decision** is the label of highest posterior; when two labels share the highest
posterior (within 1e-9) there is none (a tie: the admin decides). Uncertainty: the maximum posterior and the
entropy of the posterior in bits.

`smoothing` adds that many pseudo-answers to every cell of every confusion matrix (a symmetric Dirichlet prior,
maximum a posteriori): with 0 (crowd-kit's choice) an annotator with two answers that agree with the crowd is
"perfect"; the campaign uses 0.5, so a few answers say little either way.
"""
from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

EPS = 1e-10
TIE = 1e-9


@dataclass(frozen=True)
class Estimate:
    """What EM found: labels in a fixed order, per-item posteriors, per-annotator confusion and competence."""

    labels: tuple[str, ...]
    prior: dict[str, float]
    posterior: dict[Hashable, dict[str, float]]
    confusion: dict[Hashable, list[list[float]]]  # pi_w[c][k]: truth c (row), answer k (column), `labels` order
    competence: dict[Hashable, float]
    answers: dict[Hashable, int]  # answers per annotator
    iterations: int
    converged: bool

    def decision(self, item: Hashable) -> str | None:
        """The item's label of highest posterior; None on a tie (two labels within `TIE` of the highest)."""
        values = self.posterior[item]
        best = max(values.values())
        leaders = [label for label, value in values.items() if value >= best - TIE]
        return leaders[0] if len(leaders) == 1 else None

    def entropy(self, item: Hashable) -> float:
        """The posterior's entropy in bits (0: certain; log2 K: nothing known)."""
        return -sum(p * math.log2(p) for p in self.posterior[item].values() if p > 0)


def estimate(answers: Sequence[tuple[Hashable, Hashable, str]], labels: Sequence[str],
             anchors: Mapping[Hashable, Sequence[str]] | None = None, *, smoothing: float = 0.0,
             max_iter: int = 100, tol: float = 1e-6) -> Estimate:
    """Dawid-Skene EM over (item, annotator, label) answers; `anchors` maps an item to its known label(s)."""
    labels = tuple(labels)
    index = {label: k for k, label in enumerate(labels)}
    unknown = sorted({label for *_, label in answers if label not in index})
    if unknown:
        raise ValueError(f"answers with labels outside {labels}: {unknown}")
    items = list(dict.fromkeys(item for item, _, _ in answers))
    workers = list(dict.fromkeys(worker for _, worker, _ in answers))
    row = {item: j for j, item in enumerate(items)}
    col = {worker: w for w, worker in enumerate(workers)}
    j_of = np.array([row[a[0]] for a in answers], dtype=int)
    w_of = np.array([col[a[1]] for a in answers], dtype=int)
    k_of = np.array([index[a[2]] for a in answers], dtype=int)
    n_items, n_workers, n_labels = len(items), len(workers), len(labels)
    fixed = _anchor_rows(anchors or {}, row, index, n_labels)

    posterior = np.zeros((n_items, n_labels))
    np.add.at(posterior, (j_of, k_of), 1.0)
    posterior /= np.maximum(posterior.sum(axis=1, keepdims=True), EPS)  # majority vote as probabilities
    _clamp(posterior, fixed)
    prior, confusion = _m_step(posterior, j_of, w_of, k_of, n_workers, smoothing)
    iterations, converged = 0, n_items == 0
    while not converged and iterations < max_iter:
        iterations += 1
        log_like = np.tile(np.log(prior), (n_items, 1))
        np.add.at(log_like, j_of, np.log(confusion[w_of, :, k_of]))  # answer (w, k): log pi_w[c, k] for every c
        updated = np.exp(log_like - log_like.max(axis=1, keepdims=True))
        updated /= updated.sum(axis=1, keepdims=True)
        _clamp(updated, fixed)
        converged = bool(np.abs(updated - posterior).max() <= tol)
        posterior = updated
        prior, confusion = _m_step(posterior, j_of, w_of, k_of, n_workers, smoothing)
    competence = np.einsum("c,wcc->w", prior, confusion) if n_workers else np.zeros(0)
    return Estimate(labels=labels, prior=dict(zip(labels, prior.tolist())),
                    posterior={item: dict(zip(labels, posterior[j].tolist())) for item, j in row.items()},
                    confusion={worker: confusion[w].tolist() for worker, w in col.items()},
                    competence={worker: float(competence[w]) for worker, w in col.items()},
                    answers={worker: int((w_of == w).sum()) for worker, w in col.items()},
                    iterations=iterations, converged=converged)


def _anchor_rows(anchors: Mapping[Hashable, Sequence[str]], row: Mapping[Hashable, int], index: Mapping[str, int],
                 n_labels: int) -> dict[int, np.ndarray]:
    """The posterior rows of anchored items that have answers: their known label(s), spread evenly."""
    fixed = {}
    for item, truth in anchors.items():
        known = [index[label] for label in truth if label in index]
        if item in row and known:
            values = np.zeros(n_labels)
            values[known] = 1.0 / len(known)
            fixed[row[item]] = values
    return fixed


def _clamp(posterior: np.ndarray, fixed: Mapping[int, np.ndarray]) -> None:
    for j, values in fixed.items():
        posterior[j] = values


def _m_step(posterior: np.ndarray, j_of: np.ndarray, w_of: np.ndarray, k_of: np.ndarray, n_workers: int,
            smoothing: float) -> tuple[np.ndarray, np.ndarray]:
    """The prior (floored at `EPS`) and each annotator's confusion matrix (rows: truth; floored, normalised)."""
    n_labels = posterior.shape[1]
    counts = np.full((n_workers, n_labels, n_labels), float(smoothing))
    np.add.at(counts.transpose(0, 2, 1), (w_of, k_of), posterior[j_of])  # counts[w, :, k] += T_j for answer (w, k)
    counts = np.maximum(counts, EPS)
    prior = np.maximum(posterior.mean(axis=0) if len(posterior) else np.full(n_labels, 1.0 / n_labels), EPS)
    return prior, counts / counts.sum(axis=2, keepdims=True)
