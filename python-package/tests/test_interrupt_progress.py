"""Issue 9: long computations report progress when asked and stop cleanly on Ctrl-C.

The interrupt tests run the computation in a subprocess, send it SIGINT once it is busy in the
core, and check that Python sees KeyboardInterrupt, that no thread is left behind, that the
library still works afterwards and that the process exits normally.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import cpu_seconds, sigint_default

import attnreg

SRC = os.path.join(os.path.dirname(attnreg.__file__), os.pardir)

CHILD = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    import attnreg

    rng = np.random.default_rng(0)
    n = int(sys.argv[2])
    X = rng.uniform(size=(n, 3))
    y = np.sin(6 * X[:, 0]) + X[:, 1] + rng.normal(0, 0.3, n)

    def work():
        if sys.argv[1] == "select":
            attnreg.select_bandwidth(X, y, "ll", "cv_ls", n_starts=200)
        elif sys.argv[1] == "fit":
            for _ in range(1000):
                attnreg.LocalLinear(bandwidth=[0.3, 0.3, 0.3]).fit(X, y)
        elif sys.argv[1] == "attention_regression":
            attnreg.AttentionRegression(n_starts=500, max_iter=10000, tol=0).fit(X, y)

    # Resolve the lazy imports (scikit-learn, pandas) before READY, so that the interrupt lands
    # in the computation and not in an import, on a machine of any speed.
    attnreg.AttentionRegression, attnreg.LocalLinear, attnreg.select_bandwidth
    print("READY", flush=True)
    t0 = time.monotonic()
    if sys.argv[3] == "catch":
        try:
            work()
            print("FINISHED", flush=True)
        except KeyboardInterrupt:
            print("INTERRUPTED after %.1f s, threads %d" % (time.monotonic() - t0,
                  threading.active_count()), flush=True)
        # The library is usable after the interrupt.
        m = attnreg.NadarayaWatson(bandwidth=0.3).fit(X[:50], y[:50])
        print("STILL WORKS", np.isfinite(m.predict(X[:3])).all(), flush=True)
    else:
        work()
    """
)


def _run_and_interrupt(kind: str, n: int, mode: str, delay: float = 1.5):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC) + os.pathsep
               + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="2")
    p = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(n), mode],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=sigint_default)
    try:
        assert p.stdout.readline().strip() == "READY"
        time.sleep(delay)  # inside the core by now
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        return p.returncode, out, err, time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("kind,n", [("select", 4000), ("fit", 6000),
                                    ("attention_regression", 3000)])
def test_ctrl_c_raises_keyboard_interrupt_and_leaves_no_thread(kind, n):
    rc, out, err, _ = _run_and_interrupt(kind, n, "catch")
    assert rc == 0, err
    assert "FINISHED" not in out
    assert "INTERRUPTED" in out and "threads 1" in out, out + err
    assert "STILL WORKS True" in out
    assert "Traceback" not in err and "terminate" not in err


def test_uncaught_ctrl_c_exits_like_python():
    rc, out, err, waited = _run_and_interrupt("select", 4000, "raise")
    assert "KeyboardInterrupt" in err
    assert rc in (-signal.SIGINT, 130, 1), (rc, err)  # Python's exit for an unhandled Ctrl-C
    assert "Segmentation" not in err and "terminate" not in err


def _xy(n=300, d=1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    return X, np.sin(6 * X[:, 0]) + rng.normal(0, 0.3, n)


def test_show_progress_callback_receives_core_reports():
    X, y = _xy(3000)
    seen = []
    # fit is lazy: the O(n^2) pass over the training rows runs when a training statistic is
    # first used (here effective_df_), and that pass reports.
    with attnreg.show_progress(lambda done, total, label: seen.append((done, total, label))):
        attnreg.LocalLinear(bandwidth=0.05).fit(X, y).effective_df_
    assert seen and {s[2] for s in seen} == {"local linear"}
    # Reports come from the main thread as its blocks of rows finish (other threads' blocks
    # are counted in `done` but do not report), so the last one may stop short of the total.
    assert all(s[1] == 3000 and 0 < s[0] <= 3000 for s in seen)
    # Outside the block nothing is reported any more.
    n_before = len(seen)
    attnreg.LocalLinear(bandwidth=0.05).fit(X, y).effective_df_
    assert len(seen) == n_before


def test_bandwidth_search_reports_to_show_progress_and_mutes_inner_reports():
    X, y = _xy(200)
    seen = []
    with attnreg.show_progress(lambda done, total, label: seen.append((done, total, label))):
        m = attnreg.NadarayaWatson().fit(X, y)
        m.effective_df_  # the lazy pass over the training rows at the selected bandwidth
    search = [s for s in seen if s[2] == "bandwidth search"]
    # One report per objective evaluation (their inner per-tile reports are muted), then the
    # training statistics at the selected bandwidth report their rows.
    assert [s[0] for s in search] == list(range(1, m.bandwidth_result_.n_evals + 1))
    assert all(s[1] is None for s in search)
    rest = seen[len(search):]
    assert seen[:len(search)] == search and {s[2] for s in rest} == {"local constant"}
    assert all(s[1] == 200 and 0 < s[0] <= 200 for s in rest)


def test_progress_stderr_fallback(capsys):
    X, y = _xy(150)
    r = attnreg.select_bandwidth(X, y, progress="stderr")
    err = capsys.readouterr().err
    assert "attnreg: bandwidth search: 1 (best" in err
    assert r.n_evals > 1
    with attnreg.show_progress("stderr"):
        attnreg.diagnostics.monte_carlo(lambda Z: np.sin(6 * Z[:, 0]), n=60, replications=5,
                                        estimators=("nw", "ols"), bandwidth=0.2)
    err = capsys.readouterr().err
    # The core reports each fit; the stderr display prints the start, the end and at most
    # one line per 0.5 s between them.
    assert "attnreg: monte carlo: 0/2" in err and "attnreg: monte carlo: 2/2" in err


def test_progress_tqdm_when_installed(capsys):
    pytest.importorskip("tqdm")
    X, y = _xy(150)
    attnreg.select_bandwidth(X, y, progress="tqdm")
    assert "bandwidth search" in capsys.readouterr().err
    seen = []
    attnreg.diagnostics.rate_study(lambda Z: np.sin(6 * Z[:, 0]), ns=(50, 60, 80), replications=4,
                                   grid_points=4, progress=lambda *a: seen.append(a))
    assert seen == [(1, 3, "rate study"), (2, 3, "rate study"), (3, 3, "rate study")]


def test_progress_argument_errors():
    X, y = _xy(50)
    with pytest.raises(ValueError, match=r"progress: expected True, False, a callable"):
        attnreg.select_bandwidth(X, y, progress="bars")
    with pytest.raises(ValueError, match="progress: expected"):
        with attnreg.show_progress(3):
            pass


def test_a_failing_progress_callback_does_not_break_the_fit():
    X, y = _xy(2000)

    def bad(done, total, label):
        raise RuntimeError("display broke")

    with attnreg.show_progress(bad):
        m = attnreg.LocalLinear(bandwidth=0.05).fit(X, y)
    ref = attnreg.LocalLinear(bandwidth=0.05).fit(X, y)
    np.testing.assert_array_equal(m.predict(X[:5]), ref.predict(X[:5]))


def test_progress_true_without_tqdm_falls_back_to_stderr(monkeypatch, capsys):
    from attnreg import _progress

    monkeypatch.setattr(_progress, "_have_tqdm", lambda: False)
    X, y = _xy(100)
    attnreg.select_bandwidth(X, y, progress=True)
    assert "attnreg: bandwidth search: 1 (best" in capsys.readouterr().err
    with pytest.raises(ValueError, match="progress: 'tqdm' was asked for but tqdm is not "
                                         "installed; pip install tqdm"):
        attnreg.select_bandwidth(X, y, progress="tqdm")


DASK_CHILD = textwrap.dedent(
    """
    import threading, time
    import numpy as np
    import dask.array as da
    import attnreg.dask as adk

    rng = np.random.default_rng(0)
    n = 30000  # one chunk: each leave-one-out partial is about a second of core work
    X = rng.uniform(size=(n, 2))
    y = np.sin(6 * X[:, 0]) + rng.normal(0, 0.3, n)
    Xd, yd = da.from_array(X, chunks=(n, 2)), da.from_array(y, chunks=n)
    import attnreg  # the lazy imports before READY (see CHILD)
    attnreg.LocalLinear, attnreg.select_bandwidth
    print("READY", flush=True)
    try:
        adk.select_bandwidth(Xd, yd, n_grid=40)  # default (threaded) scheduler
        print("FINISHED", flush=True)
    except KeyboardInterrupt:
        # Nothing may keep computing: the process uses (almost) no CPU from here on.
        c0 = time.process_time()
        time.sleep(0.5)
        print("INTERRUPTED, cpu at catch %.3f s, cpu after %.3f s"
              % (c0, time.process_time() - c0), flush=True)
    """
)


def test_dask_threaded_select_bandwidth_stops_its_threads_on_ctrl_c():
    pytest.importorskip("dask")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(SRC) + os.pathsep
               + os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    p = subprocess.Popen([sys.executable, "-c", DASK_CHILD], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env,
                         preexec_fn=sigint_default)
    try:
        assert p.stdout.readline().strip() == "READY"
        time.sleep(3.0)  # the worker threads are inside the core by now
        sent = time.monotonic()
        cpu_sent = cpu_seconds(p.pid)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=120)
        waited = time.monotonic() - sent
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert "FINISHED" not in out and "INTERRUPTED" in out, out + err
    cpu = float(out.split("cpu after ")[1].split()[0])
    # After the catch nothing computes: the 0.5 s sleep costs well under 0.1 s of CPU whatever
    # the load (before the fix the worker threads finished their tasks: ~0.5 s of CPU here).
    assert cpu < 0.1, out
    # Stopped within a second of work per worker thread (the threaded scheduler runs one per
    # core): the CPU spent between the signal and the catch, which load does not stretch.
    cpu_to_stop = float(out.split("cpu at catch ")[1].split()[0]) - cpu_sent
    assert cpu_to_stop < 1.0 * (os.cpu_count() or 1), (cpu_to_stop, out)
    # Wall time only as a hang detector: it includes interpreter shutdown and grows with load.
    assert waited < 60, waited
