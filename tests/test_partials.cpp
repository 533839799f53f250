// Tests of the mergeable partial statistics (partials.hpp): partial over any split of the
// training rows / keys, merged in any order, finalised == the in-memory estimator
// (LocalPolynomial, softmax / nw_rbf attention) and == a direct float64 oracle for NW.
#include <gtest/gtest.h>

#include <armadillo>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "attnreg/attention/attention.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/moments/partials.hpp"

using namespace attnreg;

namespace {

double max_rel(const arma::mat& a, const arma::mat& b) {
  EXPECT_EQ(a.n_rows, b.n_rows);
  EXPECT_EQ(a.n_cols, b.n_cols);
  return arma::abs(a - b).max() / std::max(1.0, arma::abs(b).max());
}

// Random cut points splitting [0, n) into `parts` (possibly empty) blocks.
std::vector<arma::uword> random_cuts(arma::uword n, int parts, std::mt19937& rng) {
  std::vector<arma::uword> cuts{0, n};
  std::uniform_int_distribution<arma::uword> u(0, n);
  for (int i = 1; i < parts; ++i) cuts.push_back(u(rng));
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

// Partials of Xq over each block [cuts[b], cuts[b+1]) merged in a random order.
LocalPartial split_and_merge(const arma::mat& X, const arma::mat& Y, const arma::mat& Xq,
                             const arma::vec& h, const LocalFitOptions& o, const arma::vec& sw,
                             const std::vector<arma::uword>& cuts, std::mt19937& rng,
                             bool loo = false) {
  std::vector<LocalPartial> parts;
  for (std::size_t b = 0; b + 1 < cuts.size(); ++b) {
    const arma::uword lo = cuts[b], hi = cuts[b + 1];
    const arma::mat Xb = hi > lo ? arma::mat(X.rows(lo, hi - 1)) : arma::mat(0, X.n_cols);
    const arma::mat Yb = hi > lo ? arma::mat(Y.rows(lo, hi - 1)) : arma::mat(0, Y.n_cols);
    const arma::vec swb = sw.is_empty() ? arma::vec() : (hi > lo ? arma::vec(sw.subvec(lo, hi - 1)) : arma::vec());
    std::vector<std::int64_t> self;
    if (loo) {
      self.assign(Xq.n_rows, -1);
      for (arma::uword i = lo; i < hi; ++i) self[i] = static_cast<std::int64_t>(i - lo);
    }
    if (!sw.is_empty() && hi == lo) continue;  // an empty weighted block: nothing to add
    parts.push_back(local_partial(Xb, Yb, Xq, h, o, swb, self));
  }
  std::shuffle(parts.begin(), parts.end(), rng);
  LocalPartial acc = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) merge(acc, parts[i]);
  return acc;
}

LocalFitOptions opts(int degree, const std::string& kernel, double ridge) {
  LocalFitOptions o;
  o.degree = degree;
  o.kernel.kernel = Kernel::from_name(kernel);
  o.ridge = ridge;
  return o;
}

}  // namespace

TEST(Partials, LocalFitEqualsInMemoryForAnySplit) {
  std::mt19937 rng(11);
  struct Case {
    arma::uword n, d, k;
    int degree;
    double ridge;
    const char* kernel;
  };
  const std::vector<Case> cases = {
      {60, 1, 1, 0, 0.0, "gaussian"},  {200, 2, 2, 1, 0.0, "gaussian"},
      {150, 3, 1, 1, 0.05, "gaussian"}, {120, 1, 1, 2, 0.0, "gaussian"},
      {300, 2, 3, 1, 0.0, "epanechnikov"}, {90, 4, 1, 0, 0.0, "biweight"},
      {2500, 2, 1, 1, 0.0, "gaussian"},
      // degree 2 in several columns (squares and cross products), as LocalPolynomial
      {400, 2, 1, 2, 0.0, "gaussian"}, {500, 3, 2, 2, 0.05, "gaussian"}};
  for (const Case& c : cases) {
    arma::arma_rng::set_seed(c.n + c.d);
    const arma::mat X = arma::randn(c.n, c.d);
    const arma::mat Y = arma::sin(X * arma::ones(c.d, c.k)) + 0.1 * arma::randn(c.n, c.k);
    const arma::mat Xq = 0.8 * arma::randn(37, c.d);
    const arma::vec h(c.d, arma::fill::value(c.kernel == std::string("gaussian") ? 0.5 : 1.2));
    LocalFitOptions o = opts(c.degree, c.kernel, c.ridge);
    LocalPolynomial lp(o);
    lp.fit(X, Y, h);
    const arma::mat ref = lp.predict(Xq);
    for (int parts : {1, 2, 3, 7}) {
      const auto cuts = random_cuts(c.n, parts, rng);
      const LocalPartial p = split_and_merge(X, Y, Xq, h, o, arma::vec(), cuts, rng);
      const arma::mat fit = local_finalize(p, h, o);
      EXPECT_LT(max_rel(fit, ref), 1e-12) << "n=" << c.n << " d=" << c.d << " degree=" << c.degree
                                          << " parts=" << parts;
    }
  }
}

TEST(Partials, NadarayaWatsonEqualsDirectOracle) {
  // NW in a few lines: sum_i w_i y_i / sum_i w_i with Gaussian weights.
  arma::arma_rng::set_seed(3);
  const arma::mat X = arma::randu(80, 2), Y = arma::randn(80, 1), Xq = arma::randu(9, 2);
  const arma::vec h = {0.2, 0.3};
  std::mt19937 rng(5);
  const LocalFitOptions o = opts(0, "gaussian", 0.0);
  const LocalPartial p = split_and_merge(X, Y, Xq, h, o, arma::vec(), random_cuts(80, 4, rng), rng);
  const arma::mat fit = local_finalize(p, h, o);
  for (arma::uword q = 0; q < Xq.n_rows; ++q) {
    double sw = 0, swy = 0;
    for (arma::uword i = 0; i < X.n_rows; ++i) {
      const double a = (X(i, 0) - Xq(q, 0)) / h(0), b = (X(i, 1) - Xq(q, 1)) / h(1);
      const double w = std::exp(-0.5 * (a * a + b * b));
      sw += w;
      swy += w * Y(i, 0);
    }
    EXPECT_NEAR(fit(q, 0), swy / sw, 1e-12 * std::fabs(swy / sw) + 1e-14);
  }
}

TEST(Partials, SampleWeightsRescaleAcrossBlocks) {
  // Blocks have different largest weights: the log-scale merge must give the global result.
  arma::arma_rng::set_seed(8);
  const arma::uword n = 150;
  const arma::mat X = arma::randn(n, 2), Y = arma::randn(n, 1), Xq = arma::randn(20, 2);
  arma::vec sw = arma::randu(n) + 0.01;
  sw.subvec(0, 49) *= 1e-3;
  sw.subvec(100, 149) *= 1e4;
  const arma::vec h = {0.6, 0.6};
  std::mt19937 rng(9);
  for (int degree : {0, 1}) {
    const LocalFitOptions o = opts(degree, "gaussian", 0.0);
    LocalPolynomial lp(o);
    lp.fit(X, Y, h, sw);
    const arma::mat ref = lp.predict(Xq);
    const LocalPartial p = split_and_merge(X, Y, Xq, h, o, sw, {0, 50, 100, 150}, rng);
    const double log_scale = *std::max_element(p.moments.max.begin(), p.moments.max.end());
    EXPECT_NEAR(log_scale, std::log(sw.max()), 1e-15 * std::log(sw.max()));
    EXPECT_LT(max_rel(local_finalize(p, h, o), ref), 1e-12);
  }
}

TEST(Partials, LeaveOneOutEqualsInMemoryLoo) {
  std::mt19937 rng(21);
  for (int degree : {0, 1}) {
    for (double ridge : {0.0, 0.2}) {
      arma::arma_rng::set_seed(40 + degree);
      const arma::uword n = 130;
      const arma::mat X = arma::randn(n, 2), Y = arma::randn(n, 2);
      const arma::vec h = {0.7, 0.5};
      const LocalFitOptions o = opts(degree, "gaussian", ridge);
      LocalPolynomial lp(o);
      lp.fit(X, Y, h);
      const arma::mat ref = lp.loo_fitted();
      const LocalPartial p =
          split_and_merge(X, Y, X, h, o, arma::vec(), random_cuts(n, 5, rng), rng, true);
      const arma::mat loo = local_finalize(p, h, o, nullptr, true, true, "X");
      EXPECT_LT(max_rel(loo, ref), 1e-12) << "degree " << degree << " ridge " << ridge;
    }
  }
}

TEST(Partials, MergeIsAssociativeAndCommutative) {
  arma::arma_rng::set_seed(4);
  const arma::mat X = arma::randn(90, 2), Y = arma::randn(90, 1), Xq = arma::randn(7, 2);
  const arma::vec h = {0.5, 0.5};
  const arma::vec sw = arma::exp(3.0 * arma::randn(90));
  const LocalFitOptions o = opts(1, "gaussian", 0.0);
  const LocalPartial a = local_partial(X.rows(0, 29), Y.rows(0, 29), Xq, h, o, sw.subvec(0, 29));
  const LocalPartial b = local_partial(X.rows(30, 59), Y.rows(30, 59), Xq, h, o, sw.subvec(30, 59));
  const LocalPartial c = local_partial(X.rows(60, 89), Y.rows(60, 89), Xq, h, o, sw.subvec(60, 89));
  LocalPartial ab = a;
  merge(ab, b);
  merge(ab, c);  // (a b) c
  LocalPartial bc = b;
  merge(bc, c);
  LocalPartial a_bc = a;
  merge(a_bc, bc);  // a (b c)
  LocalPartial cba = c;
  merge(cba, b);
  merge(cba, a);  // c b a
  LocalPartial e = local_partial_empty(7, 3, 1, 2, 1);
  merge(e, a_bc);  // identity
  const arma::mat r1 = local_finalize(ab, h, o), r2 = local_finalize(a_bc, h, o),
                  r3 = local_finalize(cba, h, o), r4 = local_finalize(e, h, o);
  EXPECT_LT(max_rel(r1, r2), 1e-13);
  EXPECT_LT(max_rel(r1, r3), 1e-13);
  EXPECT_EQ(arma::abs(r2 - r4).max(), 0.0);
}

TEST(Partials, FarQueriesAndFailuresMatchInMemory) {
  // Block 1 is far from the query (its weights underflow to 0); block 2 holds the neighbours.
  arma::mat X(40, 1);
  for (arma::uword i = 0; i < 20; ++i) X(i, 0) = 1000.0 + 0.1 * i;
  for (arma::uword i = 20; i < 40; ++i) X(i, 0) = 0.1 * (i - 20);
  const arma::mat Y = arma::sin(X);
  const arma::vec h = {0.3};
  const LocalFitOptions o = opts(1, "gaussian", 0.0);
  LocalPolynomial lp(o);
  lp.fit(X, Y, h);
  const arma::mat Xq = arma::mat(arma::vec{0.5, 1.3, 1000.7});
  const LocalPartial a = local_partial(X.rows(0, 19), Y.rows(0, 19), Xq, h, o);
  EXPECT_EQ(a.moments.peak[0], 0.0);
  LocalPartial p = local_partial(X.rows(20, 39), Y.rows(20, 39), Xq, h, o);
  merge(p, a);
  EXPECT_LT(max_rel(local_finalize(p, h, o), lp.predict(Xq)), 1e-12);
  // A query far from every block fails with the in-memory message.
  const arma::mat far(1, 1, arma::fill::value(500.0));
  std::string expected, got;
  try {
    lp.predict(far);
  } catch (const NumericalError& e) {
    expected = e.what();
  }
  LocalPartial f = local_partial(X.rows(0, 19), Y.rows(0, 19), far, h, o);
  merge(f, local_partial(X.rows(20, 39), Y.rows(20, 39), far, h, o));
  try {
    local_finalize(f, h, o);
  } catch (const NumericalError& e) {
    got = e.what();
  }
  EXPECT_FALSE(expected.empty());
  EXPECT_EQ(got, expected);
  std::vector<QueryStatus> st;
  const arma::mat nan_fit = local_finalize(f, h, o, &st, false);
  EXPECT_TRUE(st[0] != QueryStatus::ok);
  EXPECT_TRUE(std::isnan(nan_fit(0, 0)));
}

TEST(Partials, BadBlocksGiveClearErrors) {
  arma::mat X = arma::randn(10, 2), Y = arma::randn(10, 1);
  const arma::mat Xq = arma::randn(3, 2);
  const arma::vec h = {0.5, 0.5};
  const LocalFitOptions o = opts(1, "gaussian", 0.0);
  arma::mat Xn = X;
  Xn(3, 1) = std::numeric_limits<double>::quiet_NaN();
  try {
    local_partial(Xn, Y, Xq, h, o);
    FAIL() << "NaN accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("X"), std::string::npos) << e.what();
  }
  try {
    local_partial(arma::randn(10, 3), Y, Xq, h, o);
    FAIL() << "wrong column count accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("columns"), std::string::npos) << e.what();
  }
  LocalFitOptions oc = o;
  oc.kernel.var_types = "cu";
  EXPECT_THROW(local_partial(X, Y, Xq, h, oc), InvalidArgument);
  LocalPartial a = local_partial(X, Y, Xq, h, o);
  const LocalPartial b = local_partial(X, Y, arma::randn(4, 2), h, o);
  EXPECT_THROW(merge(a, b), InvalidArgument);
}

TEST(Partials, SoftmaxAndNwRbfEqualAttentionForAnyKeySplit) {
  using namespace attention;
  std::mt19937 rng(2);
  struct Case {
    std::int64_t B, H, nq, nk, d, dv;
    bool causal;
    std::int64_t window;
    Method method;
  };
  const std::vector<Case> cases = {{1, 1, 17, 40, 4, 3, false, 0, Method::softmax},
                                   {2, 3, 33, 33, 8, 5, true, 0, Method::softmax},
                                   {1, 2, 20, 50, 3, 2, true, 7, Method::nw_rbf},
                                   {2, 1, 25, 80, 6, 6, false, 0, Method::nw_rbf}};
  for (const Case& c : cases) {
    arma::arma_rng::set_seed(c.nk);
    std::vector<double> q(c.B * c.H * c.nq * c.d), k(c.B * c.H * c.nk * c.d),
        v(c.B * c.H * c.nk * c.dv), ref(c.B * c.H * c.nq * c.dv), got(ref.size());
    for (auto& x : q) x = 2.0 * arma::randn();
    for (auto& x : k) x = 2.0 * arma::randn();
    for (auto& x : v) x = arma::randn();
    Options o;
    o.method = c.method;
    o.causal = c.causal;
    o.window = c.window;
    const auto Q = make_view<const double>(q.data(), c.B, c.H, c.nq, c.d);
    forward<double>(Q, make_view<const double>(k.data(), c.B, c.H, c.nk, c.d),
                    make_view<const double>(v.data(), c.B, c.H, c.nk, c.dv),
                    make_view<double>(ref.data(), c.B, c.H, c.nq, c.dv), o);
    const auto cuts = random_cuts(static_cast<arma::uword>(c.nk), 4, rng);
    std::vector<SoftmaxPartial> parts;
    for (std::size_t b = 0; b + 1 < cuts.size(); ++b) {
      const std::int64_t lo = cuts[b], len = cuts[b + 1] - cuts[b];
      if (len == 0) continue;
      // Key slice as a strided view into the full K, V (no copy).
      View<const double> Ks = make_view<const double>(k.data(), c.B, c.H, c.nk, c.d);
      View<const double> Vs = make_view<const double>(v.data(), c.B, c.H, c.nk, c.dv);
      Ks.data += lo * Ks.strides[2];
      Vs.data += lo * Vs.strides[2];
      Ks.shape[2] = Vs.shape[2] = len;
      parts.push_back(softmax_partial<double>(Q, Ks, Vs, lo, c.nk, o));
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    SoftmaxPartial acc = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) merge(acc, parts[i]);
    softmax_finalize<double>(acc, make_view<double>(got.data(), c.B, c.H, c.nq, c.dv));
    double err = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) err = std::max(err, std::fabs(got[i] - ref[i]));
    EXPECT_LT(err, 1e-12) << "case nk=" << c.nk;
  }
}

TEST(Partials, SoftmaxFinalizeRefusesPartialsThatMissKeysAndMergeRefusesOverlaps) {
  // A softmax over a subset of the keys is a different estimate: finalize refuses it, and a
  // key slice merged twice (counted twice) is refused at merge; complete coverage in any order
  // equals attention::forward.
  using namespace attention;
  const std::int64_t nq = 5, nk = 16, d = 3, dv = 2;
  arma::arma_rng::set_seed(21);
  std::vector<double> q(nq * d), k(nk * d), v(nk * dv), ref(nq * dv), got(nq * dv);
  for (auto& x : q) x = arma::randn();
  for (auto& x : k) x = arma::randn();
  for (auto& x : v) x = arma::randn();
  for (Method m : {Method::softmax, Method::nw_rbf}) {
    Options o;
    o.method = m;
    const auto Q = make_view<const double>(q.data(), 1, 1, nq, d);
    auto slice = [&](std::int64_t lo, std::int64_t hi) {
      return softmax_partial<double>(Q, make_view<const double>(k.data() + lo * d, 1, 1, hi - lo, d),
                                     make_view<const double>(v.data() + lo * dv, 1, 1, hi - lo, dv),
                                     lo, nk, o);
    };
    const SoftmaxPartial a = slice(0, 6), b = slice(6, 11), c = slice(11, 16);
    EXPECT_EQ(a.key_ranges, (std::vector<std::int64_t>{0, 6}));
    const auto out = make_view<double>(got.data(), 1, 1, nq, dv);
    // Every query has key weight here, so only the coverage check can refuse.
    SoftmaxPartial ac = a;
    merge(ac, c);
    EXPECT_EQ(ac.key_ranges, (std::vector<std::int64_t>{0, 6, 11, 16}));
    for (const SoftmaxPartial* p : std::vector<const SoftmaxPartial*>{&a, &ac}) {
      try {
        softmax_finalize<double>(*p, out);
        ADD_FAILURE() << "finalize accepted an incomplete partial";
      } catch (const InvalidArgument& e) {
        const std::string w = e.what();
        EXPECT_EQ(w.rfind("partial: covers keys [0, 6)", 0), 0u) << w;
        EXPECT_NE(w.find("of n_keys_total = 16"), std::string::npos) << w;
      }
    }
    SoftmaxPartial twice = ac;
    try {
      merge(twice, a);
      ADD_FAILURE() << "merge accepted an overlap";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("exactly once"), std::string::npos) << e.what();
    }
    SoftmaxPartial all = b;
    merge(all, ac);
    EXPECT_EQ(all.key_ranges, (std::vector<std::int64_t>{0, 16}));
    softmax_finalize<double>(all, out);
    forward<double>(Q, make_view<const double>(k.data(), 1, 1, nk, d),
                    make_view<const double>(v.data(), 1, 1, nk, dv),
                    make_view<double>(ref.data(), 1, 1, nq, dv), o);
    for (std::size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-12);
  }
}

TEST(Partials, LeaveOneOutFailureAndWeightsMatchInMemory) {
  // An isolated row under a compact kernel has no leave-one-out fit: same message as in memory.
  arma::arma_rng::set_seed(77);
  arma::mat X = arma::randu(60, 1);
  X(17, 0) = 5.0;
  const arma::mat Y = arma::randn(60, 1);
  const arma::vec sw = arma::randu(60) + 0.5;
  const arma::vec h = {0.3};
  std::mt19937 rng(1);
  const LocalFitOptions o = opts(0, "epanechnikov", 0.0);
  LocalPolynomial lp(o);
  lp.fit(X, Y, h, sw);
  std::string expected, got;
  try {
    lp.loo_fitted();
  } catch (const NumericalError& e) {
    expected = e.what();
  }
  const LocalPartial p = split_and_merge(X, Y, X, h, o, sw, {0, 10, 35, 60}, rng, true);
  try {
    local_finalize(p, h, o, nullptr, true, true, "X");
  } catch (const NumericalError& e) {
    got = e.what();
  }
  EXPECT_NE(expected.find("leave-one-out fit at training row 18"), std::string::npos) << expected;
  EXPECT_EQ(got, expected);
  // The other rows' leave-one-out fits agree.
  const arma::mat ref = lp.state().loo;
  std::vector<QueryStatus> st;
  const arma::mat loo = local_finalize(p, h, o, &st, false, true, "X");
  for (arma::uword i = 0; i < X.n_rows; ++i) {
    if (i == 17) {
      EXPECT_TRUE(st[i] != QueryStatus::ok);
      continue;
    }
    EXPECT_NEAR(loo(i, 0), ref(i, 0), 1e-12 * std::max(1.0, std::fabs(ref(i, 0))));
  }
}

TEST(Partials, DegreeRuleIsLocalPolynomials) {
  // The in-memory rule (local_fit.cpp): degree 2 in any number of continuous columns, degree 3
  // in exactly one.
  arma::arma_rng::set_seed(5);
  const arma::mat X = arma::randn(40, 2), Y = arma::randn(40, 1);
  const arma::vec h(2, arma::fill::value(0.7));
  EXPECT_NO_THROW(local_partial(X, Y, X, h, opts(2, "gaussian", 0.0), arma::vec(), {}));
  try {
    local_partial(X, Y, X, h, opts(3, "gaussian", 0.0), arma::vec(), {});
    ADD_FAILURE() << "degree 3 with two columns was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("degree 3 needs exactly one continuous column"),
              std::string::npos) << e.what();
  }
}
