"""Release metadata: one version everywhere, a self-contained source distribution, the licence.

The version lives in the repository's VERSION file; CMake compiles it into the core (and so into
``attnreg.__version__`` and ``build_info()``), scikit-build-core's regex provider writes it into
the wheel and sdist metadata, and R-package/build-package.sh writes it into the staged
DESCRIPTION (checked on the R side by tests/testthat/test-release.R).
"""
from __future__ import annotations

import re
import tarfile
from pathlib import Path

import pytest

import attnreg

ROOT = Path(__file__).resolve().parents[2]


def _version_file() -> str:
    return (ROOT / "VERSION").read_text().strip()


def test_version_file_is_plain_x_y_z():
    assert re.fullmatch(r"\d+\.\d+\.\d+", _version_file())


def test_python_version_is_the_compiled_core_version_is_the_version_file():
    v = _version_file()
    assert attnreg.__version__ == v
    assert attnreg.build_info()["version"] == v


def test_no_other_file_hard_codes_the_version():
    # pyproject takes it from VERSION; the R DESCRIPTION gets it at staging time.
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^dynamic = \["version"\]', pyproject, re.M)
    assert not re.search(r"^version\s*=", pyproject, re.M)
    assert 'input = "VERSION"' in pyproject
    assert not re.search(r"^Version:", (ROOT / "R-package/DESCRIPTION").read_text(), re.M)
    assert "VERSION" in (ROOT / "R-package/build-package.sh").read_text()
    cmake = (ROOT / "CMakeLists.txt").read_text()
    assert re.search(r"project\(attnreg VERSION \$\{ATTNREG_VERSION_FILE\}", cmake)
    init = (ROOT / "python-package/src/attnreg/__init__.py").read_text()
    assert not re.search(r"__version__\s*=\s*['\"]", init)


def test_licence_is_mit_in_both_packages():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    desc = (ROOT / "R-package/DESCRIPTION").read_text()
    assert "License: MIT + file LICENSE" in desc
    assert re.match(r"YEAR: \d{4}\nCOPYRIGHT HOLDER: ", (ROOT / "R-package/LICENSE").read_text())
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT"' in pyproject and 'license-files = ["LICENSE"]' in pyproject


def test_one_maintainer_address_everywhere():
    addresses = set()
    for f in ["pyproject.toml", "R-package/DESCRIPTION", "CITATION.cff"]:
        addresses |= set(re.findall(r"[\w.+-]+@[\w-]+\.[\w.]+", (ROOT / f).read_text()))
    assert addresses == {"attnreg-maintainers@attnreg.org"}


def test_sdist_is_self_contained(tmp_path):
    # Building the sdist compiles nothing (a fraction of a second); .ci/test.sh builds a binary
    # wheel from it (tools/build-wheel.sh) and installs that in a bare Debian root.
    import os

    from scikit_build_core import build

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        name = build.build_sdist(str(tmp_path))
    finally:
        os.chdir(cwd)
    v = _version_file()
    assert name == f"attnreg-{v}.tar.gz"
    with tarfile.open(tmp_path / name) as tar:
        names = set(tar.getnames())
        pkg_info = tar.extractfile(f"attnreg-{v}/PKG-INFO").read().decode()
    top = f"attnreg-{v}/"
    for needed in ["CMakeLists.txt", "VERSION", "LICENSE", "pyproject.toml", "README.md",
                   "core/src/base/build_info.cpp", "core/include/attnreg/kernels/kernel.hpp",
                   "bindings/python/module.cpp", "cuda/src/device.cu", "cuda/include/attnreg/cuda/backend.hpp",
                   "python-package/src/attnreg/__init__.py", "python-package/README.md"]:
        assert top + needed in names, needed
    # Nothing the wheel does not need, and no compiled leftovers from a checkout.
    assert not any(n.startswith(top + p) for n in names
                   for p in ["R-package/", "bindings/r/", "tests/", "build", "data/",
                             "cuda/testing/"])
    assert not any(n.endswith(".so") for n in names)
    assert f"\nVersion: {v}\n" in pkg_info
    assert "\nLicense-Expression: MIT\n" in pkg_info
    assert "\nLicense-File: LICENSE\n" in pkg_info
    assert "\nProject-URL: Issues, " in pkg_info
    assert "attnreg-maintainers@attnreg.org" in pkg_info


# The same keys, and the same one-line CUDA summary, as R's attnreg_build_info()
# (R-package/tests/testthat/test-release.R checks the same list).
BUILD_INFO_KEYS = ["version", "openmp", "max_threads", "blas", "cuda_compiled", "cuda_archs",
                   "gpu_count", "gpu_name", "cuda_error", "cuda", "simd"]


def test_build_info_says_what_r_says_about_cuda():
    b = attnreg.build_info()
    assert list(b) == BUILD_INFO_KEYS
    if not b["cuda_compiled"]:
        assert b["gpu_count"] == 0
        assert b["cuda"] == "not compiled: " + b["cuda_error"]
        assert "built without the CUDA backend" in b["cuda_error"]
    elif b["gpu_count"] == 0:
        assert b["cuda"] == f"compiled (architectures {b['cuda_archs']}); no GPU visible: {b['cuda_error']}"
    else:
        assert b["cuda"].startswith(f"compiled (architectures {b['cuda_archs']}); GPU visible: {b['gpu_name']}")
