"""The unbiased pass@k estimator of Chen et al. (arXiv 2107.03374), shared by the validation curve and held-out
evaluation: from n completions of a task of which c check, pass@k = 1 - C(n-c, k) / C(n, k), computed as a product
(no huge binomials) and averaged over tasks by the callers."""

from __future__ import annotations


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one task from n samples with c correct: 1 - C(n-c, k) / C(n, k), as the stable product
    1 - prod_{i=n-c+1}^{n} (1 - k / i). Needs 1 <= k <= n and 0 <= c <= n."""
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n (got n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def ks_for(n: int) -> list[int]:
    """The k reported for n samples: 1, 2, 4, ... up to n, and n itself."""
    ks, k = [], 1
    while k < n:
        ks.append(k)
        k *= 2
    return [*ks, n]
