// attnreg CUDA backend: turn the run-time element type, head dimension and kind into template
// arguments once, outside the kernels (the pattern of FlashAttention's static_switch.h), and
// pick the kernel configuration. Host code only; usable by nvcc and by the host emulation.
#pragma once

#include <type_traits>

#include "lla_kernels.cuh"
#include "attnreg/cuda/lla_params.hpp"

namespace attnreg {
namespace ATTNREG_CUDA_NS {

/// Head-dimension bucket of max(d, dv): 32, 64 or 128 (0 when larger than 128).
inline int head_dim_bucket(int d, int dv) {
  const int m = d > dv ? d : dv;
  if (m <= 32) return 32;
  if (m <= 64) return 64;
  if (m <= 128) return 128;
  return 0;
}

/// Calls f.template operator()<Cfg>() with the kernel configuration of (dtype, kind, bucket
/// of max(d, dv)). float32 uses the SIMT engine; float16 and bfloat16 use tensor cores, except
/// the direct kind, which is SIMT for every input type. The caller has checked the bucket
/// (<= 128; <= 32 for the direct kind).
template <class F>
void dispatch_config(DType dtype, Kind kind, int d, int dv, F&& f) {
  const int bucket = head_dim_bucket(d, dv);
  auto with_elem = [&](auto elem_tag) {
    using E = typename decltype(elem_tag)::type;
    constexpr bool kTC = !std::is_same<E, float>::value;
    auto with_d = [&](auto d_tag) {
      constexpr int D = decltype(d_tag)::value;
      switch (kind) {
        case Kind::softmax:
          f.template operator()<kern::Cfg<E, D, kTC, Kind::softmax>>();
          break;
        case Kind::lla_blockwise:
          f.template operator()<kern::Cfg<E, D, kTC, Kind::lla_blockwise>>();
          break;
        case Kind::lla_direct:
          f.template operator()<kern::Cfg<E, kern::kDirectMaxD, false, Kind::lla_direct>>();
          break;
      }
    };
    if (kind == Kind::lla_direct || bucket == 32) {
      with_d(std::integral_constant<int, 32>{});
    } else if (bucket == 64) {
      with_d(std::integral_constant<int, 64>{});
    } else {
      with_d(std::integral_constant<int, 128>{});
    }
  };
  switch (dtype) {
    case DType::float32:
      with_elem(std::common_type<float>{});
      break;
    case DType::float16:
      with_elem(std::common_type<f16_t>{});
      break;
    case DType::bfloat16:
      with_elem(std::common_type<bf16_t>{});
      break;
  }
}

}  // namespace ATTNREG_CUDA_NS
}  // namespace attnreg
