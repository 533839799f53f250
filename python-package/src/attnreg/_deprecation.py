"""Renamed keyword arguments: the old name keeps working for one release, with a FutureWarning.

``@renamed(kind="cov_type")`` on a function whose signature already uses the new name maps a
call with ``kind=`` onto ``cov_type=`` and warns, naming both; passing both names is a
``TypeError``. A ``convert`` callable translates the old value where the meaning changed
(``conf_int(alpha=0.05)`` is ``level=0.95``).
"""
from __future__ import annotations

import functools
import inspect
import warnings

__all__ = ["renamed", "renamed_in_errors", "alpha_to_level", "check_level", "kernel_cov_type",
           "seed_from_random_state"]


def renamed(_convert=None, **old_to_new):
    """Decorator: accept each ``old=`` keyword as a deprecated alias of ``new=``.

    ``_convert`` maps an old name to a function of its value (for a renamed argument whose
    meaning also changed).
    """
    convert = dict(_convert or {})

    def wrap(fn):
        params = inspect.signature(fn).parameters
        for old, new in old_to_new.items():
            if new not in params:
                raise AssertionError(f"{fn.__qualname__}: no argument {new!r} to rename {old!r} to")
        name = fn.__qualname__.replace(".__init__", "")

        method = "." in fn.__qualname__ and next(iter(params), None) == "self"

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            who = f"{type(args[0]).__name__}.{fn.__name__}" if method and args else name
            for old, new in old_to_new.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{who}: got both {old}= (deprecated) and {new}=; pass "
                                    f"{new}= only")
                value = kwargs.pop(old)
                note = ""
                if old in convert:
                    old_value = value
                    value = convert[old](value)
                    note = f" ({old}={old_value!r} is {new}={value!r})"
                warnings.warn(f"{who}: {old}= is deprecated and will be removed in the next "
                              f"release; use {new}={note}", FutureWarning, stacklevel=2)
                kwargs[new] = value
            return fn(*args, **kwargs)

        return inner

    return wrap


def alpha_to_level(alpha):
    """``alpha`` of the old ``conf_int(alpha=)``: the interval's level is ``1 - alpha``."""
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha: must be a number in (0, 1), got {alpha!r}") from None
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha: must be in (0, 1) (1 - the interval's level), got {alpha!r}")
    return 1.0 - a


def check_level(level, name: str = "level") -> float:
    """The interval level as a float in (0, 1); 95 and other percentages are refused."""
    try:
        v = float(level)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name}: must be in (0, 1), e.g. 0.95 (level is a fraction: 0.95 for "
                         f"a 95% interval); got {level!r}")
    return v


# The kernel estimators' pointwise variances (diagnose, bands): the vocabulary's cov_type
# spellings, case-insensitive; "nonrobust" is the homoskedastic "const" of the core.
_KERNEL_COV_TYPES = ("nonrobust", "const", "HC0", "HC1", "HC2", "HC3", "CR1", "nn")


def kernel_cov_type(cov_type, name: str = "cov_type") -> str:
    """The core's lower-case variance kind for a kernel ``cov_type`` ("HC3" -> "hc3")."""
    if not isinstance(cov_type, str) or cov_type.lower() not in (
            [c.lower() for c in _KERNEL_COV_TYPES] + ["homoskedastic"]):
        raise ValueError(f"{name}: must be one of {', '.join(map(repr, _KERNEL_COV_TYPES))} "
                         f"(any case), got {cov_type!r}")
    v = cov_type.lower()
    return "const" if v == "nonrobust" else v


def seed_from_random_state(random_state, name: str = "random_state") -> int:
    """The core's non-negative integer seed from a scikit-learn style ``random_state``.

    An int is the seed itself (so ``random_state=k`` gives the numbers ``seed=k`` gave); a
    numpy Generator or RandomState draws one; None draws one from fresh OS entropy.
    """
    import numpy as np

    if random_state is None:
        random_state = np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2 ** 31 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2 ** 31 - 1))
    if isinstance(random_state, (float, np.floating)) and float(random_state).is_integer():
        random_state = int(random_state)
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(
            random_state, (int, np.integer)):
        raise TypeError(f"{name}: must be a non-negative integer, None or a numpy Generator, "
                        f"got {random_state!r}")
    v = int(random_state)
    if v < 0 or v >= 2 ** 63:
        raise ValueError(f"{name}: must be a non-negative integer, got {random_state!r}")
    return v


class renamed_in_errors:
    """Context manager: a core ``ValueError`` that names an argument by the core's name
    (``"n_boot: must be ..."``) is re-raised with the face's name (``"replications: ..."``)."""

    def __init__(self, **core_to_face):
        self.names = core_to_face

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None or not issubclass(exc_type, ValueError):
            return False
        text = str(exc)
        for core, face in self.names.items():
            if text.startswith(core + ":"):
                raise exc_type(face + text[len(core):]) from None
        return False
