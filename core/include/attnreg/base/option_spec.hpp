// attnreg: the user-facing options written once (LightGBM's config.h idea).
//
// Each table below lists one option family: name, type, default, whether the faces may spell
// the default as None / NULL, the allowed values and a one-line doc. From the tables come
//   - typed constants attnreg::spec::<family>::<name>, which the C++ option structs use as
//     their defaults and the pybind keyword defaults use (so the default is written here only);
//   - option_spec(), the whole table at run time, exposed to Python (attnreg._core.option_spec)
//     and R (attnreg:::.option_spec), where tests compare every public signature's defaults with
//     it and fail when a layer drifts (tests/test_option_spec.cpp, test_option_spec.py,
//     test-option-spec.R).
// Enumerated options (kernel, method, ...) have their default as the name the parsers accept;
// the structs hold the parsed enum, checked against the name by tests/test_option_spec.cpp.
//
// Adding an option: add its row here, use spec::<family>::<name> as the struct's default, and
// give the faces the same default (the drift tests name any face that differs).
#pragma once

#include <limits>
#include <string>
#include <vector>

namespace attnreg {
namespace spec {

using Int = long long;
using Real = double;
using Flag = bool;
using Text = const char*;
/// "Not given": the core's documented default applies (faces spell it None / NULL).
inline constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// X(name, type, default, none_ok, allowed, doc). none_ok: the faces may pass None / NULL for
// the default (Python's n_threads=None, R's window = NULL, ...).

/// attention::Options (attnreg/attention/attention.hpp).
#define ATTNREG_OPTIONS_ATTENTION(X)                                                            \
  X(method, Text, "softmax", false, "softmax|nw_rbf|lla|linear|mesa", "Attention method")      \
  X(causal, Flag, false, false, "", "Query i sees keys j <= i only")                            \
  X(window, Int, 0, true, ">= 0", "Sliding window width (0: none)")                             \
  X(scale, Real, kNone, true, "finite", "Logit scale of the dot kernels (None: 1/sqrt(dim))")   \
  X(bandwidth, Real, kNone, true, "> 0", "Kernel bandwidth h (None: the method's default)")     \
  X(ridge, Real, 0.0, true, ">= 0", "LLA ridge lambda (omega-scaled); mesa's lambda")          \
  X(algorithm, Text, "blockwise", false, "naive|direct|blockwise", "LLA algorithm")             \
  X(kernel, Text, "dot", false, "dot|rbf", "LLA kernel")                                        \
  X(block_q, Int, 64, false, "[1, 65536]", "Query rows per block")                              \
  X(block_k, Int, 64, false, "[1, 65536]", "Keys per tile")                                     \
  X(cg_tol, Real, kNone, true, "> 0", "CG tolerance (None: 1e-12 float64, 1e-6 float32)")       \
  X(cg_max_iter, Int, 0, true, ">= 0", "CG sweeps per query block (0: 2 dim + 10)")             \
  X(feature_map, Text, "elu_plus_one", false, "elu_plus_one|relu|identity|epanechnikov",        \
    "Linear attention's feature map")                                                           \
  X(feature_tau, Real, 4.0, false, ">= 2", "Epanechnikov feature map's temperature tau")        \
  X(normalize, Flag, true, false, "", "Linear attention divides by sum phi(q)'phi(k)")          \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")

/// The faces' default of mesa attention's ridge (the core Options' ridge default is LLA's 0).
#define ATTNREG_OPTIONS_MESA(X) \
  X(ridge, Real, 1.0, false, ">= 0", "Mesa's ridge lambda of H = sum k k' + lambda I")

/// LocalFitOptions (attnreg/solve/local_fit.hpp): NadarayaWatson / LocalLinear / LocalPolynomial.
#define ATTNREG_OPTIONS_LOCAL_FIT(X)                                                            \
  X(degree, Int, 1, false, "0|1|2|3", "Local polynomial degree (0 NW, 1 local linear)")         \
  X(kernel, Text, "gaussian", false, "a kernel name", "Kernel of the continuous columns")       \
  X(var_types, Text, "", true, "c|u|o per column", "Column types (empty: all continuous)")      \
  X(unordered_kernel, Text, "aitchison_aitken", false, "aitchison_aitken|li_racine",            \
    "Kernel of the unordered categorical columns")                                              \
  X(ordered_kernel, Text, "li_racine", false, "li_racine|wang_van_ryzin",         \
    "Kernel of the ordered categorical columns")                                                \
  X(ridge, Real, 0.0, false, ">= 0", "Ridge on the slopes, scaled by omega")                    \
  X(algorithm, Text, "auto", false, "auto|all_pairs|neighbors", "Kernel-pair algorithm")            \
  X(truncation, Real, 1e-16, false, "[0, 1)", "Gaussian neighbour path's truncation")           \
  X(compute_fitted, Flag, true, false, "", "fit() computes fitted values and leverages")        \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")

/// BinnedFitOptions (attnreg/kernels/binned.hpp).
#define ATTNREG_OPTIONS_BINNED(X)                                                               \
  X(degree, Int, 1, false, "0|1|2|3", "Local polynomial degree")                                \
  X(kernel, Text, "gaussian", false, "a kernel name", "Kernel")                                 \
  X(ridge, Real, 0.0, false, ">= 0", "Ridge on the slopes, scaled by omega")                    \
  X(grid_size, Int, 0, true, ">= 0", "Grid points per column (0: 401 in 1-D, 101 in 2-D)")      \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")

/// BandwidthSelectOptions (attnreg/bandwidth/bandwidth_select.hpp).
#define ATTNREG_OPTIONS_BANDWIDTH(X)                                                            \
  X(degree, Int, 1, false, "0|1", "0 local constant (lc), 1 local linear (ll)")                 \
  X(method, Text, "cv_ls", false, "cv_ls|aic|gcv|rot|dpi", "Bandwidth criterion")               \
  X(kernel, Text, "gaussian", false, "a kernel name", "Kernel of the continuous columns")       \
  X(var_types, Text, "", true, "c|u|o per column", "Column types (empty: all continuous)")      \
  X(unordered_kernel, Text, "aitchison_aitken", false, "aitchison_aitken|li_racine",            \
    "Kernel of the unordered categorical columns")                                              \
  X(ordered_kernel, Text, "li_racine", false, "li_racine|wang_van_ryzin",         \
    "Kernel of the ordered categorical columns")                                                \
  X(ridge, Real, 0.0, false, ">= 0", "Local-linear ridge, scaled by omega")                     \
  X(n_starts, Int, 3, false, ">= 1", "Starting points of the search")                           \
  X(seed, Int, 0, false, ">= 0", "Seed of the random starts")                                   \
  X(grid_size, Int, 30, false, ">= 0", "1-D: points of the objective curve (0: no curve)")      \
  X(exact_curve, Flag, false, false, "", "1-D: the curve from the exact objective")             \
  X(min_neighbors, Int, 0, false, ">= 0", "Smallest number of neighbours per bandwidth")        \
  X(algorithm, Text, "auto", false, "auto|all_pairs|neighbors", "Kernel-pair algorithm")            \
  X(truncation, Real, 1e-16, false, "[0, 1)", "Gaussian neighbour path's truncation")           \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")                  \
  X(approx, Text, "exact", false, "exact|binned", "cv_ls objective: exact or binned")           \
  X(approx_grid_size, Int, 0, true, ">= 0", "Binned objective's grid points per column")

/// RidgeOptions (attnreg/least_squares/least_squares_spectral.hpp); the faces call lambda alpha.
#define ATTNREG_OPTIONS_RIDGE(X)                                                                \
  X(alpha, Real, 1.0, false, ">= 0", "Ridge penalty lambda")                                    \
  X(fit_intercept, Flag, true, false, "", "Fit an unpenalised intercept")                       \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")                  \
  X(weight_type, Text, "analytic", false, "analytic|frequency", "Meaning of the weights")

/// PCROptions (attnreg/least_squares/least_squares_spectral.hpp).
#define ATTNREG_OPTIONS_PCR(X)                                                                  \
  X(rank, Int, -1, true, "-1 or >= 0", "Principal components kept (-1 / None: all)")            \
  X(fit_intercept, Flag, true, false, "", "Fit an unpenalised intercept")                       \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")                  \
  X(weight_type, Text, "analytic", false, "analytic|frequency", "Meaning of the weights")

/// AttentionRegressionOptions (attnreg/least_squares/least_squares_softmax.hpp).
#define ATTNREG_OPTIONS_ATTENTION_REGRESSION(X)                                                 \
  X(rank, Int, 2, false, ">= 1", "Rank of the embedding W")                                     \
  X(fit_intercept, Flag, true, false, "", "Centre the responses")                               \
  X(standardize, Flag, true, false, "", "Standardise the columns of X")                         \
  X(n_starts, Int, 4, false, ">= 1", "Random starts of the optimiser")                          \
  X(seed, Int, 0, false, ">= 0", "Seed of the random starts")                                   \
  X(max_iter, Int, 300, false, ">= 1", "L-BFGS iterations per start")                           \
  X(tol, Real, 1e-6, false, "> 0", "Gradient tolerance")                                        \
  X(init_scale, Real, 1.0, false, "> 0", "Scale of the random starting embeddings")             \
  X(n_threads, Int, 0, true, ">= 0", "OpenMP threads (0: the OpenMP default)")

/// Inference options, shared by every estimator with intervals, clusters or resampling. The row
/// name is the Python spelling; each face's spelling is in ATTNREG_FACE_SPELLINGS below. A row
/// whose default is not fixed across functions (the seed, the number of resamples) is none_ok
/// with a kNone default: each function documents its own, and the drift tests check the names.
#define ATTNREG_OPTIONS_INFERENCE(X)                                                            \
  X(cov_type, Text, "HC3", false, "nonrobust|HC0|HC1|HC2|HC3|CR1|CR2|CR3|nn",                   \
    "Covariance type of the pointwise kernel intervals (OLS/Ridge: nonrobust)")                 \
  X(level, Real, 0.95, false, "(0, 1)", "Interval level, a fraction: 0.95 for a 95% interval")  \
  X(groups, Text, "", true, "one id per training row", "Cluster ids (None / NULL: no clusters)") \
  X(random_state, Real, kNone, true, "int, None or a numpy Generator", "Seed of the resampling") \
  X(replications, Real, kNone, true, ">= 1", "Number of resamples (bootstrap or Monte Carlo)")  \
  X(bootstrap, Text, "rademacher", false, "rademacher|webb|mammen",                             \
    "Wild-bootstrap weight scheme")

/// The faces' spellings of the rows whose names differ by face: S(family, name, python, r).
/// Rows not listed here are spelled as their name in both faces.
#define ATTNREG_FACE_SPELLINGS(S)                        \
  S(inference, cov_type, "cov_type", "vcov")             \
  S(inference, level, "level", "level")                  \
  S(inference, groups, "groups", "cluster")              \
  S(inference, random_state, "random_state", "seed")     \
  S(inference, replications, "replications", "R")        \
  S(inference, bootstrap, "bootstrap", "bootstrap")      \
  S(ridge, alpha, "alpha", "lambda")

/// Every family: X(family, table).
#define ATTNREG_OPTION_FAMILIES(F)                            \
  F(attention, ATTNREG_OPTIONS_ATTENTION)                     \
  F(mesa, ATTNREG_OPTIONS_MESA)                               \
  F(local_fit, ATTNREG_OPTIONS_LOCAL_FIT)                     \
  F(binned, ATTNREG_OPTIONS_BINNED)                           \
  F(bandwidth, ATTNREG_OPTIONS_BANDWIDTH)                     \
  F(ridge, ATTNREG_OPTIONS_RIDGE)                             \
  F(pcr, ATTNREG_OPTIONS_PCR)                                 \
  F(attention_regression, ATTNREG_OPTIONS_ATTENTION_REGRESSION) \
  F(inference, ATTNREG_OPTIONS_INFERENCE)

// Typed constants: spec::attention::block_q == 64, spec::local_fit::kernel == "gaussian", ...
#define ATTNREG_SPEC_CONSTANT(name, type, value, none_ok, allowed, doc) \
  inline constexpr type name = value;
#define ATTNREG_SPEC_FAMILY(family, table) \
  namespace family {                       \
  table(ATTNREG_SPEC_CONSTANT)             \
  }
ATTNREG_OPTION_FAMILIES(ATTNREG_SPEC_FAMILY)
#undef ATTNREG_SPEC_FAMILY
#undef ATTNREG_SPEC_CONSTANT

}  // namespace spec

/// One row of the option tables, at run time.
struct OptionSpec {
  std::string family;   ///< e.g. "attention"
  std::string name;     ///< the keyword, e.g. "block_q"
  std::string type;     ///< "int", "double", "bool" or "string"
  bool none_ok = false; ///< the faces may spell the default None / NULL
  bool is_none = false; ///< the default is "not given" (a double default of kNone)
  double number = 0.0;  ///< the default of an int or double option
  bool flag = false;    ///< the default of a bool option
  std::string text;     ///< the default of a string option
  std::string allowed;  ///< allowed values, e.g. "[1, 65536]" or "dot|rbf"
  std::string doc;      ///< one line
  std::string python;   ///< the Python face's keyword (the name unless ATTNREG_FACE_SPELLINGS)
  std::string r;        ///< the R face's argument (the name unless ATTNREG_FACE_SPELLINGS)
};

/// Every row of every family, in table order.
std::vector<OptionSpec> option_spec();

}  // namespace attnreg
