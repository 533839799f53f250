"""Size limits of the C++ core that keep it readable: no source file in core/src over 600 lines
and no C++ function in the core, the CUDA backend or the bindings over 120 lines.

Function lengths come from lizard (a maintained code-metrics tool on PyPI, installed by the
set-up), which counts a function from its signature to its closing brace, comments included.
"""
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120


def _sources(*folders, suffixes=(".cpp", ".hpp", ".h", ".cu", ".cuh")):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in suffixes and path.is_file():
                yield path


pytestmark = pytest.mark.skipif(not (ROOT / "core" / "src").is_dir(),
                                reason="needs the repository checkout (core/src)")


def test_no_core_source_file_over_600_lines():
    long_files = []
    for path in _sources("core/src"):
        n = sum(1 for _ in path.open(encoding="utf-8"))
        if n > MAX_FILE_LINES:
            long_files.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not long_files, "split these by responsibility:\n" + "\n".join(long_files)


def test_no_cpp_function_over_120_lines():
    import lizard
    long_functions = []
    for path in _sources("core", "cuda", "bindings"):
        info = lizard.analyze_file(str(path))
        for fn in info.function_list:
            length = fn.end_line - fn.start_line + 1
            if length > MAX_FUNCTION_LINES:
                long_functions.append(
                    f"{path.relative_to(ROOT)}:{fn.start_line} {fn.long_name}: {length} lines")
    assert not long_functions, "break these into named steps:\n" + "\n".join(long_functions)


def test_the_limit_checks_see_the_sources():
    # Guards the two tests above against passing on an empty or moved tree.
    import lizard
    files = list(_sources("core/src"))
    assert len(files) > 50
    lengths = [fn.end_line - fn.start_line + 1
               for fn in lizard.analyze_file(str(ROOT / "core/src/solve/local_fit.cpp")).function_list]
    assert lengths and max(lengths) > 20
