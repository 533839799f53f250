"""attnreg.torch: the autograd functions on CPU tensors (gradcheck in float64 against central
differences of the forward), agreement with the numpy API, dtype round trips, bad input, and
that attnreg works without torch."""
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import attnreg.torch as at  # noqa: E402
from attnreg import attention  # noqa: E402


def qkv(B=1, H=2, n=6, d=3, dv=2, seed=0, dtype=torch.float64, nk=None):
    g = torch.Generator().manual_seed(seed)
    nk = n if nk is None else nk
    mk = lambda *s: (0.7 * torch.randn(*s, generator=g, dtype=torch.float64)).to(dtype)  # noqa: E731
    return (mk(B, H, n, d).requires_grad_(), mk(B, H, nk, d).requires_grad_(),
            mk(B, H, nk, dv).requires_grad_())


@pytest.mark.parametrize("causal,window,scale", [(False, None, None), (True, None, 0.8),
                                                  (True, 3, None), (False, 2, 1.3)])
def test_softmax_gradcheck(causal, window, scale):
    q, k, v = qkv(seed=1)
    f = lambda q, k, v: at.softmax(q, k, v, scale=scale, causal=causal, window=window)  # noqa: E731
    assert torch.autograd.gradcheck(f, (q, k, v), eps=1e-6, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("kw", [
    dict(ridge=0.3),
    dict(ridge=0.2, causal=True),
    dict(ridge=0.5, causal=True, window=3, bandwidth=0.5),
    dict(ridge=0.1, kernel="rbf", bandwidth=1.5),
    dict(ridge=0.1, bandwidth=30.0, causal=True),
])
def test_lla_gradcheck(kw):
    q, k, v = qkv(n=7, seed=2)
    f = lambda q, k, v: at.lla(q, k, v, **kw)  # noqa: E731
    assert torch.autograd.gradcheck(f, (q, k, v), eps=1e-6, atol=1e-7, rtol=1e-6)


def test_lla_gradcheck_through_a_per_query_ridge_tensor():
    q, k, v = qkv(B=2, H=1, n=5, seed=3)
    r_pos = torch.linspace(0.1, 0.6, 5, dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda q, k, v, r: at.lla(q, k, v, ridge=r, causal=True),
                                    (q, k, v, r_pos), eps=1e-6, atol=1e-7, rtol=1e-6)
    r_bhi = (0.2 + 0.3 * torch.rand(2, 1, 5, dtype=torch.float64)).requires_grad_()
    assert torch.autograd.gradcheck(lambda r: at.lla(q, k, v, ridge=r, causal=True), (r_bhi,),
                                    eps=1e-6, atol=1e-7, rtol=1e-6)
    r0 = torch.tensor(0.25, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda r: at.lla(q, k, v, ridge=r), (r0,), eps=1e-6,
                                    atol=1e-7, rtol=1e-6)


def test_forward_and_gradients_agree_with_the_numpy_api_and_keep_the_dtype():
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        q, k, v = qkv(B=2, H=2, n=9, d=4, dv=3, seed=4, dtype=torch.float64)
        qd, kd, vd = (x.detach().to(dtype).requires_grad_() for x in (q, k, v))
        out = at.lla(qd, kd, vd, ridge=0.1, causal=True)
        assert out.dtype == dtype and out.shape == (2, 2, 9, 3)
        g = torch.ones_like(out)
        out.backward(g)
        Q, K, V = (x.detach().to(torch.float64).numpy() for x in (qd, kd, vd))
        want = attention.lla(Q, K, V, ridge=0.1, causal=True)
        dQ, dK, dV, _ = attention.lla_vjp(Q, K, V, np.ones(want.shape), ridge=0.1, causal=True)
        tol = {torch.float32: 1e-6, torch.float64: 1e-12, torch.bfloat16: 1e-2}[dtype]
        np.testing.assert_allclose(out.detach().double().numpy(), want, atol=tol * 10)
        for x, w in ((qd, dQ), (kd, dK), (vd, dV)):
            assert x.grad.dtype == dtype
            np.testing.assert_allclose(x.grad.double().numpy(), w,
                                       atol=tol * 10 * (1 + np.abs(w).max()))
    q, k, v = qkv(seed=5, nk=8)
    np.testing.assert_allclose(
        at.softmax(q, k, v).detach().numpy(),
        attention.softmax(*(x.detach().numpy() for x in (q, k, v))), atol=1e-14)


def test_bad_input_names_the_argument():
    q, k, v = qkv(seed=6)
    with pytest.raises(TypeError, match="k has dtype torch.float32 but q has torch.float64"):
        at.lla(q, k.detach().float(), v, ridge=0.1)
    with pytest.raises(ValueError, match="k has shape"):
        at.softmax(q, k[..., :2], v)
    with pytest.raises(ValueError, match="v has shape"):
        at.softmax(q, k, v[:, :, :4])
    with pytest.raises(ValueError, match="q must be 4-d"):
        at.softmax(q[0], k, v)
    with pytest.raises(ValueError, match="non-contiguous last dimension"):
        qt = torch.randn(1, 2, 3, 6, dtype=torch.float64).transpose(-1, -2)
        at.lla(qt, k, v, ridge=0.1)
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        at.lla(q, k, v, ridge=-0.1)
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        at.lla(q, k, v, ridge=torch.tensor([0.1, -1.0, 0.1, 0.1, 0.1, 0.1]))
    with pytest.raises(ValueError, match="ridge: must be > 0 for lla"):
        at.lla(q, k, v, ridge=0.0, causal=True)
    with pytest.raises(ValueError, match="scale or bandwidth, not both"):
        at.lla(q, k, v, ridge=0.1, scale=1.0, bandwidth=1.0)
    with pytest.raises(ValueError, match="kernel must be"):
        at.lla(q, k, v, ridge=0.1, kernel="gauss")
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        at.lla(q.detach().numpy(), k, v)
    if hasattr(torch, "device") and torch.device("meta").type == "meta":
        with pytest.raises(ValueError, match="k is on meta but q is on cpu"):
            at.softmax(q, k.to("meta"), v)


def test_cuda_backward_says_it_is_not_available_and_how_to_get_gradients():
    class Ctx:
        cuda = True

    g = torch.ones(1, 1, 2, 2)
    for fn, name in ((at._LLAFn, "lla"), (at._SoftmaxFn, "softmax")):
        with pytest.raises(RuntimeError, match=rf"attnreg.torch.{name}: the CUDA backward pass "
                                               r"is not available yet.*CPU tensors"):
            fn.backward(Ctx(), g)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_forward_matches_the_cpu_and_backward_raises():
    q, k, v = (x.detach().float() for x in qkv(B=2, H=2, n=64, d=32, dv=32, seed=7))
    ref = at.lla(q, k, v, ridge=0.1, causal=True)
    qc, kc, vc = (x.cuda().requires_grad_() for x in (q, k, v))
    out = at.lla(qc, kc, vc, ridge=0.1, causal=True)
    assert out.device == qc.device and out.dtype == torch.float32
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.numpy(), atol=1e-3)
    with pytest.raises(RuntimeError, match="CUDA backward pass is not available"):
        out.sum().backward()
    with pytest.raises(ValueError, match="k is on cpu but q is on cuda"):
        at.softmax(qc, k, vc)
    with pytest.raises(ValueError, match="dims up to 128"):
        big = torch.randn(1, 1, 4, 160, device="cuda")
        at.softmax(big, big, big)


def test_attnreg_imports_and_runs_without_torch():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.'):\n"
        "            raise ImportError('No module named torch (blocked)')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import numpy as np, attnreg\n"
        "assert 'torch' not in sys.modules\n"
        "from attnreg import attention\n"
        "x = np.random.default_rng(0).normal(size=(5, 2))\n"
        "assert attention.lla_vjp(x, x, x, x, ridge=0.1)[0].shape == (5, 2)\n"
        "try:\n"
        "    import attnreg.torch\n"
        "except ImportError as e:\n"
        "    assert 'attnreg.torch needs PyTorch' in str(e), e\n"
        "else:\n"
        "    raise SystemExit('attnreg.torch imported without torch')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=None)
    assert r.returncode == 0, r.stderr
