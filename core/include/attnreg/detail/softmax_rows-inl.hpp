// attnreg (internal, not part of the public API): one row of the attention regression's
// objective and gradient (least_squares_softmax.cpp, attention_regression_objective), written
// once with Google Highway and compiled for every x86 target through hwy/foreach_target.h;
// least_squares_softmax.cpp picks the best for the running CPU (HWY_DYNAMIC_DISPATCH), as
// kernel_pairs.cpp does for the kernel tiles.
//
// Row i of the leave-self-out softmax attention over the n training rows: scores
// s_j = K_i . K_j, weights a_j = exp(s_j - max_{j != i} s) / z (a_i = 0), prediction
// yhat = sum_j a_j Y_j, residual r = yhat - Y_i; with the gradient G_ij = c a_j ((Y r)_j - yhat'r)
// of the loss with respect to s_ij, the row's share of dK: dK_query_i = sum_j G_ij K_j and
// dK_key_j += G_ij K_i. The exp is hwy_exp-inl.hpp's ExpNonpositive (<= 1 ulp on [-708, 0],
// exactly 0 at -inf), the one vector exp of the core.
//
// Arrays are padded to a multiple of RowArgs::pad doubles (the widest target's lanes): the
// padded entries of K and Y are 0 and their scores are set to -inf, so their weights are exactly
// 0 and every loop runs over full vectors. Each sum over j accumulates lane-wise and reduces the
// lanes once at the end: a fixed order for a given target, the same for any number of threads.

// ------------------------------------------------------------ once: the argument block
#ifndef ATTNREG_DETAIL_SOFTMAX_ROWS_ONCE
#define ATTNREG_DETAIL_SOFTMAX_ROWS_ONCE
#include <cstddef>

namespace attnreg {
namespace detail {

struct SoftmaxRowArgs {
  static constexpr std::size_t pad = 16;  // 2 x the AVX-512 lanes: a multiple of every target's
  std::size_t n = 0;       // rows
  std::size_t np = 0;      // n rounded up to a multiple of pad (leading dimension)
  std::size_t L = 0;       // rank (columns of K)
  std::size_t k = 0;       // outputs (columns of Y)
  const double* K = nullptr;  // np x L column-major, zero-padded
  const double* Y = nullptr;  // np x k column-major, zero-padded
  double c = 0.0;          // 2 / (n k): the loss's scale in the gradient
};

}  // namespace detail
}  // namespace attnreg
#endif

// ------------------------------------------------------------ per target
#if defined(ATTNREG_DETAIL_SOFTMAX_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ATTNREG_DETAIL_SOFTMAX_ROWS_INL_H_
#undef ATTNREG_DETAIL_SOFTMAX_ROWS_INL_H_
#else
#define ATTNREG_DETAIL_SOFTMAX_ROWS_INL_H_
#endif

#include <limits>

#include <hwy/highway.h>

#include "attnreg/detail/hwy_exp-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace attnreg {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Row i: returns its squared residuals sum_o r_o^2; with dkq != nullptr writes
/// dK_query_i (L values) and adds the row's G_ij K_i into dkk (np x L, column-major).
/// Scratch: a and g, np doubles each; r, k doubles (the residuals).
double SoftmaxRow(const detail::SoftmaxRowArgs& A, std::size_t i, double* HWY_RESTRICT a,
                  double* HWY_RESTRICT g, double* r, double* dkq, double* dkk) {
  using D = hn::ScalableTag<double>;
  const D d;
  const std::size_t N = hn::Lanes(d), np = A.np, L = A.L, k = A.k;
  const double ninf = -std::numeric_limits<double>::infinity();
  // Scores and their maximum over j != i (and over real rows: padded scores are -inf).
  auto vmax = hn::Set(d, ninf);
  for (std::size_t j = 0; j < np; j += N) {
    auto s = hn::Zero(d);
    for (std::size_t l = 0; l < L; ++l)
      s = hn::MulAdd(hn::Set(d, A.K[l * np + i]), hn::LoadU(d, A.K + l * np + j), s);
    hn::StoreU(s, d, a + j);
    if (j + N > A.n || (i >= j && i < j + N)) {
      for (std::size_t t = j; t < j + N; ++t)
        if (t >= A.n || t == i) a[t] = ninf;
      s = hn::LoadU(d, a + j);
    }
    vmax = hn::Max(vmax, s);
  }
  const auto mx = hn::Set(d, hn::GetLane(hn::MaxOfLanes(d, vmax)));
  // Weights e_j = exp(s_j - max) (unnormalised) and z = sum_j e_j.
  auto vz = hn::Zero(d);
  for (std::size_t j = 0; j < np; j += N) {
    const auto e = ExpNonpositive(d, hn::Sub(hn::LoadU(d, a + j), mx));
    hn::StoreU(e, d, a + j);
    vz = hn::Add(vz, e);
  }
  const double z = hn::GetLane(hn::SumOfLanes(d, vz));
  // yhat_o = sum_j e_j Y_jo / z, r_o = yhat_o - Y_io; yr = yhat'r.
  double loss = 0.0, yr = 0.0;
  for (std::size_t o = 0; o < k; ++o) {
    const double* yo = A.Y + o * np;
    auto acc = hn::Zero(d);
    for (std::size_t j = 0; j < np; j += N)
      acc = hn::MulAdd(hn::LoadU(d, a + j), hn::LoadU(d, yo + j), acc);
    const double yhat = hn::GetLane(hn::SumOfLanes(d, acc)) / z;
    const double ro = yhat - yo[i];
    r[o] = ro;
    loss += ro * ro;
    yr += yhat * ro;
  }
  if (dkq == nullptr) return loss;
  // G_ij = (c / z) e_j ((Y r)_j - yr).
  const auto cz = hn::Set(d, A.c / z), vyr = hn::Set(d, yr);
  for (std::size_t j = 0; j < np; j += N) {
    auto yrj = hn::Zero(d);
    for (std::size_t o = 0; o < k; ++o)
      yrj = hn::MulAdd(hn::LoadU(d, A.Y + o * np + j), hn::Set(d, r[o]), yrj);
    hn::StoreU(hn::Mul(hn::Mul(cz, hn::LoadU(d, a + j)), hn::Sub(yrj, vyr)), d, g + j);
  }
  for (std::size_t l = 0; l < L; ++l) {
    const double* kl = A.K + l * np;
    double* dl = dkk + l * np;
    const auto kil = hn::Set(d, kl[i]);
    auto acc = hn::Zero(d);
    for (std::size_t j = 0; j < np; j += N) {
      const auto gj = hn::LoadU(d, g + j);
      acc = hn::MulAdd(gj, hn::LoadU(d, kl + j), acc);
      hn::StoreU(hn::MulAdd(gj, kil, hn::LoadU(d, dl + j)), d, dl + j);
    }
    dkq[l] = hn::GetLane(hn::SumOfLanes(d, acc));
  }
  return loss;
}

}  // namespace HWY_NAMESPACE
}  // namespace attnreg
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
