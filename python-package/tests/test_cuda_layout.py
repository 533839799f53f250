"""The CUDA backend is a plug-in of the core (cuda/README.md): the dependency runs one way.

The core (core/) declares the device interface, attnreg/attention/device_backend.hpp, and knows
no CUDA: none of its headers or sources includes a header of cuda/ or reads the build's CUDA
switch. cuda/ implements the interface: public headers in cuda/include/attnreg/cuda/, kernels
and host code in cuda/src/, the CPU emulator and its tests in cuda/testing/ (which cuda/src
reaches only under ATTNREG_CUDA_EMULATION). The benchmark's entry point lives in bench/cuda/.
These are source checks on the checkout; they skip where the sources are absent (an installed
wheel).
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "cuda"

pytestmark = pytest.mark.skipif(not (CUDA / "src").is_dir() or not (ROOT / "core").is_dir(),
                                reason="needs the repository's sources (core/, cuda/)")

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def _sources(folder, exts=(".hpp", ".h", ".cpp", ".cu", ".cuh")):
    return sorted(p for p in folder.rglob("*") if p.suffix in exts and p.is_file())


def _cuda_header_names():
    # Headers cuda/ includes by bare name (its src/ and testing/, and the public ones, which
    # the old flat cuda/ folder was included by).
    names = {p.name for p in _sources(CUDA)}
    assert "attention_cuda.hpp" in names and "lla_kernels.cuh" in names  # the scan sees cuda/
    return names


def test_core_includes_no_cuda_header():
    cuda_names = _cuda_header_names()
    offenders = []
    for f in _sources(ROOT / "core"):
        for inc in INCLUDE.findall(f.read_text()):
            if inc.startswith(("attnreg/cuda/", "cuda/", "../")) or \
                    ("/" not in inc and inc in cuda_names):
                offenders.append(f"{f.relative_to(ROOT)}: #include {inc}")
    assert not offenders, "core/ must not include cuda/ headers:\n" + "\n".join(offenders)


def test_core_does_not_read_the_cuda_switch():
    # The core compiles the same with and without the backend; only cuda/ sees ATTNREG_WITH_CUDA.
    offenders = [str(f.relative_to(ROOT)) for f in _sources(ROOT / "core")
                 if re.search(r"\bATTNREG_(WITH_CUDA|CUDA_ARCHS|CUDA_EMULATION)\b", f.read_text())]
    assert not offenders, offenders


def test_backend_layout():
    flat = sorted(p.name for p in CUDA.iterdir() if p.is_file() and p.suffix != ".md")
    assert flat == [], f"cuda/ holds only README.md and include/, src/, testing/: {flat}"
    public = {p.name for p in (CUDA / "include" / "attnreg" / "cuda").iterdir()}
    assert {"attention_cuda.hpp", "backend.hpp", "error.hpp"} <= public
    testing = {p.name for p in (CUDA / "testing").iterdir()}
    assert {"cta_emulator.hpp", "cuda_runtime_emulation.hpp"} <= testing
    assert (ROOT / "bench" / "cuda" / "bench_capi.cu").is_file()
    # The shipped sources reach the emulator only under ATTNREG_CUDA_EMULATION.
    for f in _sources(CUDA / "src") + _sources(CUDA / "include"):
        text = f.read_text()
        for name in ("cta_emulator.hpp", "cuda_runtime_emulation.hpp"):
            for m in re.finditer(r'#\s*include\s*"' + re.escape(name) + '"', text):
                before = text[:m.start()]
                assert "ATTNREG_CUDA_EMULATION" in before.split("#endif")[-1], \
                    f"{f.relative_to(ROOT)} includes {name} outside ATTNREG_CUDA_EMULATION"


def test_backend_errors_translated_in_one_place():
    # cuda/src throws its own CudaError; only the adapter names the core's error types.
    users = sorted(str(f.relative_to(ROOT)) for f in _sources(CUDA / "src")
                   if re.search(r"\b(InvalidArgument|NumericalError)\b", f.read_text()))
    assert users == ["cuda/src/backend.cpp"], users
