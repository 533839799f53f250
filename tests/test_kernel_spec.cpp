// The kernel specification (KernelSpec, kernel_pairs.hpp) reaches the computation through every
// estimator that holds it: each field set to a value the computation rejects is rejected naming
// that field, and a valid non-default kernel or categorical kernel changes the numbers. A field
// that an estimator dropped on the way (a copy that forgot it, so the default ran instead) makes
// the matching expectation fail.
#include <gtest/gtest.h>

#include <armadillo>
#include <functional>
#include <string>
#include <vector>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/inference/specification_tests.hpp"
#include "attnreg/inference/tradeoff_table.hpp"
#include "attnreg/moments/partials.hpp"
#include "attnreg/semiparametric/semiparametric.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/solve/local_polynomial.hpp"

using namespace attnreg;

namespace {

// n rows: a continuous column, an unordered one (3 levels) and an ordered one (4 levels).
struct Data {
  arma::mat Z, X;  // Z: the kernel columns; X: two linear regressors
  arma::vec y;
};

Data make_data(arma::uword n) {
  arma::arma_rng::set_seed(20261128);
  Data d;
  d.Z.set_size(n, 3);
  d.Z.col(0) = arma::randn(n);
  d.Z.col(1) = arma::floor(3.0 * arma::randu(n));
  d.Z.col(2) = arma::floor(4.0 * arma::randu(n));
  d.X = arma::randn(n, 2) + 0.3 * arma::repmat(d.Z.col(0), 1, 2);
  d.y = arma::sin(d.Z.col(0)) + 0.3 * d.Z.col(1) - 0.2 * d.Z.col(2) +
        d.X * arma::vec{1.0, -0.5} + 0.3 * arma::randn(n);
  return d;
}

// One estimator's path from a KernelSpec to numbers. `categorical`: the path takes the
// unordered and ordered columns (var_types "cuo"); otherwise continuous columns only.
struct Path {
  std::string name;
  bool categorical;
  std::function<arma::vec(const KernelSpec&)> run;
};

const arma::vec kBw{1.5, 0.3, 0.4};  // wide enough for the compact kernels

std::vector<Path> paths() {
  static const Data d = make_data(60);
  const arma::mat Zc = d.Z.col(0);
  std::vector<Path> p;
  p.push_back({"LocalPolynomial", true, [](const KernelSpec& k) {
                 LocalFitOptions o;
                 o.kernel = k;
                 LocalPolynomial m(o);
                 m.fit(d.Z, arma::mat(d.y), kBw);
                 return arma::vec(arma::join_cols(arma::vectorise(m.predict(d.Z.rows(0, 9))),
                                                  arma::vectorise(m.loo_fitted())));
               }});
  p.push_back({"local_polynomial_criterion", true, [](const KernelSpec& k) {
                 BandwidthSelectOptions o;
                 o.kernel = k;
                 o.degree = 2;
                 return arma::vec{local_polynomial_criterion(d.Z, d.y, kBw, o)};
               }});
  p.push_back({"BandwidthObjective", true, [](const KernelSpec& k) {
                 BandwidthSelectOptions o;
                 o.kernel = k;
                 BandwidthObjective obj(d.Z, d.y, o);
                 return arma::vec{obj(kBw, nullptr)};
               }});
  p.push_back({"select_bandwidth", true, [](const KernelSpec& k) {
                 BandwidthSelectOptions o;
                 o.kernel = k;
                 o.degree = 0;
                 o.n_starts = 1;
                 return select_bandwidth(d.Z, d.y, o).bandwidth;
               }});
  p.push_back({"select_local_polynomial_bandwidth", false, [Zc](const KernelSpec& k) {
                 BandwidthSelectOptions o;
                 o.kernel = k;
                 o.degree = 2;
                 o.n_starts = 1;
                 o.grid_size = 5;
                 return select_local_polynomial_bandwidth(Zc, d.y, o).bandwidth;
               }});
  p.push_back({"PartiallyLinear (given bandwidths)", true, [](const KernelSpec& k) {
                 PartiallyLinearOptions o;
                 o.kernel = k;
                 PartiallyLinear m(o);
                 m.fit(d.X, d.y, d.Z, arma::repmat(kBw.t(), 3, 1));
                 return arma::vec(arma::join_cols(m.coefficients(), m.fitted()));
               }});
  p.push_back({"PartiallyLinear (selected bandwidths)", true, [](const KernelSpec& k) {
                 PartiallyLinearOptions o;
                 o.kernel = k;
                 o.n_starts = 1;
                 PartiallyLinear m(o);
                 m.fit(d.X, d.y, d.Z);
                 return arma::vec(
                     arma::join_cols(m.coefficients(), arma::vectorise(m.bandwidth())));
               }});
  p.push_back({"SmoothCoefficient", true, [](const KernelSpec& k) {
                 SmoothCoefficientOptions o;
                 o.kernel = k;
                 SmoothCoefficient m(o);
                 m.fit(d.X, d.y, d.Z, kBw);
                 return arma::vec(arma::join_cols(m.fitted(), m.loo_fitted()));
               }});
  p.push_back({"smooth_coefficient_cv", true, [](const KernelSpec& k) {
                 SmoothCoefficientOptions o;
                 o.kernel = k;
                 return arma::vec{smooth_coefficient_cv(d.X, d.y, d.Z, kBw, o)};
               }});
  p.push_back({"select_smooth_coefficient_bandwidth", true, [](const KernelSpec& k) {
                 SmoothCoefficientOptions o;
                 o.kernel = k;
                 return select_smooth_coefficient_bandwidth(d.X, d.y, d.Z, o, 1, 0).bandwidth;
               }});
  p.push_back({"specification_test (given bandwidths)", true, [](const KernelSpec& k) {
                 SpecificationOptions o;
                 o.kernel = k;
                 o.bandwidth = kBw;
                 o.replications = 19;
                 const SpecificationTest t = specification_test(d.X, d.y, d.Z, o);
                 return arma::vec(arma::join_cols(arma::vec{t.statistic}, t.draws));
               }});
  p.push_back({"specification_test (selected bandwidths)", true, [](const KernelSpec& k) {
                 SpecificationOptions o;
                 o.kernel = k;
                 o.replications = 19;
                 o.reselect = 0;
                 const SpecificationTest t = specification_test(d.X, d.y, d.Z, o);
                 return arma::vec(arma::join_cols(arma::vec{t.statistic}, t.bandwidth));
               }});
  p.push_back({"local_partial", false, [Zc](const KernelSpec& k) {
                 LocalFitOptions o;
                 o.kernel = k;
                 const LocalPartial part =
                     local_partial(Zc, arma::mat(d.y), Zc.rows(0, 9), arma::vec{1.5}, o);
                 return arma::vec(local_finalize(part, arma::vec{1.5}, o));
               }});
  p.push_back({"tradeoff_table", false, [Zc](const KernelSpec& k) {
                 LocalFitOptions o;
                 o.kernel = k;
                 const TradeoffTable t =
                     tradeoff_table(Zc, d.y, arma::vec{1.5, 2.0}, o, Zc.rows(0, 4),
                                    VarianceKind::homoskedastic, -1, 3.0);
                 arma::vec all;
                 for (const auto& f : t.fields()) all = arma::join_cols(all, *f.second);
                 return all;
               }});
  return p;
}

KernelSpec base_spec(const Path& p) {
  KernelSpec k;
  k.var_types = p.categorical ? "cuo" : "c";
  return k;
}

// `run` throws InvalidArgument whose message starts with "field:".
void expect_rejected(const Path& p, const KernelSpec& k, const std::string& field) {
  try {
    p.run(k);
    ADD_FAILURE() << p.name << ": " << field << " did not reach the computation (no error)";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(field + ":", 0), 0u)
        << p.name << ": expected an error naming " << field << ", got: " << e.what();
  }
}

bool differ(const arma::vec& a, const arma::vec& b) {
  return a.n_elem != b.n_elem || arma::any(a != b);
}

}  // namespace

TEST(KernelSpec, EveryFieldReachesEveryEstimator) {
  for (const Path& p : paths()) {
    SCOPED_TRACE(p.name);
    const KernelSpec base = base_spec(p);
    const arma::vec r0 = p.run(base);
    ASSERT_TRUE(r0.is_finite()) << p.name;

    KernelSpec k = base;
    k.kernel = Kernel(KernelType::epanechnikov);
    EXPECT_TRUE(differ(p.run(k), r0)) << p.name << ": kernel had no effect";

    k = base;
    k.var_types = p.categorical ? "cuz" : "z";
    expect_rejected(p, k, "var_types");

    k = base;
    k.unordered_kernel = CategoricalKernel(CategoricalKernelType::li_racine_ordered);
    expect_rejected(p, k, "unordered_kernel");

    k = base;
    k.ordered_kernel = CategoricalKernel(CategoricalKernelType::aitchison_aitken);
    expect_rejected(p, k, "ordered_kernel");

    k = base;  // the Gaussian has no neighbour path without truncation
    k.algorithm = PairAlgorithm::neighbors;
    k.truncation = 0.0;
    expect_rejected(p, k, "algorithm");

    k = base;
    k.truncation = 0.5;
    expect_rejected(p, k, "truncation");

    k = base;
    k.n_threads = -1;
    expect_rejected(p, k, "n_threads");

    if (p.categorical) {
      k = base;
      k.unordered_kernel = CategoricalKernel(CategoricalKernelType::li_racine_unordered);
      EXPECT_TRUE(differ(p.run(k), r0)) << p.name << ": unordered_kernel had no effect";
      k = base;
      k.ordered_kernel = CategoricalKernel(CategoricalKernelType::wang_van_ryzin);
      EXPECT_TRUE(differ(p.run(k), r0)) << p.name << ": ordered_kernel had no effect";
    }
  }
}

// A valid neighbour path and truncation give the all-pairs numbers to the truncation's bound
// (kernel_pairs.hpp), through the estimator that composes the most fits.
TEST(KernelSpec, AlgorithmAndTruncationKeepThePartiallyLinearFit) {
  const Data d = make_data(300);
  PartiallyLinearOptions o;
  o.kernel.var_types = "cuo";
  o.kernel.algorithm = PairAlgorithm::all_pairs;
  PartiallyLinear exact(o);
  exact.fit(d.X, d.y, d.Z, arma::repmat(arma::rowvec{0.3, 0.3, 0.4}, 3, 1));
  o.kernel.algorithm = PairAlgorithm::neighbors;
  o.kernel.truncation = 1e-10;
  PartiallyLinear near(o);
  near.fit(d.X, d.y, d.Z, arma::repmat(arma::rowvec{0.3, 0.3, 0.4}, 3, 1));
  // Each kernel sum loses at most n * truncation of its largest term (relative): 3e-8 here.
  EXPECT_LT(arma::abs(near.coefficients() - exact.coefficients()).max(), 1e-6);
}

// The saved state of a local fit keeps every field but n_threads (which the faces save beside
// it; the numbers do not depend on it).
TEST(KernelSpec, LocalFitStateKeepsTheSpec) {
  const Data d = make_data(60);
  LocalFitOptions o;
  o.kernel.kernel = Kernel(KernelType::epanechnikov);
  o.kernel.var_types = "cuo";
  o.kernel.unordered_kernel = CategoricalKernel(CategoricalKernelType::li_racine_unordered);
  o.kernel.ordered_kernel = CategoricalKernel(CategoricalKernelType::wang_van_ryzin);
  o.kernel.algorithm = PairAlgorithm::neighbors;
  o.kernel.truncation = 1e-12;
  LocalPolynomial m(o);
  m.fit(d.Z, arma::mat(d.y), kBw);
  const KernelSpec r = LocalPolynomial::from_state(m.state()).options().kernel;
  EXPECT_EQ(r.kernel.type, o.kernel.kernel.type);
  EXPECT_EQ(r.var_types, o.kernel.var_types);
  EXPECT_EQ(r.unordered_kernel.type, o.kernel.unordered_kernel.type);
  EXPECT_EQ(r.ordered_kernel.type, o.kernel.ordered_kernel.type);
  EXPECT_EQ(r.algorithm, o.kernel.algorithm);
  EXPECT_EQ(r.truncation, o.kernel.truncation);
}
