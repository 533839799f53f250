"""Input checks shared by the estimators (messages name the argument and the fix)."""
from __future__ import annotations

import numpy as np


def as_2d_y(y: np.ndarray) -> tuple[np.ndarray, bool]:
    """Return y as an (n, k) float64 array and whether it was 1-D."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        return y.reshape(-1, 1), True
    if y.ndim == 2:
        return y, False
    raise ValueError(f"y: expected a 1-D or 2-D array, got {y.ndim} dimensions")


def squeeze_outputs(a: np.ndarray, was_1d: bool) -> np.ndarray:
    """Undo as_2d_y on an (m, k) result."""
    return a[:, 0] if was_1d else a
