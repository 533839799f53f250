#!/usr/bin/env bash
# Compile-only evidence for the CUDA kernels (issue 8): registers, spills, stack and shared
# memory of every kernel instantiation, from `nvcc --resource-usage` (ptxas), for sm_80 and
# sm_90. Needs nvcc, g++ and python3; no GPU. Regenerates bench/cuda_resource_usage.txt:
#
#   bench/cuda_resource_usage.sh [OUT]        (default bench/cuda_resource_usage.txt)
#   ARCHS="90" bench/cuda_resource_usage.sh   (one architecture)
#
# Dynamic shared memory is not visible to ptxas (the kernels carve one extern buffer): its size
# per configuration comes from the kernels' own Layout<Cfg>::bytes, printed by a small host
# program compiled against the same header (host emulation mode).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bench/cuda_resource_usage.txt}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
archs=${ARCHS:-"80 90"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. Shared memory and block sizes per configuration.
cat > "$tmp/layout.cpp" <<'CPP'
#define ATTNREG_CUDA_EMULATION 1
#include <cstdio>
#include "static_switch.hpp"
namespace ce = attnreg::cuda_emulated;
using attnreg::cuda::Kind;
template <class C> void row(const char* elem) {
  std::printf("%s %d %d %d %d %d %zu\n", elem, C::D, int(C::TC), int(C::kind), C::Br, C::Bc,
              ce::kern::Layout<C>::bytes);
}
template <int D> void dims() {
  row<ce::kern::Cfg<float, D, false, Kind::softmax>>("float");
  row<ce::kern::Cfg<float, D, false, Kind::lla_blockwise>>("float");
  row<ce::kern::Cfg<ce::f16_t, D, true, Kind::softmax>>("half");
  row<ce::kern::Cfg<ce::f16_t, D, true, Kind::lla_blockwise>>("half");
  row<ce::kern::Cfg<ce::bf16_t, D, true, Kind::softmax>>("bfloat16");
  row<ce::kern::Cfg<ce::bf16_t, D, true, Kind::lla_blockwise>>("bfloat16");
}
int main() {
  dims<32>(); dims<64>(); dims<128>();
  row<ce::kern::Cfg<float, 32, false, Kind::lla_direct>>("float");
  row<ce::kern::Cfg<ce::f16_t, 32, false, Kind::lla_direct>>("half");
  row<ce::kern::Cfg<ce::bf16_t, 32, false, Kind::lla_direct>>("bfloat16");
}
CPP
g++ -std=c++17 -O0 -I"$root/core/include" -I"$root/cuda/include" -I"$root/cuda/src" -I"$root/cuda/testing" "$tmp/layout.cpp" -o "$tmp/layout"
"$tmp/layout" > "$tmp/layout.txt"

# 2. ptxas resource usage of every instantiation.
for arch in $archs; do
  for src in "$root"/cuda/src/lla_fwd_d*.cu; do
    echo "nvcc sm_$arch $(basename "$src") ..." >&2
    "$nvcc" -std=c++17 -O3 -arch="sm_$arch" -I"$root/core/include" -I"$root/cuda/include" \
      --resource-usage -c "$src" -o "$tmp/x.o" > "$tmp/ptxas_${arch}_$(basename "$src").log" 2>&1
  done
done

# 3. One table.
python3 - "$tmp" "$out" "$("$nvcc" --version | tail -1)" <<'PY'
import glob, os, re, subprocess, sys
tmp, out, version = sys.argv[1], sys.argv[2], sys.argv[3]
kinds = {"0": "softmax", "1": "lla_blockwise", "2": "lla_direct"}
elems = {"f": "float", "6__half": "half", "13__nv_bfloat16": "bfloat16"}
layout = {}
for line in open(os.path.join(tmp, "layout.txt")):
    e, D, tc, k, br, bc, smem = line.split()
    layout[(e, D, tc, k)] = (br, bc, int(smem))
rows = []
for log in sorted(glob.glob(os.path.join(tmp, "ptxas_*.log"))):
    arch = re.search(r"ptxas_(\d+)_", log).group(1)
    fn = None
    for line in open(log):
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            fn = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and fn:
            stack, st, ld = m.groups()
            continue
        m = re.search(r"Used (\d+) registers(.*)", line)
        if m and fn:
            regs = m.group(1)
            smem_static = re.search(r"(\d+) bytes smem", m.group(2))
            km = re.search(r"(lla|softmax)_forward_kernelINS1_3CfgI(f|6__half|13__nv_bfloat16)Li(\d+)ELb([01])ELNS0_4KindE(\d)", fn)
            if km:
                e = elems[km.group(2)]
                key = (e, km.group(3), km.group(4), km.group(5))
                br, bc, dyn = layout[key]
                rows.append((int(arch), kinds[key[3]], e, int(key[1]),
                             "tensor cores" if key[2] == "1" else "SIMT", f"{br}x{bc}", int(regs),
                             int(st), int(ld), int(stack),
                             int(smem_static.group(1)) if smem_static else 0, dyn))
            fn = None
rows.sort()
hdr = ("arch", "kind", "inputs", "D", "engine", "BrxBc", "regs", "spill_st", "spill_ld",
       "stack", "smem_static", "smem_dynamic")
with open(out, "w") as f:
    f.write("# attnreg CUDA kernels: ptxas resource usage per instantiation (128 threads/block)\n")
    f.write(f"# regenerate: bench/cuda_resource_usage.sh   ({version})\n")
    f.write("# spill_st / spill_ld / stack in bytes per thread; smem in bytes per block "
            "(dynamic = Layout<Cfg>::bytes; sm_80 allows 166912, sm_90 232448)\n")
    widths = [4, 13, 8, 3, 12, 5, 4, 8, 8, 5, 11, 12]
    f.write(" ".join(h.rjust(w) for h, w in zip(hdr, widths)) + "\n")
    for r in rows:
        f.write(" ".join(str(v).rjust(w) for v, w in zip(r, widths)) + "\n")
print(f"wrote {out} ({len(rows)} kernels)")
PY
