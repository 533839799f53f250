#!/usr/bin/env python3
"""Benchmark of the attnreg CUDA kernels (FlashLLA forward with in-kernel CG, softmax / NW).

Runs where a GPU is visible; elsewhere it says so and exits with status 2.

    python bench/bench_cuda_lla.py                      # the issue's grid, bf16 and float32
    python bench/bench_cuda_lla.py --seq 1024 4096 --dims 64 --dtypes bfloat16

What it measures, per (dtype, d, seq) with batch x heads = 8 x 8, causal, ridge 0.1:
  * kernel time: median of --repeats runs (CUDA events around the kernel; transfers excluded);
  * device memory of one call (inputs, output, rho and delta for a backward pass, per-row
    diagnostics): Theta(n d), reported in MiB;
  * T: CG sweeps per (batch, head, query block), mean and max (the kernel exits a block early
    once all of its rows converged, so T varies);
  * FLOPs counted as B*H*N(N+1)/2*(10+6T)*d with T the mean sweeps (issue 8's count: per
    (query, key) pair, 2d for the logits, 2d for mu~, 6d per CG sweep, 4d + 2d for the output),
    TFLOP/s and the percentage of the dense bf16 tensor-core peak (--peak-tflops; 989 on H100
    SXM, also used for H200, 312 on A100);
  * against a naive materialising implementation (PyTorch, when installed): the n x n weights
    in float32 with the same number T of CG sweeps; its time and torch's peak memory, or OOM.

--train: forward and forward+backward side by side in one process, through the PyTorch face
(attnreg.torch.lla / softmax; needs torch and the attnreg package), against torch's
scaled_dot_product_attention and, with --flashlla MODULE:FUNCTION, a reference FlashLLA callable
f(q, k, v) -> out. On a GPU it runs the CUDA tensors (attnreg has no CUDA backward yet: those
cells say so); without one it runs CPU tensors at a tiny size (--train-seq), which checks that
the path works, not its speed. --out FILE writes the table with the GPU, driver and clocks.

    python bench/bench_cuda_lla.py --train --seq 1024 4096 --dims 64 --dtypes bfloat16
    python bench/bench_cuda_lla.py --train            # CPU: B = H = 1, seq 64, d 16, float64

Still to do on a GPU (issue 17): forward kernels rebuilt on CuTe/CUTLASS atoms with
register-resident tiles (cp.async on sm_80, TMA + wgmma on sm_90), CUDA backward kernels (the
adjoint CG reusing the forward's rho, delta, row max and omega; AuxOutputs already returns
them), a per-query ridge and the current stream through the C interface, and this table
measured against the targets; until then the CPU backward (attention.lla_vjp) is the reference.

The kernels are reached through a standalone build of the backend's kernels, cuda/src/*.cu, with
the benchmark's entry point bench/cuda/bench_capi.cu (nvcc -shared, cached under
build/bench-cuda/; cuda/README.md), so neither the Python package nor
torch is needed for the attnreg numbers. Results print as a table; --csv FILE also writes them.
"""
from __future__ import annotations

import argparse
import ctypes
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2}
KINDS = {"softmax": 0, "lla": 1}


def no_gpu_reason() -> str:
    """Empty when a CUDA GPU is usable here, else why not."""
    try:
        import torch  # noqa: F401

        if torch.cuda.is_available():
            return ""
        return "torch.cuda.is_available() is False"
    except ImportError:
        pass
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no nvidia-smi on PATH and no torch to ask"
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if r.returncode != 0 or "GPU" not in r.stdout:
        return (r.stderr or r.stdout).strip() or "nvidia-smi lists no GPU"
    return ""


def gpu_arch() -> str:
    try:
        import torch

        major, minor = torch.cuda.get_device_capability(0)
        return f"{major}{minor}"
    except ImportError:
        smi = shutil.which("nvidia-smi")
        r = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"],
                           capture_output=True, text=True, check=True)
        return r.stdout.strip().splitlines()[0].replace(".", "")


def gpu_name() -> str:
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except ImportError:
        r = subprocess.run([shutil.which("nvidia-smi"), "--query-gpu=name",
                            "--format=csv,noheader"], capture_output=True, text=True)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 else "unknown GPU"


def build_library(nvcc: str, arch: str) -> pathlib.Path:
    out_dir = ROOT / "build" / "bench-cuda"
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / f"libattnreg_cuda_bench_sm{arch}.so"
    sources = sorted((ROOT / "cuda/src").glob("*.cu")) + [ROOT / "bench/cuda/bench_capi.cu"]
    headers = (list((ROOT / "cuda/src").glob("*.cuh")) + list((ROOT / "cuda/src").glob("*.hpp"))
               + list((ROOT / "cuda/include/attnreg/cuda").glob("*.hpp"))
               + [ROOT / "core/include/attnreg/attention/lla_tile.hpp"])
    newest = max(p.stat().st_mtime for p in sources + headers)
    if lib.exists() and lib.stat().st_mtime > newest:
        return lib
    cmd = [nvcc, "-shared", "-Xcompiler", "-fPIC", "-O3", "-std=c++17",
           f"-gencode=arch=compute_{arch},code=sm_{arch}",
           f"-I{ROOT / 'core/include'}", f"-I{ROOT / 'cuda/include'}", f"-I{ROOT / 'cuda/src'}",
           *[str(s) for s in sources], "-o", str(lib)]
    print("building", lib.name, "(nvcc, once) ...", file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)
    return lib


def load(lib: pathlib.Path):
    so = ctypes.CDLL(str(lib))
    f = so.attnreg_cuda_bench
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
                  ctypes.c_int, ctypes.c_int, ctypes.c_double, ctypes.c_double, ctypes.c_int,
                  ctypes.c_ulonglong, ctypes.POINTER(ctypes.c_double),
                  ctypes.POINTER(ctypes.c_longlong), ctypes.POINTER(ctypes.c_int),
                  ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_int),
                  ctypes.POINTER(ctypes.c_int)]
    so.attnreg_cuda_bench_last_error.restype = ctypes.c_char_p
    return so


def run_attnreg(so, dtype: str, kind: str, b: int, h: int, n: int, d: int, ridge: float,
                cg_tol: float, repeats: int):
    times = (ctypes.c_double * repeats)()
    nbytes = ctypes.c_longlong()
    tmax = ctypes.c_int()
    tmean = ctypes.c_double()
    bq = ctypes.c_int()
    bk = ctypes.c_int()
    rc = so.attnreg_cuda_bench(DTYPES[dtype], KINDS[kind], b, h, n, d, 1, ridge, cg_tol,
                               repeats, 1234, times, ctypes.byref(nbytes), ctypes.byref(tmax),
                               ctypes.byref(tmean), ctypes.byref(bq), ctypes.byref(bk))
    if rc != 0:
        return {"error": so.attnreg_cuda_bench_last_error().decode()}
    return {"ms": statistics.median(list(times)), "bytes": nbytes.value, "T_max": tmax.value,
            "T_mean": tmean.value, "block": f"{bq.value}x{bk.value}"}


def run_naive_torch(dtype: str, b: int, h: int, n: int, d: int, ridge: float, T: int,
                    repeats: int):
    """PyTorch implementation of seed 002 eqs. 14-16 that materialises the n x n weights."""
    try:
        import torch
    except ImportError:
        return {"error": "torch not installed"}
    dev = "cuda"
    tdt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
    g = torch.Generator(device=dev).manual_seed(0)
    try:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        Q = (0.3 * torch.randn(b, h, n, d, device=dev, generator=g)).to(tdt)
        K = (0.3 * torch.randn(b, h, n, d, device=dev, generator=g)).to(tdt)
        V = torch.randn(b, h, n, d, device=dev, generator=g).to(tdt)

        def forward():
            q, k, v = Q.float(), K.float(), V.float()
            logits = (q @ k.transpose(-1, -2)) / math.sqrt(d)
            mask = torch.ones(n, n, dtype=torch.bool, device=dev).tril()
            logits = logits.masked_fill(~mask, float("-inf"))
            W = torch.exp(logits - logits.amax(-1, keepdim=True))
            omega = W.sum(-1, keepdim=True)
            Mt = W @ k
            mu = Mt - omega * q

            def sigma_p(p):
                sp = (W * (p @ k.transpose(-1, -2))) @ k
                qp = (q * p).sum(-1, keepdim=True)
                mp = (Mt * p).sum(-1, keepdim=True)
                return sp - qp * Mt - mp * q + omega * qp * q + ridge * omega * p

            x = torch.zeros_like(mu)
            r = mu.clone()
            p = mu.clone()
            rr = (r * r).sum(-1, keepdim=True)
            for _ in range(T):
                sp = sigma_p(p)
                alpha = rr / (p * sp).sum(-1, keepdim=True).clamp_min(1e-30)
                x = x + alpha * p
                r = r - alpha * sp
                rr_new = (r * r).sum(-1, keepdim=True)
                p = r + (rr_new / rr.clamp_min(1e-30)) * p
                rr = rr_new
            delta = omega - (mu * x).sum(-1, keepdim=True)
            relmm = x @ k.transpose(-1, -2) - (x * q).sum(-1, keepdim=True)
            return ((W * (1 - relmm)) / delta) @ v

        forward()
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            forward()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1))
        return {"ms": statistics.median(times), "bytes": torch.cuda.max_memory_allocated()}
    except torch.cuda.OutOfMemoryError:
        return {"error": "OOM"}
    finally:
        torch.cuda.empty_cache()


# ---------------------------------------------------------------- --train: forward + backward

def machine_line() -> str:
    """GPU, driver and clocks (nvidia-smi) or the CPU, for the results file."""
    smi = shutil.which("nvidia-smi")
    if smi:
        r = subprocess.run([smi, "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                            "clocks.mem,power.limit", "--format=csv,noheader"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip():
            return "GPU, driver, SM clock, max SM clock, memory clock, power limit: " + \
                r.stdout.strip().splitlines()[0]
    import platform

    return f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} threads"


def load_flashlla(spec: str | None):
    if not spec:
        return None, "not given (--flashlla MODULE:FUNCTION)"
    import importlib

    mod, _, fn = spec.partition(":")
    try:
        return getattr(importlib.import_module(mod), fn), ""
    except (ImportError, AttributeError) as e:
        return None, f"not importable ({e})"


def time_call(torch, fn, dev: str, repeats: int) -> float:
    """Median milliseconds of fn() (CUDA events on a GPU, perf_counter on the CPU)."""
    import time

    fn()
    times = []
    for _ in range(repeats):
        if dev == "cuda":
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            fn()
            e1.record()
            torch.cuda.synchronize()
            times.append(e0.elapsed_time(e1))
        else:
            t0 = time.perf_counter()
            fn()
            times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times)


def train_main(args) -> int:
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("bench_cuda_lla --train: needs torch", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT / "python-package" / "src"))
    import attnreg.torch as at

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    if dev == "cpu":  # a smoke run: the CPU path is the float64 reference, O(n^2 d^2)
        seqs, dims, dtypes = args.train_seq, args.train_dims, ["float64"]
        B = H = 1
    else:
        seqs, dims, dtypes, B, H = args.seq, args.dims, args.dtypes, args.batch, args.heads
    flash, flash_why = load_flashlla(args.flashlla)
    tdt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
           "float64": torch.float64}
    lines = [f"# {machine_line()}",
             f"# device {dev}; batch x heads = {B} x {H}; causal; ridge {args.ridge}; "
             f"FlashLLA: {'given' if flash else flash_why}",
             "| method | dtype | d | seq | forward ms | forward+backward ms | fwd TFLOP/s |",
             "|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for dtype in dtypes:
        for d in dims:
            for n in seqs:
                g = torch.Generator(device=dev).manual_seed(0)
                mk = lambda: (0.3 * torch.randn(B, H, n, d, device=dev, generator=g)).to(  # noqa: E731
                    tdt[dtype]).requires_grad_()
                q, k, v = mk(), mk(), mk()
                cands = [
                    ("attnreg lla", lambda: at.lla(q, k, v, ridge=args.ridge, causal=True),
                     None),
                    ("attnreg softmax", lambda: at.softmax(q, k, v, causal=True), None),
                    ("torch SDPA", lambda: F.scaled_dot_product_attention(q, k, v,
                                                                          is_causal=True), None),
                ]
                if flash is not None:
                    cands.append(("FlashLLA", lambda: flash(q, k, v), None))
                for name, fwd, _ in cands:
                    try:
                        with torch.no_grad():
                            ms_f = time_call(torch, fwd, dev, args.repeats)
                    except Exception as e:  # noqa: BLE001 - reported in the table
                        ms_f = f"error: {str(e).splitlines()[0][:80]}"
                    def step():
                        for t in (q, k, v):
                            t.grad = None
                        fwd().float().sum().backward()
                    try:
                        ms_fb = time_call(torch, step, dev, args.repeats)
                    except RuntimeError as e:
                        msg = str(e)
                        ms_fb = ("no CUDA backward yet" if "CUDA backward" in msg
                                 else f"error: {msg.splitlines()[0][:80]}")
                    if isinstance(ms_f, float):
                        per_pair = 4 if "lla" not in name.lower() else 10 + 6 * args.T
                        tf = B * H * n * (n + 1) / 2 * per_pair * d / (ms_f * 1e-3) / 1e12
                        tf_s = f"{tf:.3g}"
                        ms_f = f"{ms_f:.3g}"
                    else:
                        tf_s = "-"
                    ms_fb = f"{ms_fb:.3g}" if isinstance(ms_fb, float) else ms_fb
                    line = f"| {name} | {dtype} | {d} | {n} | {ms_f} | {ms_fb} | {tf_s} |"
                    lines.append(line)
                    print(line, flush=True)
    if args.out:
        pathlib.Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", type=int, nargs="+",
                    default=[1024, 2048, 4096, 8192, 16384, 32768])
    ap.add_argument("--dims", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--dtypes", nargs="+", default=["bfloat16", "float32"],
                    choices=list(DTYPES))
    ap.add_argument("--kind", default="lla", choices=list(KINDS))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--ridge", type=float, default=0.1)
    ap.add_argument("--cg-tol", type=float, default=1e-6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peak-tflops", type=float, default=None,
                    help="dense bf16 tensor-core peak of this GPU (default from its name)")
    ap.add_argument("--naive-max-seq", type=int, default=8192,
                    help="largest seq for the naive torch baseline (it needs B*H*N^2 floats)")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--lib", help="prebuilt standalone library (skip the nvcc build)")
    ap.add_argument("--csv", help="also write the rows to this CSV file")
    ap.add_argument("--train", action="store_true",
                    help="forward and forward+backward through attnreg.torch, torch SDPA and "
                         "FlashLLA (see the module documentation)")
    ap.add_argument("--flashlla", help="MODULE:FUNCTION of a reference FlashLLA f(q, k, v)")
    ap.add_argument("--T", type=float, default=32,
                    help="--train: CG sweeps assumed in LLA's FLOP count")
    ap.add_argument("--train-seq", type=int, nargs="+", default=[64],
                    help="--train without a GPU: sequence lengths (CPU smoke run)")
    ap.add_argument("--train-dims", type=int, nargs="+", default=[16])
    ap.add_argument("--out", help="--train: write the table (with the machine line) here")
    args = ap.parse_args()
    if args.train:
        return train_main(args)

    why = no_gpu_reason()
    if why:
        print(f"bench_cuda_lla: no GPU visible ({why}); this benchmark needs a CUDA GPU. "
              "Compile-only evidence: bench/cuda_resource_usage.sh.", file=sys.stderr)
        return 2
    name = gpu_name()
    peak = args.peak_tflops
    if peak is None:
        peak = 989.0 if ("H100" in name or "H200" in name) else (312.0 if "A100" in name else
                                                                 float("nan"))
    lib = pathlib.Path(args.lib) if args.lib else build_library(args.nvcc, gpu_arch())
    so = load(lib)
    print(f"# {name}; bf16 dense peak {peak} TFLOP/s; batch x heads = {args.batch} x "
          f"{args.heads}; causal; ridge {args.ridge}; kind {args.kind}")
    cols = ["dtype", "d", "seq", "block", "ms", "MiB", "T_mean", "T_max", "TFLOP/s",
            "%peak", "naive_ms", "naive_MiB", "speedup"]
    print(" ".join(f"{c:>9}" for c in cols))
    rows = []
    for dtype in args.dtypes:
        for d in args.dims:
            for n in args.seq:
                r = run_attnreg(so, dtype, args.kind, args.batch, args.heads, n, d, args.ridge,
                                args.cg_tol, args.repeats)
                if "error" in r:
                    print(f"{dtype:>9} {d:>9} {n:>9} error: {r['error']}")
                    continue
                T = r["T_mean"] if args.kind == "lla" else 0.0
                per_pair = (10 + 6 * T) if args.kind == "lla" else 4
                flops = args.batch * args.heads * n * (n + 1) / 2 * per_pair * d
                tflops = flops / (r["ms"] * 1e-3) / 1e12
                naive = {"error": "skipped"}
                if args.kind == "lla" and n <= args.naive_max_seq:
                    naive = run_naive_torch(dtype, args.batch, args.heads, n, d, args.ridge,
                                            max(1, round(T)), max(1, args.repeats // 2))
                row = {"dtype": dtype, "d": d, "seq": n, "block": r["block"],
                       "ms": r["ms"], "MiB": r["bytes"] / 2**20, "T_mean": T,
                       "T_max": r["T_max"], "TFLOP/s": tflops,
                       "%peak": 100 * tflops / peak if peak == peak else float("nan"),
                       "naive_ms": naive.get("ms", naive.get("error")),
                       "naive_MiB": (naive["bytes"] / 2**20 if "bytes" in naive else "-"),
                       "speedup": (naive["ms"] / r["ms"] if "ms" in naive else "-")}
                rows.append(row)
                print(" ".join(f"{v:>9.3g}" if isinstance(v, float) else f"{v!s:>9}"
                               for v in row.values()), flush=True)
    if args.csv:
        import csv

        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
