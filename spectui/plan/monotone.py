"""The cost curve kept is non-decreasing in the batch size: a decode of more tokens does no less
work, so a measured t(4) below t(3) is noise, and a jagged curve makes break-evens jump between
neighbouring n-max values. Isotonic regression (pool adjacent violators) is the least-squares
non-decreasing fit: it leaves a monotone curve as it is and averages each run of violators,
assuming nothing about the shape between (the hardware's steps stay where they were measured).
"""

from __future__ import annotations

from collections.abc import Sequence


def monotone(values: Sequence[float]) -> list[float]:
    """The non-decreasing sequence nearest `values` in least squares (pool adjacent violators)."""
    blocks: list[tuple[float, int]] = []  # (mean, count) of each pooled run
    for v in values:
        mean, count = float(v), 1
        while blocks and blocks[-1][0] > mean:  # a violator: pool it with the block before
            m, c = blocks.pop()
            mean, count = (m * c + mean * count) / (c + count), c + count
        blocks.append((mean, count))
    return [mean for mean, count in blocks for _ in range(count)]


def residuals(measured: Sequence[float], fitted: Sequence[float]) -> list[float]:
    """(measured - fitted) / fitted at each point: the part of the measurement the fit calls noise."""
    return [(m - f) / f if f > 0 else 0.0 for m, f in zip(measured, fitted, strict=True)]
