// The option tables (attnreg/base/option_spec.hpp) against the C++ option structs: every
// struct default equals its row, so a default changed in one place and not the other fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "attnreg/attention/attention.hpp"
#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/base/option_spec.hpp"
#include "attnreg/kernels/binned.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_softmax.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace {

const attnreg::OptionSpec& row(const std::string& family, const std::string& name) {
  static const std::vector<attnreg::OptionSpec> rows = attnreg::option_spec();
  for (const auto& r : rows)
    if (r.family == family && r.name == name) return r;
  throw std::runtime_error("no option " + family + "." + name + " in option_spec()");
}

void expect_number(const std::string& family, const std::string& name, double value) {
  const auto& r = row(family, name);
  ASSERT_TRUE(r.type == "int" || r.type == "double") << family << "." << name;
  if (std::isnan(value)) {
    EXPECT_TRUE(r.is_none) << family << "." << name;
  } else {
    EXPECT_EQ(r.number, value) << family << "." << name;
  }
}
void expect_flag(const std::string& family, const std::string& name, bool value) {
  const auto& r = row(family, name);
  ASSERT_EQ(r.type, "bool") << family << "." << name;
  EXPECT_EQ(r.flag, value) << family << "." << name;
}
std::string text(const std::string& family, const std::string& name) {
  const auto& r = row(family, name);
  EXPECT_EQ(r.type, "string") << family << "." << name;
  return r.text;
}

}  // namespace

TEST(OptionSpec, RowsAreUniqueAndDocumented) {
  std::set<std::string> seen;
  for (const auto& r : attnreg::option_spec()) {
    EXPECT_TRUE(seen.insert(r.family + "." + r.name).second) << r.family << "." << r.name;
    EXPECT_FALSE(r.doc.empty()) << r.family << "." << r.name;
    EXPECT_TRUE(r.type == "int" || r.type == "double" || r.type == "bool" || r.type == "string");
    if (r.is_none) {
      EXPECT_TRUE(r.none_ok) << r.family << "." << r.name;
    }
  }
  EXPECT_EQ(attnreg::spec::attention::block_q, 64);
  EXPECT_STREQ(attnreg::spec::local_fit::kernel, "gaussian");
}

TEST(OptionSpec, AttentionOptions) {
  namespace at = attnreg::attention;
  const at::Options o;
  EXPECT_EQ(o.method, at::parse_method(text("attention", "method")));
  expect_flag("attention", "causal", o.causal);
  expect_number("attention", "window", static_cast<double>(o.window));
  expect_number("attention", "scale", o.scale);
  expect_number("attention", "bandwidth", o.bandwidth);
  expect_number("attention", "ridge", o.ridge);
  EXPECT_EQ(o.lla_algorithm, at::parse_lla_algorithm(text("attention", "algorithm")));
  EXPECT_EQ(o.lla_kernel, at::parse_lla_kernel(text("attention", "kernel")));
  expect_number("attention", "block_q", static_cast<double>(o.block_q));
  expect_number("attention", "block_k", static_cast<double>(o.block_k));
  expect_number("attention", "cg_tol", o.cg_tol);
  expect_number("attention", "cg_max_iter", o.cg_max_iter);
  EXPECT_EQ(o.feature_map, at::parse_feature_map(text("attention", "feature_map")));
  expect_number("attention", "feature_tau", o.feature_tau);
  expect_flag("attention", "normalize", o.normalize);
  expect_number("attention", "n_threads", o.n_threads);
}

TEST(OptionSpec, LocalFitOptions) {
  const attnreg::LocalFitOptions o;
  expect_number("local_fit", "degree", o.degree);
  EXPECT_EQ(std::string(o.kernel.kernel.name()), text("local_fit", "kernel"));
  EXPECT_EQ(o.kernel.var_types, text("local_fit", "var_types"));
  EXPECT_EQ(std::string(o.kernel.unordered_kernel.name()), text("local_fit", "unordered_kernel"));
  EXPECT_EQ(std::string(o.kernel.ordered_kernel.name()), text("local_fit", "ordered_kernel"));
  expect_number("local_fit", "ridge", o.ridge);
  EXPECT_EQ(std::string(attnreg::pair_algorithm_name(o.kernel.algorithm)),
            text("local_fit", "algorithm"));
  expect_number("local_fit", "truncation", o.kernel.truncation);
  expect_flag("local_fit", "compute_fitted", o.compute_fitted);
  expect_number("local_fit", "n_threads", o.kernel.n_threads);
}

TEST(OptionSpec, BinnedFitOptions) {
  const attnreg::BinnedFitOptions o;
  expect_number("binned", "degree", o.degree);
  EXPECT_EQ(std::string(o.kernel.name()), text("binned", "kernel"));
  expect_number("binned", "ridge", o.ridge);
  expect_number("binned", "grid_size", o.grid_size);
  expect_number("binned", "n_threads", o.n_threads);
}

TEST(OptionSpec, BandwidthSelectOptions) {
  const attnreg::BandwidthSelectOptions o;
  expect_number("bandwidth", "degree", o.degree);
  EXPECT_EQ(std::string(attnreg::bandwidth_method_name(o.method)), text("bandwidth", "method"));
  EXPECT_EQ(std::string(o.kernel.kernel.name()), text("bandwidth", "kernel"));
  EXPECT_EQ(o.kernel.var_types, text("bandwidth", "var_types"));
  EXPECT_EQ(std::string(o.kernel.unordered_kernel.name()), text("bandwidth", "unordered_kernel"));
  EXPECT_EQ(std::string(o.kernel.ordered_kernel.name()), text("bandwidth", "ordered_kernel"));
  expect_number("bandwidth", "ridge", o.ridge);
  expect_number("bandwidth", "n_starts", o.n_starts);
  expect_number("bandwidth", "seed", static_cast<double>(o.seed));
  expect_number("bandwidth", "grid_size", o.grid_size);
  expect_flag("bandwidth", "exact_curve", o.exact_curve);
  expect_number("bandwidth", "min_neighbors", o.min_neighbors);
  EXPECT_EQ(std::string(attnreg::pair_algorithm_name(o.kernel.algorithm)),
            text("bandwidth", "algorithm"));
  expect_number("bandwidth", "truncation", o.kernel.truncation);
  expect_number("bandwidth", "n_threads", o.kernel.n_threads);
  EXPECT_EQ(o.approx, attnreg::approximation_from_name(text("bandwidth", "approx")));
  expect_number("bandwidth", "approx_grid_size", o.approx_grid_size);
}

TEST(OptionSpec, LeastSquaresOptions) {
  const attnreg::RidgeOptions r;
  expect_number("ridge", "alpha", r.lambda);
  expect_flag("ridge", "fit_intercept", r.fit_intercept);
  expect_number("ridge", "n_threads", r.n_threads);
  EXPECT_EQ(r.weight_type, attnreg::parse_weight_type(text("ridge", "weight_type")));
  const attnreg::PCROptions p;
  expect_number("pcr", "rank", p.rank);
  expect_flag("pcr", "fit_intercept", p.fit_intercept);
  expect_number("pcr", "n_threads", p.n_threads);
  EXPECT_EQ(p.weight_type, attnreg::parse_weight_type(text("pcr", "weight_type")));
  const attnreg::AttentionRegressionOptions a;
  expect_number("attention_regression", "rank", a.rank);
  expect_flag("attention_regression", "fit_intercept", a.fit_intercept);
  expect_flag("attention_regression", "standardize", a.standardize);
  expect_number("attention_regression", "n_starts", a.n_starts);
  expect_number("attention_regression", "seed", static_cast<double>(a.seed));
  expect_number("attention_regression", "max_iter", a.max_iter);
  expect_number("attention_regression", "tol", a.tol);
  expect_number("attention_regression", "init_scale", a.init_scale);
  expect_number("attention_regression", "n_threads", a.n_threads);
}

TEST(OptionSpec, InferenceVocabulary) {
  // One name per concept and face (README "One vocabulary"): Python statsmodels / scikit-learn,
  // R fixest / base R.
  const std::vector<std::vector<std::string>> rows = {
      {"cov_type", "cov_type", "vcov"},         {"level", "level", "level"},
      {"groups", "groups", "cluster"},          {"random_state", "random_state", "seed"},
      {"replications", "replications", "R"},    {"bootstrap", "bootstrap", "bootstrap"}};
  for (const auto& v : rows) {
    const auto& r = row("inference", v[0]);
    EXPECT_EQ(r.python, v[1]) << v[0];
    EXPECT_EQ(r.r, v[2]) << v[0];
  }
  expect_number("inference", "level", 0.95);
  EXPECT_EQ(text("inference", "cov_type"), "HC3");
  EXPECT_EQ(text("inference", "bootstrap"), "rademacher");
  EXPECT_EQ(row("ridge", "alpha").r, "lambda");
  // Every other row is spelled as its name in both faces.
  EXPECT_EQ(row("attention", "block_q").python, "block_q");
  EXPECT_EQ(row("attention", "block_q").r, "block_q");
}
