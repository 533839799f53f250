"""Progress reports for long computations (bandwidth searches, Monte Carlo, large fits).

The C++ core reports ``(done, total, label)`` from its main thread while it works (tiles of a
large kernel fit, starts of a softmax attention regression, recursive re-estimation). Nothing
is shown unless asked: inside ``with attnreg.show_progress():`` the reports drive a ``tqdm``
bar when tqdm is installed, else a short line on stderr at most every half second. Functions
with a ``progress`` argument (:func:`attnreg.select_bandwidth`,
:func:`attnreg.diagnostics.monte_carlo`, :func:`attnreg.diagnostics.rate_study`) use the same
machinery. Ctrl-C interrupts any of them with ``KeyboardInterrupt``.
"""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Any, Callable, Iterator, Optional, Union

#: What ``progress=`` accepts: False/None (silent), True or "auto" (tqdm when installed, else
#: stderr), "tqdm", "stderr", or a callable ``f(done, total, label)`` (total may be None).
ProgressArg = Union[bool, str, None, Callable[[int, Optional[int], str], Any]]

_MODES = ("auto", "tqdm", "stderr")


def _have_tqdm() -> bool:
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


class _Reporter:
    """Turns (done, total, label) reports into a tqdm bar, stderr lines or a callback."""

    def __init__(self, mode: ProgressArg):
        if callable(mode):
            self._callback = mode
            self._mode = "callback"
        else:
            if mode is True:
                mode = "auto"
            if mode not in _MODES:
                raise ValueError(
                    f"progress: expected True, False, a callable f(done, total, label) or one "
                    f"of {', '.join(_MODES)}; got {mode!r}"
                )
            if mode == "tqdm" and not _have_tqdm():
                raise ValueError(
                    "progress: 'tqdm' was asked for but tqdm is not installed; "
                    "pip install tqdm, or use progress=True for the stderr fallback"
                )
            self._callback = None
            self._mode = "tqdm" if mode == "tqdm" or (mode == "auto" and _have_tqdm()) else "stderr"
        self._bar: Any = None
        #: While a Python-level task (a bandwidth search, a Monte Carlo loop) reports its own
        #: steps, the core's finer reports (each objective evaluation's tiles) are muted.
        self.core_muted = False
        self._label: Optional[str] = None
        self._last_done = -1
        self._last_print = 0.0

    def __call__(self, done: int, total: Optional[int], label: str, postfix: str = "") -> None:
        if self._mode == "callback":
            self._callback(done, total, label)
            return
        new_task = label != self._label or done < self._last_done
        self._last_done = done
        if self._mode == "tqdm":
            from tqdm.auto import tqdm

            if new_task:
                self.close()
                self._bar = tqdm(total=total, desc=label, leave=False)
                self._label = label
            self._bar.n = done
            if postfix:
                self._bar.set_postfix_str(postfix, refresh=False)
            self._bar.refresh()
            return
        now = time.monotonic()
        finished = total is not None and done >= total
        if new_task or finished or now - self._last_print >= 0.5:
            self._label = label
            self._last_print = now
            of = f"/{total}" if total else ""
            tail = f" ({postfix})" if postfix else ""
            print(f"attnreg: {label}: {done}{of}{tail}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._label = None
        self._last_done = -1


_active: list[_Reporter] = []


def _report(done: int, total: int, label: str) -> None:
    """Called by the C++ core (main thread, GIL held) while it works."""
    if _active and not _active[-1].core_muted:
        _active[-1](int(done), int(total) if total else None, str(label))


def _install(on: bool) -> None:
    """Connect the core's reports to :func:`_report` (only while some reporter is active)."""
    from . import _core

    setter = getattr(_core, "_set_progress_reporter", None)
    if setter is not None:
        setter(_report if on else None)


@contextlib.contextmanager
def reporting(progress: ProgressArg) -> Iterator[Optional[_Reporter]]:
    """Report the core's progress to ``progress`` inside the block (no-op when falsy)."""
    if progress is None or progress is False:
        yield None
        return
    rep = _Reporter(progress)
    _active.append(rep)
    _install(True)
    try:
        yield rep
    finally:
        _active.remove(rep)
        rep.close()
        if not _active:
            _install(False)


def current() -> Optional[_Reporter]:
    """The innermost active reporter, if any (so nested calls report to the same place)."""
    return _active[-1] if _active else None


def show_progress(progress: ProgressArg = True):
    """Show progress of long attnreg computations inside a ``with`` block.

    Parameters
    ----------
    progress : bool, {"auto", "tqdm", "stderr"} or callable, default=True
        ``True``/``"auto"``: a tqdm bar when tqdm is installed, else a line on stderr at most
        every half second; ``"tqdm"`` insists on tqdm; a callable is called as
        ``f(done, total, label)`` (``total`` may be None when unknown, e.g. for a bandwidth
        search).

    Returns
    -------
    contextlib context manager

    Examples
    --------
    >>> import numpy as np, attnreg
    >>> X = np.linspace(0, 1, 40).reshape(-1, 1); y = np.sin(6 * X[:, 0])
    >>> seen = []
    >>> with attnreg.show_progress(lambda done, total, label: seen.append(label)):
    ...     m = attnreg.LocalLinear(bandwidth="cv_ls").fit(X, y)
    >>> "bandwidth search" in seen
    True
    """
    return reporting(progress)


@contextlib.contextmanager
def steps(progress: ProgressArg, label: str, total: int) -> Iterator[Callable[[int], None]]:
    """Context giving ``tick(done)``, which reports ``(done, total, label)`` to ``progress``
    (or to an enclosing :func:`show_progress`; silent otherwise)."""
    with reporting(progress) as rep, muted_core(rep or current()) as rep:

        def tick(done: int) -> None:
            if rep is not None:
                rep(done, total, label)

        yield tick


@contextlib.contextmanager
def muted_core(rep: Optional[_Reporter]) -> Iterator[Optional[_Reporter]]:
    """Mute the core's reports to ``rep`` inside the block (``rep`` may be None)."""
    if rep is None:
        yield None
        return
    before = rep.core_muted
    rep.core_muted = True
    try:
        yield rep
    finally:
        rep.core_muted = before
