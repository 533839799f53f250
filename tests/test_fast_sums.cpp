// Exact fast sums for compact kernels in 1-D (fast_sums.hpp): the engine against direct sums,
// and the estimators' automatic fast path against the all-pairs path.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/kernels/fast_sums.hpp"
#include "attnreg/solve/local_fit.hpp"

using namespace attnreg;

namespace {

const std::vector<KernelType> kCompact = {
    KernelType::uniform, KernelType::epanechnikov, KernelType::triangular, KernelType::biweight,
    KernelType::triweight, KernelType::tricube, KernelType::cosine};

// -u k'(u) written out per kernel (independent of fast_sums.cpp's tables).
double neg_u_dk(KernelType kt, double u) {
  const double a = std::fabs(u);
  if (a >= 1.0) return 0.0;
  switch (kt) {
    case KernelType::uniform: return 0.0;
    case KernelType::epanechnikov: return 2 * u * u;
    case KernelType::triangular: return a;
    case KernelType::biweight: return 4 * u * u * (1 - u * u);
    case KernelType::triweight: return 6 * u * u * (1 - u * u) * (1 - u * u);
    case KernelType::tricube: return 9 * a * a * a * (1 - a * a * a) * (1 - a * a * a);
    case KernelType::cosine: return 1.5707963267948966 * a * std::sin(1.5707963267948966 * a);
    default: return 0.0;
  }
}

// x in one of several shapes: uniform, ties (few distinct values), clusters, far origin.
arma::vec make_x(std::size_t n, int shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> U(0.0, 1.0);
  arma::vec x(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = U(rng);
    if (shape == 1) v = std::floor(v * 7.0) / 7.0;                // heavy ties
    if (shape == 2) v = (i % 3 == 0 ? 0.1 : 0.8) + 1e-3 * v;       // two tight clusters
    if (shape == 3) v = 1e6 + v;                                   // shifted origin
    x(i) = v;
  }
  return x;
}

struct Collect final : FastMomentsConsumer {
  std::vector<std::vector<double>>* M;
  std::vector<std::vector<double>>* D;
  std::vector<std::size_t>* pos;
  std::size_t len;
  void query(const FastMomentsQuery& q) override {
    (*M)[q.query].assign(q.M, q.M + len);
    if (q.D) (*D)[q.query].assign(q.D, q.D + len);
    (*pos)[q.query] = q.positive;
  }
};

}  // namespace

// Every moment sum a k(u) u^r Y_c and sum a (-u k'(u)) u^r Y_c against the direct sum, to 1e-12 of
// the sum of absolute terms a |Y_c| (|u| + reach)^r (reach: the largest |u| in the window), own row left out, for all compact kernels, n in {1, 2, 17, 1000},
// windows from one point to all points, ties, clusters and an origin at 1e6 bandwidths.
TEST(FastSums, MomentsEqualDirectSums) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  for (KernelType kt : kCompact) {
    const Kernel K(kt);
    for (std::size_t n : {1, 2, 17, 1000}) {
      for (int shape = 0; shape < 4; ++shape) {
        for (double h : {1e-5, 0.03, 0.3, 50.0}) {
          const arma::vec xr = make_x(n, shape, rng);
          const arma::vec x = xr / h;  // bandwidth units
          const std::size_t k = 2;
          arma::mat Y(n, k, arma::fill::randn);
          arma::vec a(n);
          for (std::size_t i = 0; i < n; ++i) a(i) = i % 5 == 0 ? 0.0 : 0.1 + U(rng);
          // Queries: every training row with itself left out, then new points.
          const std::size_t m2 = 9, m = n + m2;
          arma::vec t(m);
          std::vector<std::int64_t> self(m, -1);
          for (std::size_t i = 0; i < n; ++i) {
            t(i) = x(i);
            self[i] = static_cast<std::int64_t>(i);
          }
          for (std::size_t j = 0; j < m2; ++j) t(n + j) = x(j % n) + (U(rng) - 0.5) * 2.2;
          for (int R : {2, 6}) {
            FastMomentsProblem P;
            P.kernel = kt;
            P.n = n;
            P.x = x.memptr();
            P.a = a.memptr();
            P.Y = Y.memptr();
            P.k = k;
            P.m = m;
            P.t = t.memptr();
            P.self = self.data();
            P.max_power = R;
            P.derivative = true;
            P.n_threads = 2;
            const std::size_t C = 1 + k, len = (R + 1) * C;
            std::vector<std::vector<double>> M(m), D(m);
            std::vector<std::size_t> pos(m, 99);
            fast_window_moments(P, [&]() {
              auto c = std::make_unique<Collect>();
              c->M = &M;
              c->D = &D;
              c->pos = &pos;
              c->len = len;
              return std::unique_ptr<FastMomentsConsumer>(std::move(c));
            });
            for (std::size_t q = 0; q < m; ++q) {
              std::vector<double> m0(len, 0.0), d0(len, 0.0), sc(len, 0.0);
              std::size_t positive = 0;
              // The window's reach: the scale of the binomial shift (fast_sums.hpp).
              double reach = 0.0;
              for (std::size_t i = 0; i < n; ++i) {
                const double u = x(i) - t(q);
                const bool in = kt == KernelType::uniform ? std::fabs(u) <= 1 : std::fabs(u) < 1;
                if (in) reach = std::max(reach, std::fabs(u));
              }
              for (std::size_t i = 0; i < n; ++i) {
                if (static_cast<std::int64_t>(i) == self[q]) continue;
                const double u = x(i) - t(q);
                const double w = a(i) * K.shape(u), dw = a(i) * neg_u_dk(kt, u);
                if (a(i) > 0.0 && K.shape(u) > 0.0) ++positive;
                for (int r = 0; r <= R; ++r)
                  for (std::size_t c = 0; c < C; ++c) {
                    const double yc = c == 0 ? 1.0 : Y(i, c - 1);
                    const double ur = std::pow(u, r);
                    m0[r * C + c] += w * ur * yc;
                    d0[r * C + c] += dw * ur * yc;
                    sc[r * C + c] +=
                        a(i) * (std::fabs(u) <= 1 ? std::fabs(std::pow(std::fabs(u) + reach, r) * yc) : 0.0);
                  }
              }
              ASSERT_EQ(M[q].size(), len);
              EXPECT_EQ(pos[q], positive) << K.name() << " n=" << n << " q=" << q;
              for (std::size_t e = 0; e < len; ++e) {
                const double tol = 1e-12 * (sc[e] + 1e-300);
                EXPECT_NEAR(M[q][e], m0[e], tol)
                    << K.name() << " n=" << n << " shape=" << shape << " h=" << h << " q=" << q
                    << " e=" << e;
                EXPECT_NEAR(D[q][e], d0[e], 10 * tol)
                    << K.name() << " n=" << n << " shape=" << shape << " h=" << h << " q=" << q;
              }
            }
          }
        }
      }
    }
  }
}

namespace {

// |a - b| <= tol (1 + |b|), NaN in the same places. With `bound` > 0, values of b beyond
// +-bound are only checked for NaN: they are extrapolations of a near-singular local design
// (a query beside a tight cluster, a leave-one-out fit at an edge with one close neighbour),
// whose conditioning amplifies rounding beyond 1e-10 in every summation order, the all-pairs
// order included. At most 5% of the values may be such.
void expect_close(const arma::mat& a, const arma::mat& b, double tol, const std::string& what,
                  double bound = 0.0) {
  ASSERT_EQ(a.n_rows, b.n_rows) << what;
  ASSERT_EQ(a.n_cols, b.n_cols) << what;
  std::size_t skipped = 0;
  for (std::size_t i = 0; i < a.n_elem; ++i) {
    if (std::isnan(b(i))) {
      EXPECT_TRUE(std::isnan(a(i))) << what << " at " << i;
      continue;
    }
    if (bound > 0.0 && std::fabs(b(i)) > bound) {
      ++skipped;
      EXPECT_FALSE(std::isnan(a(i))) << what << " at " << i;
      continue;
    }
    EXPECT_NEAR(a(i), b(i), tol * (1.0 + std::fabs(b(i)))) << what << " at " << i;
  }
  EXPECT_LE(skipped, a.n_elem / 20 + 3) << what;
}

}  // namespace

// The estimator's automatic path (fast sums for 1-D compact kernels) equals the all-pairs path
// to 1e-10: fitted values, leverages, leave-one-out fits and their statuses, predictions and
// gradients, degrees 0 and 1 (the degrees that dispatch), multi-output y, observation weights, ties, clusters, far origin.
TEST(FastSums, LocalPolynomialEqualsAllPairs) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  for (KernelType kt : kCompact) {
    for (int degree = 0; degree <= 1; ++degree) {
      for (int shape = 0; shape < 4; ++shape) {
        const std::size_t n = shape == 0 ? 1000 : 200;
        const arma::vec x = make_x(n, shape, rng);
        arma::mat Y(n, 2);
        for (std::size_t i = 0; i < n; ++i) {
          Y(i, 0) = std::sin(6 * (x(i) - std::floor(x(i)))) + 0.3 * (U(rng) - 0.5);
          Y(i, 1) = 2.0 + (U(rng) - 0.5);
        }
        arma::vec sw(n);
        for (std::size_t i = 0; i < n; ++i) sw(i) = 0.2 + U(rng);
        const double hmax = shape == 3 ? 5.0 : 5.0;
        for (double h : {0.004, 0.08, 0.4, hmax}) {
          for (bool weighted : {false, true}) {
            LocalFitOptions o;
            o.kernel.kernel = Kernel(kt);
            o.degree = degree;
            o.compute_fitted = false;
            o.kernel.n_threads = 2;
            LocalPolynomial fast(o);
            o.kernel.algorithm = PairAlgorithm::all_pairs;
            LocalPolynomial slow(o);
            arma::mat Xm(x);
            const arma::vec bw{h};
            fast.fit(Xm, Y, bw, weighted ? sw : arma::vec());
            slow.fit(Xm, Y, bw, weighted ? sw : arma::vec());
            ASSERT_TRUE(fast_sums_eligible(fast.space(), degree));
            ASSERT_FALSE(fast_sums_eligible(slow.space(), degree));
            const std::string what = std::string(Kernel(kt).name()) + " degree " +
                                     std::to_string(degree) + " shape " + std::to_string(shape) +
                                     " h " + std::to_string(h) + (weighted ? " weighted" : "");
            // All statistics at the training rows, status reported (not thrown).
            const arma::mat yi = Y.rows(arma::conv_to<arma::uvec>::from(fast.space().order()));
            LocalPolySpec spec;
            spec.degree = degree;
            LocalEvalRequest rq;
            rq.loo = true;
            rq.gradient = degree >= 1;
            const PreparedQueries Q = fast.space().training_queries();
            const LocalEvalResult a = local_polynomial_eval(fast.space(), yi, spec, Q, rq, 2);
            const LocalEvalResult b = local_polynomial_eval(slow.space(), yi, spec, Q, rq, 2);
            EXPECT_EQ(a.status, b.status) << what;
            EXPECT_EQ(a.loo_status, b.loo_status) << what;
            expect_close(a.fit, b.fit, 1e-10, what + " fit", 2.6);
            expect_close(a.leverage, b.leverage, 1e-10, what + " leverage");
            expect_close(a.loo, b.loo, 1e-10, what + " loo", 2.6);
            if (degree >= 1) {
              // Slopes are in data units: compare in bandwidth units.
              expect_close(arma::mat(arma::vectorise(a.gradient)) * h,
                           arma::mat(arma::vectorise(b.gradient)) * h, 1e-10, what + " grad");
            }
            // Predictions at new points inside the data (where the fit exists); the fits lie in
            // [-1.2, 2.5], so values beyond 2.6 are extrapolations (see expect_close).
            arma::mat Xn(25, 1);
            for (std::size_t j = 0; j < 25; ++j) Xn(j, 0) = x(j * 7 % n);
            if (shape != 2)  // beside a tight cluster a local line is an extrapolation
              for (std::size_t j = 0; j < 25; j += 2) Xn(j, 0) += (U(rng) - 0.5) * 0.5 * h;
            LocalEvalRequest rp;
            const PreparedQueries Qn = fast.space().prepare(Xn, "X_new");
            const LocalEvalResult pa = local_polynomial_eval(fast.space(), yi, spec, Qn, rp, 1);
            const LocalEvalResult pb = local_polynomial_eval(slow.space(), yi, spec, Qn, rp, 1);
            EXPECT_EQ(pa.status, pb.status) << what;
            expect_close(pa.fit, pb.fit, 1e-10, what + " predict", 2.6);
          }
        }
      }
    }
  }
}

// The public fit / predict / leverage / loo_fitted of LocalPolynomial agree with all pairs, and
// do not depend on the thread count.
TEST(FastSums, LocalLinearPublicFitEqualsAllPairs) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> N01(0.0, 1.0);
  const std::size_t n = 3000;
  arma::mat X(n, 1), Y(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    X(i, 0) = 1e6 + std::round(std::tanh(N01(rng)) * 400.0) / 100.0;  // ties, far origin
    Y(i, 0) = std::cos(X(i, 0) - 1e6) + 0.2 * N01(rng);
  }
  LocalFitOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  o.degree = 1;
  o.kernel.n_threads = 1;
  LocalPolynomial f1(o);
  o.kernel.n_threads = 2;
  LocalPolynomial f2(o);
  o.kernel.algorithm = PairAlgorithm::all_pairs;
  LocalPolynomial ref(o);
  const arma::vec bw{0.35};
  f1.fit(X, Y, bw);
  f2.fit(X, Y, bw);
  ref.fit(X, Y, bw);
  EXPECT_TRUE(arma::approx_equal(f1.fitted(), f2.fitted(), "absdiff", 0.0));
  EXPECT_TRUE(arma::approx_equal(f1.loo_fitted(), f2.loo_fitted(), "absdiff", 0.0));
  expect_close(f1.fitted(), ref.fitted(), 1e-10, "fitted");
  expect_close(f1.leverage(), ref.leverage(), 1e-10, "leverage");
  expect_close(f1.loo_fitted(), ref.loo_fitted(), 1e-10, "loo");
  EXPECT_NEAR(f1.effective_df(), ref.effective_df(), 1e-10 * ref.effective_df());
  arma::mat Xn = arma::linspace(1e6 - 3.0, 1e6 + 3.0, 101);
  expect_close(f1.predict(Xn), ref.predict(Xn), 1e-10, "predict");
}

// The bandwidth objective (cv_ls, aic, gcv; lc and ll) and its exact gradient in log h: the
// automatic fast path equals all pairs to 1e-10, with ties (grouped rows) and without.
TEST(FastSums, BandwidthObjectiveAndGradientEqualAllPairs) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> N01(0.0, 1.0);
  for (bool ties : {false, true}) {
    const std::size_t n = 600;
    arma::mat X(n, 1);
    arma::vec y(n);
    for (std::size_t i = 0; i < n; ++i) {
      double v = 2.0 * std::tanh(N01(rng));
      if (ties) v = std::round(v * 10.0) / 10.0;
      X(i, 0) = 1e6 + v;
      y(i) = std::sin(2.0 * v) + 0.3 * N01(rng);
    }
    for (KernelType kt : kCompact) {
      for (int degree : {0, 1}) {
        for (BandwidthMethod m :
             {BandwidthMethod::cv_ls, BandwidthMethod::aic, BandwidthMethod::gcv}) {
          BandwidthSelectOptions o;
          o.kernel.kernel = Kernel(kt);
          o.degree = degree;
          o.method = m;
          o.kernel.n_threads = 2;
          BandwidthObjective fast(X, y, o);
          o.kernel.algorithm = PairAlgorithm::all_pairs;
          BandwidthObjective slow(X, y, o);
          for (double h : {0.25, 0.6, 3.0}) {
            arma::vec ga, gb;
            const double fa = fast(arma::vec{h}, &ga), fb = slow(arma::vec{h}, &gb);
            const std::string what = std::string(Kernel(kt).name()) + " degree " +
                                     std::to_string(degree) + " " + bandwidth_method_name(m) +
                                     " h " + std::to_string(h) + (ties ? " ties" : "");
            ASSERT_TRUE(std::isfinite(fb)) << what;
            EXPECT_NEAR(fa, fb, 1e-10 * std::fabs(fb)) << what;
            EXPECT_NEAR(fast.last_trace(), slow.last_trace(), 1e-10 * slow.last_trace()) << what;
            EXPECT_NEAR(ga(0), gb(0), 1e-10 * (std::fabs(fb) + std::fabs(gb(0)))) << what;
          }
        }
      }
    }
  }
}
