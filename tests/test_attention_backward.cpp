// Tests of the attention backward pass (attention.hpp, "backward"): the float64 vector-Jacobian
// products of softmax, nw_rbf and lla against central finite differences of the forward
// (float64, the naive LLA oracle), and softmax against the closed-form matrix gradient written
// out here in a few lines (Armadillo).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/attention/attention.hpp"
#include "attnreg/base/error.hpp"

namespace {

using namespace attnreg::attention;
using i64 = std::int64_t;

struct T4 {
  i64 B = 1, H = 1, S = 1, D = 1;
  std::vector<double> x;
  T4() = default;
  T4(i64 b, i64 h, i64 s, i64 d) : B(b), H(h), S(s), D(d), x(static_cast<std::size_t>(b * h * s * d), 0.0) {}
  View<const double> cv() const { return make_view<const double>(x.data(), B, H, S, D); }
  View<double> v() { return make_view<double>(x.data(), B, H, S, D); }
};

T4 randn(i64 B, i64 H, i64 S, i64 D, unsigned seed, double sd = 1.0) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, sd);
  T4 t(B, H, S, D);
  for (auto& v : t.x) v = n(g);
  return t;
}

double objective(const T4& Q, const T4& K, const T4& V, const T4& dO, Options o) {
  if (o.method == Method::lla) o.lla_algorithm = LLAAlgorithm::naive;
  T4 out(Q.B, Q.H, Q.S, V.D);
  forward<double>(Q.cv(), K.cv(), V.cv(), out.v(), o);
  double s = 0;
  for (std::size_t i = 0; i < out.x.size(); ++i) s += out.x[i] * dO.x[i];
  return s;
}

/// Central differences of <dO, forward> in every element of X (a copy of one of Q, K, V) and
/// comparison with the analytic gradient G; tolerance relative to the largest |G|.
void check_fd(const std::string& what, T4& X, const T4& G, const std::function<double()>& f) {
  double gmax = 0;
  for (double g : G.x) gmax = std::max(gmax, std::fabs(g));
  const double tol = 2e-7 * (1.0 + gmax);
  for (std::size_t i = 0; i < X.x.size(); ++i) {
    const double x0 = X.x[i];
    const double h = 1e-5 * (1.0 + std::fabs(x0));
    X.x[i] = x0 + h;
    const double fp = f();
    X.x[i] = x0 - h;
    const double fm = f();
    X.x[i] = x0;
    const double fd = (fp - fm) / (2 * h);
    ASSERT_NEAR(G.x[i], fd, tol) << what << " element " << i;
  }
}

struct Case {
  std::string name;
  Method method;
  i64 B, H, nq, nk, d, dv;
  bool causal;
  i64 window;
  double bandwidth;  // NaN: default
  double ridge;
  int ridge_kind;  // 0 scalar, 1 per position, 2 per (b, h, i)
  LLAKernel kernel;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string case_name(const testing::TestParamInfo<Case>& i) { return i.param.name; }

class VJP : public testing::TestWithParam<Case> {};

TEST_P(VJP, MatchesCentralFiniteDifferencesOfTheForward) {
  const Case& c = GetParam();
  const unsigned seed = static_cast<unsigned>(std::hash<std::string>{}(c.name) & 0xffff);
  T4 Q = randn(c.B, c.H, c.nq, c.d, seed + 1, 0.7), K = randn(c.B, c.H, c.nk, c.d, seed + 2, 0.7),
     V = randn(c.B, c.H, c.nk, c.dv, seed + 3), dO = randn(c.B, c.H, c.nq, c.dv, seed + 4);
  Options o;
  o.method = c.method;
  o.causal = c.causal;
  o.window = c.window;
  o.bandwidth = c.bandwidth;
  o.lla_kernel = c.kernel;
  o.n_threads = 2;
  std::vector<double>* rvec = &o.ridge_per_query;
  if (c.method == Method::lla) {
    o.ridge = c.ridge;
    std::mt19937 g(seed);
    std::uniform_real_distribution<double> u(0.5, 1.5);
    if (c.ridge_kind == 1) rvec->resize(c.nq);
    if (c.ridge_kind == 2) rvec->resize(c.B * c.H * c.nq);
    for (auto& r : *rvec) r = c.ridge * u(g);
  }
  T4 dQ(c.B, c.H, c.nq, c.d), dK(c.B, c.H, c.nk, c.d), dV(c.B, c.H, c.nk, c.dv);
  std::vector<double> dr;
  const Diagnostics diag =
      backward<double>(Q.cv(), K.cv(), V.cv(), dO.cv(), dQ.v(), dK.v(), dV.v(), o, &dr);
  EXPECT_NE(diag.method.find("backward"), std::string::npos);
  const auto f = [&] { return objective(Q, K, V, dO, o); };
  check_fd(c.name + " dQ", Q, dQ, f);
  check_fd(c.name + " dK", K, dK, f);
  check_fd(c.name + " dV", V, dV, f);
  if (c.method == Method::lla) {
    const std::size_t want = c.ridge_kind == 0 ? 1 : rvec->size();
    ASSERT_EQ(dr.size(), want);
    for (std::size_t r = 0; r < want; ++r) {
      double& x = c.ridge_kind == 0 ? o.ridge : (*rvec)[r];
      const double x0 = x, h = 1e-5 * (1.0 + x0);
      double fd;
      if (x0 > h) {  // central
        x = x0 + h;
        const double fp = f();
        x = x0 - h;
        const double fm = f();
        fd = (fp - fm) / (2 * h);
      } else {  // at ridge 0: one-sided, second order
        const double f0 = f();
        x = x0 + h;
        const double f1 = f();
        x = x0 + 2 * h;
        const double f2 = f();
        fd = (-3 * f0 + 4 * f1 - f2) / (2 * h);
      }
      x = x0;
      EXPECT_NEAR(dr[r], fd, 2e-7 * (1.0 + std::fabs(dr[r]))) << "d_ridge " << r;
    }
  } else {
    EXPECT_TRUE(dr.empty());
  }
  // Identical for one thread.
  o.n_threads = 1;
  T4 dQ1(c.B, c.H, c.nq, c.d), dK1(c.B, c.H, c.nk, c.d), dV1(c.B, c.H, c.nk, c.dv);
  backward<double>(Q.cv(), K.cv(), V.cv(), dO.cv(), dQ1.v(), dK1.v(), dV1.v(), o);
  EXPECT_EQ(dQ1.x, dQ.x);
  EXPECT_EQ(dK1.x, dK.x);
  EXPECT_EQ(dV1.x, dV.x);
}

const double kNaN = std::nan("");

std::vector<Case> cases() {
  std::vector<Case> v;
  const i64 dims[] = {1, 3, 8};
  const i64 lens[] = {1, 5, 33};
  for (i64 d : dims)
    for (i64 n : lens)
      for (bool causal : {false, true}) {
        const std::string tag = "d" + std::to_string(d) + "_n" + std::to_string(n) +
                                (causal ? "_causal" : "");
        v.push_back({"softmax_" + tag, Method::softmax, 1, 1, n, n, d, 2, causal, 0, kNaN, 0, 0,
                     LLAKernel::dot});
        v.push_back({"lla_" + tag, Method::lla, 1, 1, n, n, d, 2, causal, 0, kNaN, 0.3, 0,
                     LLAKernel::dot});
      }
  // Windows, batches and heads, cross-attention, per-query ridge, both LLA kernels, tiny and
  // large bandwidths, ridge 0 where every query sees >= d keys.
  v.push_back({"softmax_window_bh", Method::softmax, 2, 2, 9, 9, 3, 3, true, 3, kNaN, 0, 0, LLAKernel::dot});
  v.push_back({"softmax_cross_window", Method::softmax, 1, 2, 5, 12, 3, 2, false, 4, 0.3, 0, 0, LLAKernel::dot});
  v.push_back({"nw_rbf_causal", Method::nw_rbf, 1, 2, 11, 11, 3, 2, true, 0, kNaN, 0, 0, LLAKernel::dot});
  v.push_back({"nw_rbf_tiny_bw", Method::nw_rbf, 1, 1, 9, 9, 3, 2, false, 0, 0.4, 0, 0, LLAKernel::dot});
  v.push_back({"lla_window_bh", Method::lla, 2, 2, 12, 12, 3, 3, true, 5, kNaN, 0.2, 0, LLAKernel::dot});
  v.push_back({"lla_window_noncausal", Method::lla, 1, 1, 12, 12, 3, 2, false, 4, kNaN, 0.2, 0, LLAKernel::dot});
  v.push_back({"lla_ridge_per_position", Method::lla, 2, 1, 10, 10, 3, 2, true, 0, kNaN, 0.5, 1, LLAKernel::dot});
  v.push_back({"lla_ridge_per_bhi", Method::lla, 2, 2, 7, 7, 2, 2, true, 0, kNaN, 0.1, 2, LLAKernel::dot});
  v.push_back({"lla_ridge0", Method::lla, 1, 1, 20, 20, 3, 2, false, 0, kNaN, 0.0, 0, LLAKernel::dot});
  v.push_back({"lla_rbf", Method::lla, 1, 2, 15, 15, 3, 2, true, 0, kNaN, 0.1, 0, LLAKernel::rbf});
  v.push_back({"lla_rbf_ridge0", Method::lla, 1, 1, 25, 25, 2, 2, false, 0, 1.5, 0.0, 0, LLAKernel::rbf});
  v.push_back({"lla_tiny_bw", Method::lla, 1, 1, 15, 15, 3, 2, false, 0, 0.3, 0.5, 0, LLAKernel::dot});
  v.push_back({"lla_large_bw", Method::lla, 1, 1, 15, 15, 3, 2, true, 0, 50.0, 0.1, 0, LLAKernel::dot});
  v.push_back({"lla_rbf_large_bw", Method::lla, 1, 1, 15, 15, 3, 2, false, 0, 30.0, 0.1, 0, LLAKernel::rbf});
  v.push_back({"lla_cross", Method::lla, 1, 1, 6, 14, 3, 2, true, 0, kNaN, 0.2, 1, LLAKernel::dot});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Backward, VJP, testing::ValuesIn(cases()), case_name);

// Softmax against the closed form: P = softmax(a Q K' + mask), dV = P' dO,
// dS = P .* (dO V' - rowsum(P .* (dO V'))), dQ = a dS K, dK = a dS' Q.
TEST(SoftmaxVJP, MatchesTheClosedFormMatrixGradient) {
  for (unsigned seed : {1u, 2u, 3u}) {
    const i64 n = 6 + 7 * seed, d = 1 + 2 * seed, dv = seed + 1;
    const T4 Q = randn(1, 1, n, d, 10 * seed), K = randn(1, 1, n, d, 10 * seed + 1),
             V = randn(1, 1, n, dv, 10 * seed + 2), dO = randn(1, 1, n, dv, 10 * seed + 3);
    const bool causal = seed != 2;
    const double a = 0.7;
    arma::mat q(n, d), k(n, d), vv(n, dv), g(n, dv);
    for (i64 i = 0; i < n; ++i) {
      for (i64 c = 0; c < d; ++c) {
        q(i, c) = Q.x[i * d + c];
        k(i, c) = K.x[i * d + c];
      }
      for (i64 c = 0; c < dv; ++c) {
        vv(i, c) = V.x[i * dv + c];
        g(i, c) = dO.x[i * dv + c];
      }
    }
    arma::mat S = a * q * k.t();
    if (causal)
      for (i64 i = 0; i < n; ++i)
        for (i64 j = i + 1; j < n; ++j) S(i, j) = -arma::datum::inf;
    arma::mat P = arma::exp(S.each_col() - arma::max(S, 1));
    P.each_col() /= arma::sum(P, 1);
    const arma::mat dP = g * vv.t();
    const arma::mat dS = P % (dP.each_col() - arma::sum(P % dP, 1));
    const arma::mat wantQ = a * dS * k, wantK = a * dS.t() * q, wantV = P.t() * g;
    Options o;
    o.scale = a;
    o.causal = causal;
    T4 dQ(1, 1, n, d), dK(1, 1, n, d), dV(1, 1, n, dv);
    softmax_vjp<double>(Q.cv(), K.cv(), V.cv(), dO.cv(), dQ.v(), dK.v(), dV.v(), o);
    for (i64 i = 0; i < n; ++i) {
      for (i64 c = 0; c < d; ++c) {
        EXPECT_NEAR(dQ.x[i * d + c], wantQ(i, c), 1e-12);
        EXPECT_NEAR(dK.x[i * d + c], wantK(i, c), 1e-12);
      }
      for (i64 c = 0; c < dv; ++c) EXPECT_NEAR(dV.x[i * dv + c], wantV(i, c), 1e-12);
    }
  }
}

// dV of LLA is W' dO with W the dense LLA weights (attention_weights), and a float32 call
// agrees with the float64 one to float32 rounding.
TEST(LLAVJP, ValueGradientIsTheTransposedWeightsAndFloat32Agrees) {
  const i64 n = 17, d = 4, dv = 3;
  const T4 Q = randn(1, 1, n, d, 71, 0.5), K = randn(1, 1, n, d, 72, 0.5), V = randn(1, 1, n, dv, 73),
           dO = randn(1, 1, n, dv, 74);
  Options o;
  o.method = Method::lla;
  o.ridge = 0.2;
  o.causal = true;
  T4 W(1, 1, n, n);
  attention_weights<double>(Q.cv(), K.cv(), W.v(), o);
  T4 dQ(1, 1, n, d), dK(1, 1, n, d), dV(1, 1, n, dv);
  std::vector<double> dr;
  lla_vjp<double>(Q.cv(), K.cv(), V.cv(), dO.cv(), dQ.v(), dK.v(), dV.v(), &dr, o);
  for (i64 j = 0; j < n; ++j)
    for (i64 c = 0; c < dv; ++c) {
      double s = 0;
      for (i64 i = 0; i < n; ++i) s += W.x[i * n + j] * dO.x[i * dv + c];
      EXPECT_NEAR(dV.x[j * dv + c], s, 1e-12);
    }
  auto to_f = [](const T4& t) { return std::vector<float>(t.x.begin(), t.x.end()); };
  const auto qf = to_f(Q), kf = to_f(K), vf = to_f(V), gf = to_f(dO);
  std::vector<float> dqf(n * d), dkf(n * d), dvf(n * dv);
  lla_vjp<float>(make_view<const float>(qf.data(), 1, 1, n, d), make_view<const float>(kf.data(), 1, 1, n, d),
                 make_view<const float>(vf.data(), 1, 1, n, dv), make_view<const float>(gf.data(), 1, 1, n, dv),
                 make_view<float>(dqf.data(), 1, 1, n, d), make_view<float>(dkf.data(), 1, 1, n, d),
                 make_view<float>(dvf.data(), 1, 1, n, dv), nullptr, o);
  double gmax = 0;
  for (double x : dQ.x) gmax = std::max(gmax, std::fabs(x));
  for (i64 i = 0; i < n * d; ++i) {
    EXPECT_NEAR(dqf[i], dQ.x[i], 1e-4 * gmax);
    EXPECT_NEAR(dkf[i], dK.x[i], 1e-4 * gmax);
  }
}

void expect_invalid(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one containing: " << needle;
  } catch (const attnreg::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(BackwardBadInput, ClearErrorsNamingTheArgument) {
  const T4 Q = randn(1, 1, 8, 3, 1), K = randn(1, 1, 8, 3, 2), V = randn(1, 1, 8, 2, 3),
           dO = randn(1, 1, 8, 2, 4);
  T4 dQ(1, 1, 8, 3), dK(1, 1, 8, 3), dV(1, 1, 8, 2);
  Options o;
  o.method = Method::lla;
  o.ridge = 0.1;
  auto run = [&](const T4& q, const T4& k, const T4& v, const T4& g, T4& a, T4& b, T4& c,
                 const Options& opt) {
    backward<double>(q.cv(), k.cv(), v.cv(), g.cv(), a.v(), b.v(), c.v(), opt);
  };
  T4 dO_bad = dO;
  dO_bad.x[5] = std::nan("");
  expect_invalid([&] { run(Q, K, V, dO_bad, dQ, dK, dV, o); }, "dO: contains NaN");
  const T4 dO_short = randn(1, 1, 7, 2, 5);
  expect_invalid([&] { run(Q, K, V, dO_short, dQ, dK, dV, o); }, "dO: shape");
  T4 dK_small(1, 1, 8, 2);
  expect_invalid([&] { run(Q, K, V, dO, dQ, dK_small, dV, o); }, "dK: shape");
  Options neg = o;
  neg.ridge = -1;
  expect_invalid([&] { run(Q, K, V, dO, dQ, dK, dV, neg); }, "ridge: must be >= 0");
  Options causal0 = o;
  causal0.ridge = 0;
  causal0.causal = true;
  expect_invalid([&] { run(Q, K, V, dO, dQ, dK, dV, causal0); }, "ridge: must be > 0 for lla");
  Options mesa;
  mesa.method = Method::mesa;
  mesa.ridge = 1;
  expect_invalid([&] { run(Q, K, V, dO, dQ, dK, dV, mesa); }, "method: the backward pass exists");
  // A broadcast (zero-stride) gradient output is refused.
  View<double> bcast = dK.v();
  bcast.strides[2] = 0;
  expect_invalid([&] { backward<double>(Q.cv(), K.cv(), V.cv(), dO.cv(), dQ.v(), bcast, dV.v(), o); },
                 "dK: has a zero (broadcast) stride");
  // A singular Sigma (duplicated keys, ridge 0) is a NumericalError naming the query.
  T4 Kd(1, 1, 8, 3);
  for (i64 j = 0; j < 8; ++j) Kd.x[j * 3] = double(j);
  Options r0 = o;
  r0.ridge = 0;
  try {
    run(Q, Kd, V, dO, dQ, dK, dV, r0);
    ADD_FAILURE() << "no NumericalError";
  } catch (const attnreg::NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("(batch 1, head 1, query 1)"), std::string::npos) << e.what();
  }
}

}  // namespace
