// Tests of the attention engine (core/include/attnreg/attention/attention.hpp) and of the per-tile math
// it shares with the CUDA kernels (lla_tile.hpp). Independent float64 oracles are written out
// here in a few lines each (Armadillo, explicit loops); identities are checked in both
// directions where a broken implementation could pass one of them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/attention/attention.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/attention/lla_tile.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace {

using namespace attnreg::attention;
using i64 = std::int64_t;

template <class T>
struct Tensor {
  i64 B = 1, H = 1, S = 1, D = 1;
  std::vector<T> x;
  Tensor() = default;
  Tensor(i64 b, i64 h, i64 s, i64 d) : B(b), H(h), S(s), D(d), x(static_cast<std::size_t>(b * h * s * d)) {}
  T& operator()(i64 b, i64 h, i64 s, i64 d) { return x[((b * H + h) * S + s) * D + d]; }
  T operator()(i64 b, i64 h, i64 s, i64 d) const { return x[((b * H + h) * S + s) * D + d]; }
  View<const T> cv() const { return make_view<const T>(x.data(), B, H, S, D); }
  View<T> v() { return make_view<T>(x.data(), B, H, S, D); }
  template <class U>
  Tensor<U> cast() const {
    Tensor<U> o(B, H, S, D);
    for (std::size_t i = 0; i < x.size(); ++i) o.x[i] = static_cast<U>(x[i]);
    return o;
  }
};

Tensor<double> randn(i64 B, i64 H, i64 S, i64 D, unsigned seed, double sd = 1.0,
                     double mean = 0.0) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(mean, sd);
  Tensor<double> t(B, H, S, D);
  for (auto& v : t.x) v = n(g);
  return t;
}

void unit_rows(Tensor<double>& t) {
  for (i64 b = 0; b < t.B; ++b)
    for (i64 h = 0; h < t.H; ++h)
      for (i64 s = 0; s < t.S; ++s) {
        double nrm = 0;
        for (i64 d = 0; d < t.D; ++d) nrm += t(b, h, s, d) * t(b, h, s, d);
        nrm = std::sqrt(nrm);
        for (i64 d = 0; d < t.D; ++d) t(b, h, s, d) /= nrm;
      }
}

template <class T>
Tensor<T> run(const Tensor<T>& Q, const Tensor<T>& K, const Tensor<T>& V, const Options& o,
              Diagnostics* diag = nullptr) {
  Tensor<T> out(Q.B, Q.H, Q.S, V.D);
  Diagnostics dg = forward<T>(Q.cv(), K.cv(), V.cv(), out.v(), o);
  if (diag) *diag = dg;
  return out;
}

template <class T, class U>
double max_abs_diff(const Tensor<T>& a, const Tensor<U>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.x.size(); ++i)
    m = std::max(m, std::fabs(static_cast<double>(a.x[i]) - static_cast<double>(b.x[i])));
  return m;
}

template <class T>
double max_abs(const Tensor<T>& a) {
  double m = 0;
  for (auto v : a.x) m = std::max(m, std::fabs(static_cast<double>(v)));
  return m;
}

/// ||a - b||_F / ||b||_F
template <class T, class U>
double rel_fro(const Tensor<T>& a, const Tensor<U>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.x.size(); ++i) {
    const double e = static_cast<double>(a.x[i]) - static_cast<double>(b.x[i]);
    num += e * e;
    den += static_cast<double>(b.x[i]) * static_cast<double>(b.x[i]);
  }
  return std::sqrt(num / den);
}

Options lla_opts(LLAAlgorithm alg, double ridge, bool causal = false) {
  Options o;
  o.method = Method::lla;
  o.lla_algorithm = alg;
  o.ridge = ridge;
  o.causal = causal;
  o.block_q = 8;
  o.block_k = 16;
  return o;
}

/// Keys query i may use: the rule of attention.hpp, restated.
void key_range(i64 i, i64 nq, i64 nk, bool causal, i64 w, i64& lo, i64& hi) {
  const i64 a = i + nk - nq;
  lo = 0;
  hi = nk - 1;
  if (causal) hi = std::min(hi, a);
  if (w > 0) {
    lo = std::max<i64>(0, a - w + 1);
    if (!causal) hi = std::min(hi, a + w - 1);
  }
}

/// Independent oracle for LLA: local linear regression at q with normalised weights p_j,
///   (a, B) = argmin sum_j p_j ||v_j - a - B (k_j - q)||^2 + lambda ||B||_F^2   (DESIGN §2),
/// solved as one least-squares problem by QR (arma::solve on the augmented design), not by
/// eq. 8. Returns a.
arma::rowvec local_linear_oracle(const arma::mat& Kv, const arma::mat& Vv, const arma::rowvec& q,
                                 const arma::vec& w, double lambda) {
  const arma::uword n = Kv.n_rows, d = Kv.n_cols;
  const arma::vec p = w / arma::accu(w);
  arma::mat X(n + d, d + 1, arma::fill::zeros);
  arma::mat Y(n + d, Vv.n_cols, arma::fill::zeros);
  for (arma::uword j = 0; j < n; ++j) {
    const double s = std::sqrt(p(j));
    X(j, 0) = s;
    X.row(j).tail(d) = s * (Kv.row(j) - q);
    Y.row(j) = s * Vv.row(j);
  }
  for (arma::uword c = 0; c < d; ++c) X(n + c, 1 + c) = std::sqrt(lambda);
  arma::mat coef = arma::solve(X, Y);
  return coef.row(0);
}

/// Kernel weights of query i in float64, straight from the definitions.
arma::vec kernel_weights(const Tensor<double>& Q, const Tensor<double>& K, i64 b, i64 h, i64 i,
                         i64 lo, i64 hi, bool rbf, double a) {
  arma::vec w(static_cast<arma::uword>(hi - lo + 1));
  for (i64 j = lo; j <= hi; ++j) {
    double l = 0;
    for (i64 c = 0; c < Q.D; ++c) {
      if (rbf) {
        const double z = K(b, h, j, c) - Q(b, h, i, c);
        l -= 0.5 * a * z * z;
      } else {
        l += a * K(b, h, j, c) * Q(b, h, i, c);
      }
    }
    w(j - lo) = l;
  }
  return arma::exp(w - w.max());
}

Tensor<double> lla_oracle(const Tensor<double>& Q, const Tensor<double>& K,
                          const Tensor<double>& V, bool causal, i64 window, bool rbf, double a,
                          const std::vector<double>& ridge) {
  Tensor<double> out(Q.B, Q.H, Q.S, V.D);
  for (i64 b = 0; b < Q.B; ++b)
    for (i64 h = 0; h < Q.H; ++h)
      for (i64 i = 0; i < Q.S; ++i) {
        i64 lo, hi;
        key_range(i, Q.S, K.S, causal, window, lo, hi);
        arma::mat Kv(hi - lo + 1, K.D), Vv(hi - lo + 1, V.D);
        for (i64 j = lo; j <= hi; ++j) {
          for (i64 c = 0; c < K.D; ++c) Kv(j - lo, c) = K(b, h, j, c);
          for (i64 c = 0; c < V.D; ++c) Vv(j - lo, c) = V(b, h, j, c);
        }
        arma::rowvec q(Q.D);
        for (i64 c = 0; c < Q.D; ++c) q(c) = Q(b, h, i, c);
        const double lam = ridge.size() == 1 ? ridge[0] : ridge[i];
        const arma::rowvec m =
            local_linear_oracle(Kv, Vv, q, kernel_weights(Q, K, b, h, i, lo, hi, rbf, a), lam);
        for (i64 c = 0; c < V.D; ++c) out(b, h, i, c) = m(c);
      }
  return out;
}

// ================================================================== the three LLA algorithms

struct Case {
  const char* name;
  i64 B, H, nq, nk, d, dv;
  bool causal;
  i64 window;
  LLAKernel kernel;
  double ridge;
  bool per_query_ridge;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class LLAAgree : public ::testing::TestWithParam<Case> {};

TEST_P(LLAAgree, NaiveDirectBlockwiseAndOracleAgreeInFloat64) {
  const Case c = GetParam();
  const auto Q = randn(c.B, c.H, c.nq, c.d, 1, 0.7);
  const auto K = randn(c.B, c.H, c.nk, c.d, 2, 0.7);
  const auto V = randn(c.B, c.H, c.nk, c.dv, 3);
  std::vector<double> ridge{c.ridge};
  Options base = lla_opts(LLAAlgorithm::naive, c.ridge, c.causal);
  base.window = c.window;
  base.lla_kernel = c.kernel;
  base.bandwidth = 1.3;
  if (c.per_query_ridge) {
    ridge.resize(c.nq);
    for (i64 i = 0; i < c.nq; ++i) ridge[i] = c.ridge * (1.0 + 0.5 * std::sin(double(i)));
    base.ridge_per_query = ridge;
  }
  const bool rbf = c.kernel == LLAKernel::rbf;
  const double a = rbf ? 1.0 / (1.3 * 1.3) : 1.0 / 1.3;
  const auto oracle = lla_oracle(Q, K, V, c.causal, c.window, rbf, a, ridge);
  const double scale = max_abs(oracle);

  Options on = base, od = base, ob = base;
  od.lla_algorithm = LLAAlgorithm::direct;
  ob.lla_algorithm = LLAAlgorithm::blockwise;
  Diagnostics db;
  const auto naive = run(Q, K, V, on);
  const auto direct = run(Q, K, V, od);
  const auto block = run(Q, K, V, ob, &db);
  EXPECT_LT(max_abs_diff(naive, oracle), 1e-10 * scale) << c.name;
  EXPECT_LT(max_abs_diff(direct, naive), 1e-10 * scale) << c.name;
  EXPECT_LT(max_abs_diff(block, naive), 1e-10 * scale) << c.name;
  EXPECT_TRUE(db.cg_converged) << c.name;
  EXPECT_GT(db.cg_max_iterations, 0) << c.name;
  EXPECT_EQ(db.method, "lla/blockwise");
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LLAAgree,
    ::testing::Values(
        Case{"full_dot", 2, 2, 37, 37, 4, 3, false, 0, LLAKernel::dot, 0.1, false},
        Case{"causal_dot", 2, 3, 37, 37, 5, 2, true, 0, LLAKernel::dot, 0.1, false},
        Case{"causal_rbf", 1, 2, 41, 41, 3, 4, true, 0, LLAKernel::rbf, 0.05, false},
        Case{"window_causal", 1, 1, 50, 50, 4, 3, true, 7, LLAKernel::dot, 0.2, false},
        Case{"window_noncausal", 1, 2, 33, 33, 3, 3, false, 6, LLAKernel::rbf, 0.2, false},
        Case{"cross_noncausal", 2, 1, 19, 45, 4, 5, false, 0, LLAKernel::dot, 0.1, false},
        Case{"cross_causal_bottom_right", 1, 2, 20, 45, 4, 3, true, 0, LLAKernel::dot, 0.1, false},
        // Windows with n_q != n_k: aligned at the bottom right (a_i = i + n_k - n_q), as
        // FlashAttention's window_size; n_q > n_k needs a window wide enough for query 0.
        Case{"cross_window_causal", 1, 1, 20, 45, 3, 2, true, 6, LLAKernel::dot, 0.2, false},
        Case{"cross_window_noncausal", 1, 1, 20, 45, 3, 2, false, 6, LLAKernel::rbf, 0.2, false},
        Case{"cross_window_more_queries", 1, 1, 45, 20, 3, 2, false, 30, LLAKernel::dot, 0.2,
             false},
        Case{"per_query_ridge", 1, 2, 37, 37, 4, 3, true, 0, LLAKernel::rbf, 0.3, true},
        Case{"ridge_zero_full", 1, 1, 30, 60, 3, 2, false, 0, LLAKernel::rbf, 0.0, false},
        Case{"d16_one_block", 1, 1, 8, 64, 16, 4, false, 0, LLAKernel::dot, 0.5, false}),
    [](const ::testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

TEST(LLA, Float32BlockwiseWithin1e4OfFloat64Naive) {
  for (bool causal : {false, true}) {
    const auto Qd = randn(2, 2, 150, 16, 11, 0.25);
    const auto Kd = randn(2, 2, 150, 16, 12, 0.25);
    const auto Vd = randn(2, 2, 150, 8, 13);
    const auto Qf = Qd.cast<float>(), Kf = Kd.cast<float>(), Vf = Vd.cast<float>();
    // The oracle sees exactly the float32 inputs.
    const auto Qr = Qf.cast<double>(), Kr = Kf.cast<double>(), Vr = Vf.cast<double>();
    Options o = lla_opts(LLAAlgorithm::naive, 0.1, causal);
    const auto ref = run(Qr, Kr, Vr, o);
    o.lla_algorithm = LLAAlgorithm::blockwise;
    Diagnostics dg;
    const auto got = run(Qf, Kf, Vf, o, &dg);
    EXPECT_LT(rel_fro(got, ref), 1e-4) << "causal " << causal;
    EXPECT_TRUE(dg.cg_converged) << dg.cg_max_relative_residual;
  }
}

// ================================================================== identities

TEST(LLA, RidgeToInfinityIsNadarayaWatson) {
  const auto Q = randn(1, 2, 40, 4, 21), K = randn(1, 2, 40, 4, 22), V = randn(1, 2, 40, 3, 23);
  for (LLAKernel kern : {LLAKernel::dot, LLAKernel::rbf}) {
    Options nw;
    nw.method = kern == LLAKernel::dot ? Method::softmax : Method::nw_rbf;
    nw.causal = true;
    nw.bandwidth = 2.0;
    const auto ref = run(Q, K, V, nw);
    for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct, LLAAlgorithm::blockwise}) {
      Options o = lla_opts(alg, 1e9, true);
      o.lla_kernel = kern;
      o.bandwidth = 2.0;
      const auto got = run(Q, K, V, o);
      EXPECT_LT(max_abs_diff(got, ref), 1e-7 * max_abs(ref));
      // ... and a moderate ridge is genuinely different (the test can fail).
      o.ridge = 0.1;
      EXPECT_GT(max_abs_diff(run(Q, K, V, o), ref), 1e-3);
    }
  }
}

TEST(LLA, InvariantToACommonFactorOfTheWeights) {
  // Append a constant coordinate c to every query and key: q'k grows by c^2, so every weight of
  // a query is multiplied by exp(scale c^2) (here e^600: it would overflow without the running
  // max), while z = k - q gets a zero coordinate. With the omega-scaled ridge the fit cannot
  // tell the difference; with the literal "+ lambda I" of eq. 7 it could (see below).
  const i64 n = 30, d = 3;
  const auto Q = randn(1, 1, n, d, 31), K = randn(1, 1, n, d, 32), V = randn(1, 1, n, 2, 33);
  Tensor<double> Qa(1, 1, n, d + 1), Ka(1, 1, n, d + 1);
  const double c = std::sqrt(600.0);
  for (i64 i = 0; i < n; ++i) {
    for (i64 j = 0; j < d; ++j) {
      Qa(0, 0, i, j) = Q(0, 0, i, j);
      Ka(0, 0, i, j) = K(0, 0, i, j);
    }
    Qa(0, 0, i, d) = c;
    Ka(0, 0, i, d) = c;
  }
  for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct, LLAAlgorithm::blockwise}) {
    Options o = lla_opts(alg, 0.3, true);
    o.scale = 1.0;
    const auto ref = run(Q, K, V, o);
    const auto got = run(Qa, Ka, V, o);
    EXPECT_LT(max_abs_diff(got, ref), 1e-10 * max_abs(ref)) << to_string(alg);
  }
  // The statistics route: scale every statistic of every query by 1e6 (= every weight by
  // 1e6) and finalize again.
  Options o = lla_opts(LLAAlgorithm::direct, 0.3, true);
  LLAPartial part = lla_partial<double>(Q.cv(), K.cv(), V.cv(), 0, n, o);
  Tensor<double> o1(1, 1, n, 2), o2(1, 1, n, 2);
  lla_finalize<double>(Q.cv(), part, o1.v(), o);
  for (auto& s : part.moments.stats) s *= 1e6;
  lla_finalize<double>(Q.cv(), part, o2.v(), o);
  EXPECT_LT(max_abs_diff(o1, o2), 1e-10 * max_abs(o1));
  // With "+ lambda I" instead of "+ lambda omega I" the same rescaling changes the answer:
  // (Sigma_w + lambda I) vs (c Sigma_w + lambda I). Show it on query 10 with the oracle.
  i64 lo, hi;
  key_range(10, n, n, true, 0, lo, hi);
  arma::mat Z(hi - lo + 1, d);
  for (i64 j = lo; j <= hi; ++j)
    for (i64 k = 0; k < d; ++k) Z(j - lo, k) = K(0, 0, j, k) - Q(0, 0, 10, k);
  const arma::vec w = kernel_weights(Q, K, 0, 0, 10, lo, hi, false, 1.0);
  auto rho_literal = [&](double f) {
    const arma::mat S = Z.t() * arma::diagmat(f * w) * Z + 0.3 * arma::eye(d, d);
    return arma::vec(arma::solve(S, Z.t() * (f * w)));
  };
  EXPECT_GT(arma::norm(rho_literal(1.0) - rho_literal(1e6)), 1e-3);
}

TEST(LLA, EqualsLocalLinearEstimatorOnTheSameWeights) {
  // Weights from the rbf kernel; the estimator is the local linear regression of DESIGN §2
  // (normalised weights, ridge on the slopes), solved by QR: see local_linear_oracle.
  const auto Q = randn(1, 1, 25, 3, 41), K = randn(1, 1, 70, 3, 42), V = randn(1, 1, 70, 2, 43);
  for (double lam : {0.0, 0.01, 1.0}) {
    const auto ref = lla_oracle(Q, K, V, false, 0, true, 1.0, {lam});
    for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct, LLAAlgorithm::blockwise}) {
      Options o = lla_opts(alg, lam);
      o.lla_kernel = LLAKernel::rbf;
      o.bandwidth = 1.0;
      EXPECT_LT(max_abs_diff(run(Q, K, V, o), ref), 1e-10 * max_abs(ref)) << lam;
    }
  }
}

TEST(LLA, EqualsTheLocalLinearEstimatorOfTheKernelRegressionCore) {
  // LLA with the rbf kernel exp(-||q - k||^2 / (2 h^2)) is local linear regression with the
  // Gaussian product kernel of bandwidth h in every column, fitted on (K, V) and evaluated at
  // Q: attnreg::LocalPolynomial (local_fit.hpp, the kernel-regression core, written
  // independently) with the same omega-scaled ridge. Outputs and attention weights agree.
  const i64 nq = 15, nk = 80, d = 3, dv = 2;
  const auto Q = randn(1, 1, nq, d, 45), K = randn(1, 1, nk, d, 46), V = randn(1, 1, nk, dv, 47);
  arma::mat Qm(nq, d), Km(nk, d), Vm(nk, dv);
  for (i64 i = 0; i < nq; ++i)
    for (i64 c = 0; c < d; ++c) Qm(i, c) = Q(0, 0, i, c);
  for (i64 j = 0; j < nk; ++j) {
    for (i64 c = 0; c < d; ++c) Km(j, c) = K(0, 0, j, c);
    for (i64 c = 0; c < dv; ++c) Vm(j, c) = V(0, 0, j, c);
  }
  const double h = 0.9;
  for (double lam : {0.0, 0.05, 2.0}) {
    attnreg::LocalFitOptions lo;
    lo.degree = 1;
    lo.kernel.kernel = attnreg::Kernel(attnreg::KernelType::gaussian);
    lo.ridge = lam;
    lo.kernel.algorithm = attnreg::PairAlgorithm::all_pairs;
    lo.kernel.truncation = 0.0;
    lo.compute_fitted = false;
    attnreg::LocalPolynomial lp(lo);
    lp.fit(Km, Vm, arma::vec(d, arma::fill::value(h)));
    const arma::mat ref = lp.predict(Qm);
    const arma::mat Wref = lp.attention_weights(Qm);
    const double scale = arma::abs(ref).max();
    for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct, LLAAlgorithm::blockwise}) {
      Options o = lla_opts(alg, lam);
      o.lla_kernel = LLAKernel::rbf;
      o.bandwidth = h;
      const auto got = run(Q, K, V, o);
      double err = 0;
      for (i64 i = 0; i < nq; ++i)
        for (i64 c = 0; c < dv; ++c) err = std::max(err, std::fabs(got(0, 0, i, c) - ref(i, c)));
      EXPECT_LT(err, 1e-10 * scale) << to_string(alg) << " ridge " << lam;
    }
    Options o = lla_opts(LLAAlgorithm::naive, lam);
    o.lla_kernel = LLAKernel::rbf;
    o.bandwidth = h;
    Tensor<double> W(1, 1, nq, nk);
    attention_weights<double>(Q.cv(), K.cv(), W.v(), o);
    double werr = 0;
    for (i64 i = 0; i < nq; ++i)
      for (i64 j = 0; j < nk; ++j) werr = std::max(werr, std::fabs(W(0, 0, i, j) - Wref(i, j)));
    EXPECT_LT(werr, 1e-10) << "weights, ridge " << lam;
  }
}

TEST(LLA, ReproducesLinearFunctionsExactly) {
  // Local linear regression with lambda = 0 reproduces v = A k + b exactly (NW does not).
  const auto Q = randn(1, 1, 20, 3, 51), K = randn(1, 1, 60, 3, 52);
  Tensor<double> V(1, 1, 60, 2);
  for (i64 j = 0; j < 60; ++j) {
    V(0, 0, j, 0) = 1.5 + 2 * K(0, 0, j, 0) - K(0, 0, j, 2);
    V(0, 0, j, 1) = -0.5 + K(0, 0, j, 1);
  }
  Tensor<double> truth(1, 1, 20, 2);
  for (i64 i = 0; i < 20; ++i) {
    truth(0, 0, i, 0) = 1.5 + 2 * Q(0, 0, i, 0) - Q(0, 0, i, 2);
    truth(0, 0, i, 1) = -0.5 + Q(0, 0, i, 1);
  }
  for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct, LLAAlgorithm::blockwise}) {
    Options o = lla_opts(alg, 0.0);
    EXPECT_LT(max_abs_diff(run(Q, K, V, o), truth), 1e-9) << to_string(alg);
  }
  Options nw;
  EXPECT_GT(max_abs_diff(run(Q, K, V, nw), truth), 1e-2);
}

// ================================================================== masks

template <class Fn>
void perturb_rows(Tensor<double>& t, i64 from, i64 to, Fn keep) {
  std::mt19937 g(99);
  std::normal_distribution<double> n(0, 3);
  for (i64 b = 0; b < t.B; ++b)
    for (i64 h = 0; h < t.H; ++h)
      for (i64 s = from; s < to; ++s)
        if (!keep(s))
          for (i64 d = 0; d < t.D; ++d) t(b, h, s, d) += n(g);
}

std::vector<Options> every_method(bool causal, i64 window) {
  std::vector<Options> v;
  for (Method m : {Method::softmax, Method::nw_rbf, Method::linear, Method::mesa}) {
    Options o;
    o.method = m;
    if (m == Method::mesa) o.ridge = 0.1;
    v.push_back(o);
  }
  for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct, LLAAlgorithm::blockwise})
    v.push_back(lla_opts(alg, 0.1));
  for (auto& o : v) {
    o.causal = causal;
    o.window = window;
    o.block_q = 8;
    o.block_k = 8;
  }
  return v;
}

std::string name_of(const Options& o) {
  return o.method == Method::lla ? "lla/" + to_string(o.lla_algorithm) : to_string(o.method);
}

TEST(Masks, CausalOutputsIgnoreFutureKeysAndValues) {
  const i64 n = 40, cut = 17;
  const auto Q = randn(1, 2, n, 3, 61), K = randn(1, 2, n, 3, 62), V = randn(1, 2, n, 2, 63);
  auto K2 = K, V2 = V;
  perturb_rows(K2, cut + 1, n, [](i64) { return false; });
  perturb_rows(V2, cut + 1, n, [](i64) { return false; });
  for (const Options& o : every_method(true, 0)) {
    const auto a = run(Q, K, V, o), b = run(Q, K2, V2, o);
    double before = 0, after = 0;
    for (i64 h = 0; h < 2; ++h)
      for (i64 i = 0; i < n; ++i)
        for (i64 c = 0; c < 2; ++c) {
          const double e = std::fabs(a(0, h, i, c) - b(0, h, i, c));
          (i <= cut ? before : after) = std::max(i <= cut ? before : after, e);
        }
    EXPECT_LE(before, 1e-12) << name_of(o);
    EXPECT_GT(after, 1e-3) << name_of(o);
    // Without the mask the early outputs do change.
    Options nc = o;
    nc.causal = false;
    EXPECT_GT(max_abs_diff(run(Q, K, V, nc), run(Q, K2, V2, nc)), 1e-3) << name_of(o);
  }
}

TEST(Masks, SlidingWindowIgnoresKeysThatLeftTheWindow) {
  const i64 n = 40, w = 6, at = 30;  // query `at` sees keys at - w + 1 .. at
  const auto Q = randn(1, 1, n, 3, 71), K = randn(1, 1, n, 3, 72), V = randn(1, 1, n, 2, 73);
  auto K2 = K, V2 = V;
  perturb_rows(K2, 0, at - w + 1, [](i64) { return false; });
  perturb_rows(V2, 0, at - w + 1, [](i64) { return false; });
  for (const Options& o : every_method(true, w)) {
    const auto a = run(Q, K, V, o), b = run(Q, K2, V2, o);
    double in = 0, out = 0;
    for (i64 i = 0; i < n; ++i)
      for (i64 c = 0; c < 2; ++c) {
        const double e = std::fabs(a(0, 0, i, c) - b(0, 0, i, c));
        if (i >= at) in = std::max(in, e);
        if (i < at - w + 1) out = std::max(out, e);
      }
    // Queries >= at see none of the perturbed keys: linear and mesa subtract the keys that
    // leave the window, so they agree to rounding only.
    EXPECT_LE(in, 1e-10) << name_of(o);
    EXPECT_GT(out, 1e-3) << name_of(o);
  }
  // Non-causal window: query i sees |j - i| < w.
  Options o;
  o.window = w;
  auto K3 = K;
  perturb_rows(K3, 0, n, [&](i64 s) { return std::llabs(s - 20) < w; });
  const auto a = run(Q, K, V, o), b = run(Q, K3, V, o);
  for (i64 c = 0; c < 2; ++c) EXPECT_EQ(a(0, 0, 20, c), b(0, 0, 20, c));
  EXPECT_GT(std::fabs(a(0, 0, 10, 0) - b(0, 0, 10, 0)), 1e-6);
}

// ================================================================== softmax / NW / linear / mesa

TEST(Softmax, EqualsGaussianNadarayaWatsonOnUnitNormInputs) {
  auto Q = randn(2, 2, 30, 5, 81), K = randn(2, 2, 45, 5, 82);
  const auto V = randn(2, 2, 45, 3, 83);
  unit_rows(Q);
  unit_rows(K);
  for (double h : {0.3, 0.7, 2.0}) {
    Options s, g;
    s.method = Method::softmax;
    s.scale = 1.0 / (h * h);  // tau = h^2 (Pai 2025, "Regression is All You Need")
    g.method = Method::nw_rbf;
    g.bandwidth = h;
    const auto a = run(Q, K, V, s), b = run(Q, K, V, g);
    EXPECT_LT(max_abs_diff(a, b), 1e-12);
    // against the NW formula itself
    Tensor<double> ref(2, 2, 30, 3);
    for (i64 bb = 0; bb < 2; ++bb)
      for (i64 hh = 0; hh < 2; ++hh)
        for (i64 i = 0; i < 30; ++i) {
          const arma::vec w = kernel_weights(Q, K, bb, hh, i, 0, 44, true, 1.0 / (h * h));
          for (i64 c = 0; c < 3; ++c) {
            double num = 0;
            for (i64 j = 0; j < 45; ++j) num += w(j) * V(bb, hh, j, c);
            ref(bb, hh, i, c) = num / arma::accu(w);
          }
        }
    EXPECT_LT(max_abs_diff(a, ref), 1e-12);
  }
  // The defaults are the same estimator too (scale 1/sqrt(d), bandwidth d^(1/4)).
  Options s, g;
  g.method = Method::nw_rbf;
  EXPECT_LT(max_abs_diff(run(Q, K, V, s), run(Q, K, V, g)), 1e-12);
  // ... but not on inputs of unequal norm.
  const auto Q2 = randn(2, 2, 30, 5, 84), K2 = randn(2, 2, 45, 5, 85);
  EXPECT_GT(max_abs_diff(run(Q2, K2, V, s), run(Q2, K2, V, g)), 1e-3);
}

TEST(Softmax, HugeLogitsAreStable) {
  auto Q = randn(1, 1, 20, 4, 91, 30.0), K = randn(1, 1, 70, 4, 92, 30.0);
  const auto V = randn(1, 1, 70, 3, 93);
  Options o;
  o.scale = 1.0;
  o.block_k = 16;
  const auto got = run(Q, K, V, o);
  for (double x : got.x) EXPECT_TRUE(std::isfinite(x));
  Options w = o;
  Tensor<double> W(1, 1, 20, 70);
  attention_weights<double>(Q.cv(), K.cv(), W.v(), w);
  for (i64 i = 0; i < 20; ++i)
    for (i64 c = 0; c < 3; ++c) {
      double s = 0;
      for (i64 j = 0; j < 70; ++j) s += W(0, 0, i, j) * V(0, 0, j, c);
      EXPECT_NEAR(got(0, 0, i, c), s, 1e-12);
    }
}

TEST(Mesa, EqualsARidgeRegressionSolvedAtEachPosition) {
  const i64 n = 30, d = 4, dv = 3;
  const auto Q = randn(1, 2, n, d, 101), K = randn(1, 2, n, d, 102), V = randn(1, 2, n, dv, 103);
  for (double lam : {0.5, 3.0}) {
    for (bool causal : {true, false}) {
      Options o;
      o.method = Method::mesa;
      o.ridge = lam;
      o.causal = causal;
      const auto got = run(Q, K, V, o);
      for (i64 h = 0; h < 2; ++h)
        for (i64 i = 0; i < n; ++i) {
          const i64 hi = causal ? i : n - 1;
          arma::mat Kv(hi + 1, d), Vv(hi + 1, dv);
          for (i64 j = 0; j <= hi; ++j) {
            for (i64 c = 0; c < d; ++c) Kv(j, c) = K(0, h, j, c);
            for (i64 c = 0; c < dv; ++c) Vv(j, c) = V(0, h, j, c);
          }
          // W = argmin sum ||v_j - W k_j||^2 + lam ||W||^2, by QR on the augmented system.
          arma::mat X = arma::join_cols(Kv, std::sqrt(lam) * arma::eye(d, d));
          arma::mat Y = arma::join_cols(Vv, arma::zeros(d, dv));
          const arma::mat Wt = arma::solve(X, Y);  // d x dv, W = Wt'
          arma::rowvec q(d);
          for (i64 c = 0; c < d; ++c) q(c) = Q(0, h, i, c);
          const arma::rowvec want = q * Wt;
          for (i64 c = 0; c < dv; ++c) EXPECT_NEAR(got(0, h, i, c), want(c), 1e-10);
        }
    }
  }
}

TEST(Linear, MatchesItsFormulaForEachFeatureMap) {
  const auto Q = randn(1, 1, 25, 3, 111), K = randn(1, 1, 25, 3, 112), V = randn(1, 1, 25, 2, 113);
  for (FeatureMap fm : {FeatureMap::elu_plus_one, FeatureMap::relu, FeatureMap::identity}) {
    for (bool causal : {true, false}) {
      Options o;
      o.method = Method::linear;
      o.feature_map = fm;
      o.causal = causal;
      o.normalize = fm == FeatureMap::elu_plus_one;  // identity/relu may have den <= 0
      const auto got = run(Q, K, V, o);
      auto phi = [&](double x) {
        return fm == FeatureMap::elu_plus_one ? (x > 0 ? x + 1 : std::exp(x))
               : fm == FeatureMap::relu      ? std::max(x, 0.0)
                                             : x;
      };
      for (i64 i = 0; i < 25; ++i) {
        double den = 0, num[2] = {0, 0};
        for (i64 j = 0; j <= (causal ? i : 24); ++j) {
          double s = 0;
          for (i64 c = 0; c < 3; ++c) s += phi(Q(0, 0, i, c)) * phi(K(0, 0, j, c));
          den += s;
          for (i64 c = 0; c < 2; ++c) num[c] += s * V(0, 0, j, c);
        }
        for (i64 c = 0; c < 2; ++c)
          EXPECT_NEAR(got(0, 0, i, c), o.normalize ? num[c] / den : num[c], 1e-11);
      }
    }
  }
}

TEST(Linear, EpanechnikovFeatureMapIsEpanechnikovNWOnUnitNormInputs) {
  auto Q = randn(1, 1, 20, 4, 121), K = randn(1, 1, 50, 4, 122);
  const auto V = randn(1, 1, 50, 2, 123);
  unit_rows(Q);
  unit_rows(K);
  const double tau = 4.5;  // Pai 2025, "Regression is All You Need": valid (no clipping) for tau >= 4
  Options o;
  o.method = Method::linear;
  o.feature_map = FeatureMap::epanechnikov;
  o.feature_tau = tau;
  const auto got = run(Q, K, V, o);
  for (i64 i = 0; i < 20; ++i) {
    double den = 0, num[2] = {0, 0};
    for (i64 j = 0; j < 50; ++j) {
      double dist2 = 0;
      for (i64 c = 0; c < 4; ++c) dist2 += std::pow(Q(0, 0, i, c) - K(0, 0, j, c), 2);
      const double w = std::max(0.0, 1.0 - dist2 / tau);
      den += w;
      for (i64 c = 0; c < 2; ++c) num[c] += w * V(0, 0, j, c);
    }
    for (i64 c = 0; c < 2; ++c) EXPECT_NEAR(got(0, 0, i, c), num[c] / den, 1e-12);
  }
}

TEST(Weights, ReproduceEveryMethodAndSumToOneWhereTheyShould) {
  const auto Q = randn(1, 2, 18, 3, 131), K = randn(1, 2, 18, 3, 132), V = randn(1, 2, 18, 2, 133);
  for (const Options& o : every_method(true, 0)) {
    Tensor<double> W(1, 2, 18, 18);
    attention_weights<double>(Q.cv(), K.cv(), W.v(), o);
    const auto out = run(Q, K, V, o);
    for (i64 h = 0; h < 2; ++h)
      for (i64 i = 0; i < 18; ++i) {
        double rs = 0;
        for (i64 j = 0; j < 18; ++j) {
          rs += W(0, h, i, j);
          if (j > i) {
            EXPECT_EQ(W(0, h, i, j), 0.0);  // causal
          }
        }
        if (o.method == Method::softmax || o.method == Method::nw_rbf ||
            o.method == Method::lla || o.method == Method::linear) {
          EXPECT_NEAR(rs, 1.0, 1e-12) << name_of(o);
        }
        for (i64 c = 0; c < 2; ++c) {
          double s = 0;
          for (i64 j = 0; j < 18; ++j) s += W(0, h, i, j) * V(0, h, j, c);
          EXPECT_NEAR(out(0, h, i, c), s, 1e-10) << name_of(o);
        }
      }
  }
}

// ================================================================== layout, threads, merge

TEST(Layout, StridedAndColumnMajorViewsGiveTheSameResult) {
  const i64 n = 23, d = 4, dv = 3;
  const auto Q = randn(1, 1, n, d, 141), K = randn(1, 1, n, d, 142), V = randn(1, 1, n, dv, 143);
  // Column-major copies, as R and Armadillo store a (seq, dim) matrix.
  std::vector<double> qc(n * d), kc(n * d), vc(n * dv), oc(n * dv);
  for (i64 s = 0; s < n; ++s) {
    for (i64 c = 0; c < d; ++c) {
      qc[c * n + s] = Q(0, 0, s, c);
      kc[c * n + s] = K(0, 0, s, c);
    }
    for (i64 c = 0; c < dv; ++c) vc[c * n + s] = V(0, 0, s, c);
  }
  for (const Options& o : every_method(true, 0)) {
    const auto ref = run(Q, K, V, o);
    forward<double>(col_major_matrix_view<const double>(qc.data(), n, d),
                    col_major_matrix_view<const double>(kc.data(), n, d),
                    col_major_matrix_view<const double>(vc.data(), n, dv),
                    col_major_matrix_view<double>(oc.data(), n, dv), o);
    for (i64 s = 0; s < n; ++s)
      for (i64 c = 0; c < dv; ++c) EXPECT_NEAR(oc[c * n + s], ref(0, 0, s, c), 1e-12) << name_of(o);
  }
  // A zero batch stride broadcasts one K, V to every batch.
  auto Q2 = randn(3, 1, n, d, 144);
  Tensor<double> out(3, 1, n, dv);
  View<const double> kb = K.cv(), vb = V.cv();
  kb.shape[0] = vb.shape[0] = 3;
  kb.strides[0] = vb.strides[0] = 0;
  Options o;
  forward<double>(Q2.cv(), kb, vb, out.v(), o);
  Tensor<double> q1(1, 1, n, d);
  std::copy(Q2.x.begin() + 2 * n * d, Q2.x.begin() + 3 * n * d, q1.x.begin());
  const auto one = run(q1, K, V, o);
  for (i64 s = 0; s < n; ++s)
    for (i64 c = 0; c < dv; ++c) EXPECT_EQ(out(2, 0, s, c), one(0, 0, s, c));
}

TEST(Threads, ResultsAreBitwiseIdenticalForAnyThreadCount) {
  const auto Q = randn(2, 3, 70, 8, 151), K = randn(2, 3, 70, 8, 152), V = randn(2, 3, 70, 4, 153);
  for (Options o : every_method(true, 0)) {
    o.n_threads = 1;
    const auto ref = run(Q, K, V, o);
    for (int t : {2, 3, 5}) {
      o.n_threads = t;
      EXPECT_EQ(max_abs_diff(run(Q, K, V, o), ref), 0.0) << name_of(o) << " threads " << t;
    }
  }
}

TEST(Direct, PartialsMergeAssociativelyOverKeySlices) {
  const i64 n = 50, d = 3, dv = 2;
  const auto Q = randn(1, 2, n, d, 161), K = randn(1, 2, n, d, 162), V = randn(1, 2, n, dv, 163);
  Options o = lla_opts(LLAAlgorithm::direct, 0.2, true);
  const auto ref = run(Q, K, V, o);
  auto slice = [&](const Tensor<double>& t, i64 a, i64 b) {
    Tensor<double> s(t.B, t.H, b - a, t.D);
    for (i64 h = 0; h < t.H; ++h)
      for (i64 j = a; j < b; ++j)
        for (i64 c = 0; c < t.D; ++c) s(0, h, j - a, c) = t(0, h, j, c);
    return s;
  };
  const i64 cuts[4] = {0, 13, 31, n};
  std::vector<LLAPartial> parts;
  for (int s = 0; s < 3; ++s) {
    const auto Ks = slice(K, cuts[s], cuts[s + 1]), Vs = slice(V, cuts[s], cuts[s + 1]);
    parts.push_back(lla_partial<double>(Q.cv(), Ks.cv(), Vs.cv(), cuts[s], n, o));
  }
  LLAPartial left = parts[0];  // (A + B) + C
  merge(left, parts[1]);
  merge(left, parts[2]);
  LLAPartial right = parts[1];  // C + (B + A)... in another order
  LLAPartial ca = parts[2];
  merge(ca, parts[0]);
  merge(right, ca);
  for (const LLAPartial* p : {&left, &right}) {
    Tensor<double> out(1, 2, n, dv);
    lla_finalize<double>(Q.cv(), *p, out.v(), o);
    EXPECT_LT(max_abs_diff(out, ref), 1e-12 * max_abs(ref));
  }
  // The middle slice alone holds no key that the causal queries 1..13 may use: finalising it
  // is an error, not a silent zero.
  Tensor<double> part0(1, 2, n, dv);
  EXPECT_THROW(lla_finalize<double>(Q.cv(), parts[1], part0.v(), o), attnreg::InvalidArgument);
  LLAPartial bad = parts[0];
  bad.dim_v = 7;
  EXPECT_THROW(merge(bad, parts[1]), attnreg::InvalidArgument);
}

template <class Fn>
void expect_invalid(Fn fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected InvalidArgument mentioning '" << needle << "'";
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Direct, FinalizeRefusesPartialsThatMissKeysAndMergeRefusesOverlaps) {
  // Non-causal: every query sees every key, so statistics over keys [0, 8) of 16 would give a
  // finite but wrong LLA (over half the keys). Both the gap and a double-counted key are errors.
  const i64 n = 16, d = 2, dv = 1;
  const auto Q = randn(1, 1, 6, d, 191), K = randn(1, 1, n, d, 192), V = randn(1, 1, n, dv, 193);
  Options o = lla_opts(LLAAlgorithm::direct, 0.1);
  auto slice = [&](const Tensor<double>& t, i64 a, i64 b) {
    Tensor<double> s(1, 1, b - a, t.D);
    for (i64 j = a; j < b; ++j)
      for (i64 c = 0; c < t.D; ++c) s(0, 0, j - a, c) = t(0, 0, j, c);
    return s;
  };
  auto part = [&](i64 a, i64 b) {
    const auto Ks = slice(K, a, b), Vs = slice(V, a, b);
    return lla_partial<double>(Q.cv(), Ks.cv(), Vs.cv(), a, n, o);
  };
  Tensor<double> out(1, 1, 6, dv);
  expect_invalid([&] { lla_finalize<double>(Q.cv(), part(0, 8), out.v(), o); },
                 "partial: covers keys [0, 8) of n_keys_total = 16");
  LLAPartial gap = part(0, 4);
  merge(gap, part(12, 16));
  expect_invalid([&] { lla_finalize<double>(Q.cv(), gap, out.v(), o); },
                 "covers keys [0, 4), [12, 16) of n_keys_total = 16");
  LLAPartial over = part(0, 9);
  expect_invalid([&] { merge(over, part(8, 16)); }, "other: covers keys [8, 16)");
  LLAPartial twice = part(0, 16);
  expect_invalid([&] { merge(twice, part(0, 16)); }, "exactly once");
  // Complete coverage (in any order) is accepted and equals the one-shot direct LLA.
  LLAPartial all = part(8, 16);
  merge(all, part(0, 3));
  merge(all, part(3, 8));
  ASSERT_EQ(all.key_ranges, (std::vector<i64>{0, 16}));
  lla_finalize<double>(Q.cv(), all, out.v(), o);
  const auto ref = run(Q, K, V, o);
  EXPECT_LT(max_abs_diff(out, ref), 1e-12 * max_abs(ref));
}

TEST(Direct, FinalizeAndMergeRefuseAMaskOtherThanThePartials) {
  // The mask is baked into the statistics: for every pair of masks (partial, finalize) the
  // finalisation either equals the one-shot direct LLA under that mask (same mask) or is an
  // InvalidArgument naming the argument that differs; merging partials of different masks is
  // refused too. n_q < n_k so that the alignment matters.
  const i64 nq = 9, nk = 14, d = 2, dv = 2;
  const auto Q = randn(1, 1, nq, d, 201), K = randn(1, 1, nk, d, 202), V = randn(1, 1, nk, dv, 203);
  const std::pair<bool, i64> masks[] = {{false, 0}, {true, 0}, {false, 3}, {true, 3}, {true, 5}};
  for (const auto& [pc, pw] : masks) {
    Options po = lla_opts(LLAAlgorithm::direct, 0.3, pc);
    po.window = pw;
    const LLAPartial part = lla_partial<double>(Q.cv(), K.cv(), V.cv(), 0, nk, po);
    EXPECT_EQ(part.causal, pc);
    EXPECT_EQ(part.window, pw);
    for (const auto& [fc, fw] : masks) {
      Options fo = lla_opts(LLAAlgorithm::direct, 0.3, fc);
      fo.window = fw;
      Tensor<double> out(1, 1, nq, dv);
      if (pc == fc && pw == fw) {
        lla_finalize<double>(Q.cv(), part, out.v(), fo);
        const auto ref = run(Q, K, V, fo);
        EXPECT_LT(max_abs_diff(out, ref), 1e-12 * max_abs(ref)) << pc << " " << pw;
      } else {
        expect_invalid([&] { lla_finalize<double>(Q.cv(), part, out.v(), fo); },
                       pc != fc ? "causal: differs from the statistics'"
                                : "window: differs from the statistics'");
        Options mo = fo;
        const LLAPartial other = lla_partial<double>(Q.cv(), K.cv(), V.cv(), 0, nk, mo);
        LLAPartial into = lla_partial<double>(Q.cv(), K.cv(), V.cv(), 0, nk, po);
        // (overlapping slices too, but the mask is checked first and named)
        expect_invalid([&] { merge(into, other); }, "other: was computed under another mask");
      }
    }
  }
}

// ================================================================== diagnostics and bad input

TEST(Diagnostics, CGIterationsAndNonConvergenceAreReported) {
  const auto Q = randn(1, 2, 40, 8, 171), K = randn(1, 2, 40, 8, 172), V = randn(1, 2, 40, 2, 173);
  Options o = lla_opts(LLAAlgorithm::blockwise, 0.01, true);
  Diagnostics dg;
  run(Q, K, V, o, &dg);
  EXPECT_TRUE(dg.cg_converged);
  EXPECT_TRUE(dg.warnings.empty());
  EXPECT_EQ(dg.cg_iterations.size(), 2u * 5u);  // 2 heads x ceil(40 / 8) blocks
  EXPECT_LE(dg.cg_max_iterations, dg.cg_iteration_limit);
  EXPECT_EQ(dg.cg_iteration_limit, 2 * 8 + 10);
  EXPECT_LE(dg.cg_max_relative_residual, 1e-12);
  EXPECT_GT(dg.min_relative_denominator, 0.0);
  o.cg_max_iter = 2;
  run(Q, K, V, o, &dg);
  EXPECT_FALSE(dg.cg_converged);
  EXPECT_GT(dg.cg_rows_not_converged, 0);
  EXPECT_EQ(dg.cg_max_iterations, 2);
  ASSERT_FALSE(dg.warnings.empty());
  EXPECT_NE(dg.warnings[0].find("cg_max_iter"), std::string::npos);
}

TEST(BadInput, ClearErrorsNamingTheArgument) {
  const auto Q = randn(1, 1, 10, 3, 181), K = randn(1, 1, 10, 3, 182), V = randn(1, 1, 10, 2, 183);
  Options o;
  auto K_nan = K;
  K_nan(0, 0, 4, 1) = std::nan("");
  expect_invalid([&] { run(Q, K_nan, V, o); }, "K: contains NaN at (batch 1, head 1, position 5, column 2)");
  const auto K4 = randn(1, 1, 10, 4, 184);
  expect_invalid([&] { run(Q, K4, V, o); }, "K: shape");
  const auto V9 = randn(1, 1, 9, 2, 185);
  expect_invalid([&] { run(Q, K, V9, o); }, "V: has seq = 9");
  Options bw;
  bw.method = Method::nw_rbf;
  bw.bandwidth = -1;
  expect_invalid([&] { run(Q, K, V, bw); }, "bandwidth: must be > 0");
  Options sc;
  sc.method = Method::nw_rbf;
  sc.scale = 2;
  expect_invalid([&] { run(Q, K, V, sc); }, "scale: is not used by nw_rbf");
  Options both;
  both.scale = 1;
  both.bandwidth = 1;
  expect_invalid([&] { run(Q, K, V, both); }, "not both");
  Options r0 = lla_opts(LLAAlgorithm::blockwise, 0.0, true);
  expect_invalid([&] { run(Q, K, V, r0); }, "ridge: must be > 0 for lla: query 1 sees only 1 key");
  Options m0;
  m0.method = Method::mesa;
  m0.causal = true;
  expect_invalid([&] { run(Q, K, V, m0); }, "ridge: must be > 0 for mesa");
  Options rs;
  rs.ridge = 1;
  expect_invalid([&] { run(Q, K, V, rs); }, "ridge: is not used by softmax");
  Options rv = lla_opts(LLAAlgorithm::direct, 0.1);
  rv.ridge_per_query = {1.0, 2.0};
  expect_invalid([&] { run(Q, K, V, rv); }, "ridge: has length 2");
  rv.ridge_per_query.assign(10, 0.1);
  rv.ridge_per_query[3] = -1;
  expect_invalid([&] { run(Q, K, V, rv); }, "ridge: element 4");
  Options cz;
  cz.causal = true;
  const auto Q12 = randn(1, 1, 12, 3, 186);
  expect_invalid([&] { run(Q12, K, V, cz); }, "causal: needs n_q <= n_k");
  Options wn;
  wn.window = -2;
  expect_invalid([&] { run(Q, K, V, wn); }, "window: must be >= 0");
  Options ep;
  ep.method = Method::linear;
  ep.feature_map = FeatureMap::epanechnikov;
  ep.feature_tau = 1.0;
  expect_invalid([&] { run(Q, K, V, ep); }, "feature_tau");
  Options th;
  th.n_threads = -1;
  expect_invalid([&] { run(Q, K, V, th); }, "n_threads");
  Options bq;
  bq.block_q = 0;
  expect_invalid([&] { run(Q, K, V, bq); }, "block_q");
  Tensor<double> small_out(1, 1, 10, 3);
  expect_invalid([&] { forward<double>(Q.cv(), K.cv(), V.cv(), small_out.v(), o); }, "out: shape");
  expect_invalid([] { parse_method("flash"); }, "method: unknown 'flash'");
  expect_invalid([] { parse_lla_algorithm("fast", "method"); }, "method: unknown 'fast'");
  // A non-positive normaliser of linear attention is a numerical error, not garbage.
  Options li;
  li.method = Method::linear;
  li.feature_map = FeatureMap::identity;
  auto Qn = Q;
  for (auto& x : Qn.x) x = -std::fabs(x);
  auto Kp = K;
  for (auto& x : Kp.x) x = std::fabs(x);
  EXPECT_THROW(run(Qn, Kp, V, li), attnreg::NumericalError);
  // Duplicated keys with ridge 0: Sigma is singular although the query sees >= d keys.
  Tensor<double> Kd(1, 1, 10, 3);
  for (i64 j = 0; j < 10; ++j)
    for (i64 c = 0; c < 3; ++c) Kd(0, 0, j, c) = (c == 0) ? double(j) : 0.0;
  for (auto alg : {LLAAlgorithm::naive, LLAAlgorithm::direct})
    EXPECT_THROW(run(Q, Kd, V, lla_opts(alg, 0.0)), attnreg::NumericalError) << to_string(alg);
}

TEST(BadInput, OverflowingLogitsAreANumericalErrorNamingTheQuery) {
  // Inputs are finite but scale * q.k (or ||q - k||^2 / h^2) is not: the running max cannot
  // help, so the result would be NaN rows. Each is a NumericalError naming (batch, head, query).
  const auto Q = randn(1, 2, 5, 3, 201), K = randn(1, 2, 7, 3, 202), V = randn(1, 2, 7, 2, 203);
  auto scaled = [](Tensor<double> t, double c) {
    for (auto& x : t.x) x *= c;
    return t;
  };
  auto expect_numerical = [](auto fn, const std::string& needle) {
    try {
      fn();
      ADD_FAILURE() << "expected NumericalError mentioning '" << needle << "'";
    } catch (const attnreg::NumericalError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const auto Qb = scaled(Q, 1e155), Kb = scaled(K, 1e155);
  Options sm;
  Options nw;
  nw.method = Method::nw_rbf;
  expect_numerical([&] { run(Qb, Kb, V, sm); }, "softmax: a logit overflows float64 at (batch 1, head 1, query");
  expect_numerical([&] { run(Qb, Kb, V, nw); }, "nw_rbf: a logit overflows float64");
  Tensor<double> W(1, 2, 5, 7);
  expect_numerical([&] { attention_weights<double>(Qb.cv(), Kb.cv(), W.v(), sm); },
                   "softmax: a logit overflows float64");
  // float32: norms ~1e20 or scale = 1e38 overflow float although float64 would not.
  const auto Qf = scaled(Q, 1e20).cast<float>(), Kf = scaled(K, 1e20).cast<float>();
  const auto Vf = V.cast<float>();
  expect_numerical([&] { run(Qf, Kf, Vf, sm); }, "overflows float32");
  expect_numerical([&] { run(Qf, Kf, Vf, nw); }, "overflows float32");
  Options big;
  big.scale = 1e38;
  expect_numerical([&] { run(scaled(Q, 10).cast<float>(), scaled(K, 10).cast<float>(), Vf, big); },
                   "overflows float32");
  // The same data at a representable scale stays finite and equal to float64 (no false alarm).
  const auto ok = run(scaled(Q, 1e18).cast<float>(), scaled(K, 1e18).cast<float>(), Vf, sm);
  for (float x : ok.x) EXPECT_TRUE(std::isfinite(x));
  // A bandwidth whose 1 / h^2 overflows float32 is an error in float32 (the check runs in the
  // arithmetic's precision) and fine in float64.
  Options tiny;
  tiny.method = Method::nw_rbf;
  tiny.bandwidth = 1e-20;
  expect_invalid([&] { run(Q.cast<float>(), K.cast<float>(), Vf, tiny); },
                 "bandwidth: is too small: 1 / bandwidth^2 overflows float32");
  Options hugescale;
  hugescale.scale = 1e39;
  expect_invalid([&] { run(Q.cast<float>(), K.cast<float>(), Vf, hugescale); },
                 "scale: overflows float32");
  tiny.bandwidth = 1e-155;
  expect_invalid([&] { run(Q, K, V, tiny); }, "overflows float64");
}

// ================================================================== the shared tile math

TEST(Tile, PortableGemmsMatchBLASAndTheDefinition) {
  std::mt19937 g(5);
  std::normal_distribution<double> n;
  const int m = 7, k = 5, nn = 9;
  std::vector<double> A(m * k), B(nn * k), Bn(k * nn), C1(m * nn, std::nan("")), C2(m * nn), C3(m * nn, 1.0), C4(m * nn, 1.0);
  for (auto* v : {&A, &B, &Bn})
    for (auto& x : *v) x = n(g);
  attnreg::tile::gemm_nt(m, nn, k, 2.0, A.data(), k, B.data(), k, 0.0, C1.data(), nn);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < nn; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += A[i * k + p] * B[j * k + p];
      EXPECT_NEAR(C1[i * nn + j], 2 * s, 1e-13);
    }
  attnreg::tile::gemm_nn(m, nn, k, 1.0, A.data(), k, Bn.data(), nn, 0.5, C3.data(), nn);
  const arma::mat Am = arma::mat(A.data(), k, m).t(), Bm = arma::mat(Bn.data(), nn, k).t();
  const arma::mat ref = Am * Bm + 0.5;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < nn; ++j) EXPECT_NEAR(C3[i * nn + j], ref(i, j), 1e-13);
}

TEST(Tile, OnlineMaxMergeIsAssociativeAndExact) {
  // Three tiles of logits for one row, folded in order vs. merged as partials in another order.
  std::vector<double> l = {3.0, -1.0, 700.0, 2.5, -HUGE_VAL, 699.0, 1.0, 0.0, 698.5};
  std::vector<double> vals = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto fold = [&](int from, int to, double& m, double& omega, double& acc) {
    std::vector<double> s(l.begin() + from, l.begin() + to);
    const auto u = attnreg::tile::online_update_row(s.data(), to - from, m);
    omega = u.alpha * omega + u.rowsum;
    acc *= u.alpha;
    for (int j = 0; j < to - from; ++j) acc += s[j] * vals[from + j];
  };
  double m = -HUGE_VAL, om = 0, acc = 0;
  for (int t = 0; t < 3; ++t) fold(3 * t, 3 * t + 3, m, om, acc);
  double parts[3][3];
  for (int t = 0; t < 3; ++t) {
    double mm = -HUGE_VAL, oo = 0, aa = 0;
    fold(3 * t, 3 * t + 3, mm, oo, aa);
    parts[t][0] = mm;
    parts[t][1] = oo;
    parts[t][2] = aa;
  }
  double mC = parts[2][0], xC[2] = {parts[2][1], parts[2][2]};
  double xA[2] = {parts[0][1], parts[0][2]}, mA = parts[0][0];
  attnreg::tile::merge_running(mC, xC, mA, xA, 2);  // C + A
  double mB = parts[1][0], xB[2] = {parts[1][1], parts[1][2]};
  attnreg::tile::merge_running(mB, xB, mC, xC, 2);  // B + (C + A)
  EXPECT_DOUBLE_EQ(mB, m);
  EXPECT_NEAR(xB[0], om, 1e-15 * om);
  EXPECT_NEAR(xB[1] / xB[0], acc / om, 1e-14);
  // The exact softmax average, computed without the max trick in long double.
  long double num = 0, den = 0;
  for (int j = 0; j < 9; ++j)
    if (std::isfinite(l[j])) {
      den += std::exp(static_cast<long double>(l[j]) - 700.0L);
      num += std::exp(static_cast<long double>(l[j]) - 700.0L) * vals[j];
    }
  EXPECT_NEAR(acc / om, static_cast<double>(num / den), 1e-13);
  // An all-masked tile leaves the row untouched.
  double s[2] = {-HUGE_VAL, -HUGE_VAL};
  double mm = -HUGE_VAL;
  const auto u = attnreg::tile::online_update_row(s, 2, mm);
  EXPECT_EQ(u.alpha, 1.0);
  EXPECT_EQ(u.rowsum, 0.0);
  EXPECT_EQ(s[0], 0.0);
}

TEST(Tile, ConjugateGradientAndCholeskySolveAnSPDSystem) {
  const int d = 6;
  arma::mat A = arma::randn(d, d);
  A = A * A.t() + 0.5 * arma::eye(d, d);
  const arma::vec b = arma::randn(d);
  const arma::vec x_ref = arma::solve(A, b);
  std::vector<double> x(d), r(d), p(d), sp(d);
  auto st = attnreg::tile::cg_init_row(b.memptr(), x.data(), r.data(), p.data(), d, 1e-14);
  int it = 0;
  while (st.status == attnreg::tile::kCGActive && it < 50) {
    const arma::vec pv(p.data(), d);
    const arma::vec ap = A * pv;
    std::copy(ap.begin(), ap.end(), sp.begin());
    attnreg::tile::cg_step_row(st, x.data(), r.data(), p.data(), sp.data(), d);
    ++it;
  }
  EXPECT_EQ(st.status, attnreg::tile::kCGConverged);
  EXPECT_LE(st.iters, d + 3);
  for (int i = 0; i < d; ++i) EXPECT_NEAR(x[i], x_ref(i), 1e-10);
  std::vector<double> L(A.memptr(), A.memptr() + d * d);  // symmetric: layout irrelevant
  std::vector<double> y(b.begin(), b.end());
  ASSERT_TRUE(attnreg::tile::cholesky(L.data(), d));
  attnreg::tile::cholesky_solve(L.data(), d, y.data());
  for (int i = 0; i < d; ++i) EXPECT_NEAR(y[i], x_ref(i), 1e-12);
  std::vector<double> N = {1, 2, 2, 1};  // indefinite
  EXPECT_FALSE(attnreg::tile::cholesky(N.data(), 2));
  // Eq. 13 (sigma_p_finish_row) equals the explicit centred Sigma times p.
  const int dd = 3, nk = 5;
  const arma::mat Kk = arma::randn(nk, dd);
  const arma::vec w = arma::exp(arma::randn(nk)), q = arma::randn(dd), pp = arma::randn(dd);
  const double lam = 0.7, omega = arma::accu(w);
  arma::mat Sig(dd, dd, arma::fill::zeros);
  for (int j = 0; j < nk; ++j) {
    const arma::vec z = Kk.row(j).t() - q;
    Sig += w(j) * z * z.t();
  }
  Sig.diag() += lam * omega;
  const arma::vec mut = Kk.t() * w;
  arma::vec acc(dd, arma::fill::zeros);
  for (int j = 0; j < nk; ++j) acc += w(j) * arma::dot(Kk.row(j), pp) * Kk.row(j).t();
  attnreg::tile::sigma_p_finish_row(acc.memptr(), pp.memptr(), q.memptr(), mut.memptr(), omega,
                                    lam, dd);
  const arma::vec want = Sig * pp;
  for (int i = 0; i < dd; ++i) EXPECT_NEAR(acc(i), want(i), 1e-12);
}

}  // namespace
