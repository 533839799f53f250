"""attnreg.attention with device="cuda": the CUDA kernels against the float64 CPU naive LLA.

The GPU tests run when attnreg was built with the CUDA backend and a GPU is visible
(``attnreg.build_info()``); otherwise they skip and say why. Without a usable GPU,
``device="cuda"`` must raise an error that says what is missing. Outputs are poisoned: the
CUDA launcher fills its output buffer with NaN before the kernel, so an element the kernel
does not write comes back as NaN and fails the comparison.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import attnreg
from attnreg import attention as A


def gpu_missing() -> str:
    """Empty when the CUDA kernels can run here, else the reason they cannot."""
    info = attnreg.build_info()
    if not info["cuda_compiled"]:
        return "attnreg was built without the CUDA backend"
    if info["gpu_count"] == 0:
        return info.get("cuda_error") or "no CUDA device found"
    return ""


def require_gpu() -> None:
    why = gpu_missing()
    if why:
        pytest.skip(f"no GPU visible: {why}")


def rel_fro(a, ref) -> float:
    a = np.asarray(a, np.float64)
    ref = np.asarray(ref, np.float64)
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def inputs(b, h, nq, nk, d, dv, seed, sd=0.3):
    r = np.random.default_rng(seed)
    return (
        (sd * r.standard_normal((b, h, nq, d))).astype(np.float32),
        (sd * r.standard_normal((b, h, nk, d))).astype(np.float32),
        r.standard_normal((b, h, nk, dv)).astype(np.float32),
    )


# seq never a multiple of the block sizes (32 / 64); d in {16, 32, 64, 128}; causal and not;
# windows; cross-attention (bottom-right causal alignment); per-position ridge; both kernels.
CASES = [
    dict(b=2, h=2, nq=150, nk=150, d=16, dv=12, causal=True, window=None, kernel="dot", ridge=0.15),
    dict(b=1, h=3, nq=100, nk=100, d=32, dv=32, causal=False, window=40, kernel="rbf", ridge=0.15),
    dict(b=1, h=2, nq=45, nk=201, d=64, dv=50, causal=True, window=None, kernel="dot",
         ridge="per_position"),
    dict(b=2, h=1, nq=97, nk=97, d=64, dv=64, causal=True, window=140, kernel="rbf", ridge=0.4),
    dict(b=1, h=2, nq=130, nk=130, d=128, dv=128, causal=True, window=None, kernel="dot",
         ridge=0.4),
    dict(b=1, h=1, nq=70, nk=180, d=128, dv=80, causal=False, window=None, kernel="rbf",
         ridge=0.4),
]


def case_ids():
    return [f"d{c['d']}-{'causal' if c['causal'] else 'full'}-{c['kernel']}" for c in CASES]


def ridge_of(c):
    if c["ridge"] == "per_position":
        return 0.3 * (1.0 + 0.5 * np.sin(0.3 * np.arange(c["nq"])))
    return c["ridge"]


@pytest.mark.parametrize("c", CASES, ids=case_ids())
def test_lla_blockwise_float32_within_1e4_of_float64_naive(c):
    require_gpu()
    Q, K, V = inputs(c["b"], c["h"], c["nq"], c["nk"], c["d"], c["dv"], seed=c["d"] + c["nq"])
    kw = dict(ridge=ridge_of(c), causal=c["causal"], window=c["window"], kernel=c["kernel"])
    out, info = A.lla(Q, K, V, method="blockwise", device="cuda", return_info=True, **kw)
    assert out.dtype == np.float32 and out.shape == (c["b"], c["h"], c["nq"], c["dv"])
    assert np.isfinite(out).all(), "an output element was not written"
    ref = A.lla(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64),
                method="naive", **kw)
    assert rel_fro(out, ref) < 1e-4
    assert info["method"] == "lla/blockwise/cuda"
    assert info["cg_converged"]
    assert 0 < info["cg_max_iterations"] < 2 * c["d"] + 10


@pytest.mark.parametrize("c", [c for c in CASES if c["d"] <= 32], ids=lambda c: f"d{c['d']}")
def test_lla_direct_float32_within_1e4_of_float64_naive(c):
    require_gpu()
    Q, K, V = inputs(c["b"], c["h"], c["nq"], c["nk"], c["d"], c["dv"], seed=1)
    kw = dict(ridge=ridge_of(c), causal=c["causal"], window=c["window"], kernel=c["kernel"])
    out = A.lla(Q, K, V, method="direct", device="cuda", **kw)
    ref = A.lla(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64),
                method="naive", **kw)
    assert rel_fro(out, ref) < 1e-4


@pytest.mark.parametrize("c", CASES, ids=case_ids())
def test_softmax_and_nw_float32_within_1e5_of_float64(c):
    require_gpu()
    Q, K, V = inputs(c["b"], c["h"], c["nq"], c["nk"], c["d"], c["dv"], seed=2)
    f = A.softmax if c["kernel"] == "dot" else A.nw_rbf
    out = f(Q, K, V, causal=c["causal"], window=c["window"], device="cuda")
    ref = f(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64),
            causal=c["causal"], window=c["window"])
    assert np.isfinite(out).all()
    assert rel_fro(out, ref) < 1e-5


def test_float64_inputs_are_computed_in_float32_and_say_so():
    require_gpu()
    Q, K, V = inputs(1, 1, 90, 90, 24, 5, seed=3)
    Q, K, V = (x.astype(np.float64) for x in (Q, K, V))
    out, info = A.lla(Q, K, V, ridge=0.1, causal=True, device="cuda", return_info=True)
    assert out.dtype == np.float64
    assert info["method"].endswith("/cuda-float32")
    assert rel_fro(out, A.lla(Q, K, V, ridge=0.1, causal=True, method="naive")) < 1e-4


def test_unsupported_cuda_requests_fail_clearly():
    require_gpu()
    Q, K, V = inputs(1, 1, 40, 40, 8, 4, seed=4)
    with pytest.raises(ValueError, match="naive"):
        A.lla(Q, K, V, ridge=0.1, method="naive", device="cuda")
    with pytest.raises(ValueError, match="no CUDA kernel"):
        A.linear(Q, K, V, device="cuda")
    Qb, Kb, Vb = inputs(1, 1, 40, 40, 200, 4, seed=5)
    with pytest.raises(ValueError, match="128"):
        A.lla(Qb, Kb, Vb, ridge=0.1, device="cuda")


def test_device_cuda_without_gpu_raises_a_clear_error():
    why = gpu_missing()
    if not why:
        pytest.skip("a GPU is visible: the no-GPU error path cannot be exercised here")
    Q, K, V = inputs(1, 1, 16, 16, 4, 2, seed=6)
    for call in (lambda: A.lla(Q, K, V, ridge=0.1, device="cuda"),
                 lambda: A.softmax(Q, K, V, device="cuda")):
        with pytest.raises((RuntimeError, ValueError)) as e:
            call()
        msg = str(e.value)
        assert "cuda" in msg.lower()
        assert re.search(r"without CUDA|no GPU", msg), msg
    # The CPU device is unaffected.
    assert np.isfinite(A.lla(Q, K, V, ridge=0.1, device="cpu")).all()
