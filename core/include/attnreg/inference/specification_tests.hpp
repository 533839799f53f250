// attnreg: bootstrap significance tests of regressors and a consistent specification test of a
// parametric (OLS) model against the kernel alternative.
//
// Significance (Racine 1997; Racine, Hart & Li 2006, Econometric Reviews 25, eqs. 2-3; R np's
// npsigtest). H0: m(x) does not depend on column j. Statistics, from the fitted kernel model:
//   continuous j:   lambda_j = (1/n) sum_i (d m(x_i) / d x_j)^2,
//                   the local-linear slope (degree >= 1) or the derivative of the Nadaraya-Watson
//                   ratio (degree 0): d m / d x_j = sum_i (d w_i/d x_j)(y_i - m(x)) / sum_i w_i,
//                   d w_i / d x_j = -w_i k'(u_ij) / (k(u_ij) h_j),  u_ij = (x_ij - x_j) / h_j;
//   categorical j:  lambda_j = (1/n) sum_i sum_{l >= 1} (m(x_i with x_j = l) - m(x_i with x_j = 0))^2
//                   over the levels 0..c-1 of column j (RHL 2006 eq. 3).
// Every statistic is a quadratic form in y, because m, its slope and its derivative are linear
// in y; the bootstrap responses are therefore handled as extra output columns of the same fit
// (one pass over the pairs for a chunk of replications, no refits).
// Bootstrap under H0 (RHL's Type I: the bandwidths stay fixed): the null model is the kernel
// regression of y on the other columns with their bandwidths (the mean when j is the only
// column); its residuals e0 are rescaled by sqrt(n / df0), df0 = n - 2 tr L0 + tr L0'L0 (the
// smoother's residuals are shrunk: E RSS = sigma^2 df0), and y*_i = m0(x_i) + e*_i with e* drawn
// iid from the centred rescaled residuals ("iid", np's default) or wild, e*_i = e0_i v_i
// ("rademacher", "mammen": robust to heteroskedasticity; the default here).
// P-value: (1 + #{lambda*_b >= lambda}) / (B + 1).
//
// Specification (Hsiao, Li & Racine 2007, J. Econometrics 140, §2; Zheng 1996; R np's
// npcmstest). H0: E[y | x] = z(x)'beta for the parametric design Z (n x p, e.g. intercept and
// the regressors). With the OLS residuals u and the product kernel K_ij = K_h(x_i, x_j) over the
// kernel regressors X (mixed continuous/categorical),
//   I_n = 1/(n(n-1)) sum_{i != j} u_i u_j K_ij,
//   sigma^2 = 2 h_1..h_q / (n(n-1)) sum_{i != j} u_i^2 u_j^2 K_ij^2,
//   J_n = n (h_1..h_q)^{1/2} I_n / sigma = sqrt(n / (n-1)) S_1 / sqrt(2 S_2)
// with S_1 = sum_{i != j} u_i u_j K_ij and S_2 = sum_{i != j} u_i^2 u_j^2 K_ij^2 (the bandwidth
// products and kernel constants cancel). J_n is N(0, 1) under H0 (HLR Thm 2.1) and large under
// the alternative: the test is one-sided. The bootstrap p-value (HLR §2.2) uses the wild
// bootstrap y* = Z beta + u v, whose OLS residuals are u* = M (u v), M = I - Z Z^+ (no refit:
// M is applied through the SVD of Z), and recomputes J_n. Bandwidths: given, or cv_ls of the
// kernel regression of y on X (degree `degree`), as np's npcmstest does through npregbw; np
// then holds them fixed in the bootstrap, which ignores the selection's dependence on y; here
// they are selected again on each y* by default in small samples (SpecificationOptions::reselect).
// np scales I_n and sigma^2 by 1/n^2 instead of 1/(n(n-1)): its J_n is this one times
// sqrt((n-1)/n) (bootstrap p-values are the same).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/kernels/kernel.hpp"
#include "attnreg/solve/local_fit.hpp"

namespace attnreg {

/// How bootstrap residuals are drawn under the null.
enum class NullBootstrap { iid = 0, wild_rademacher, wild_mammen };

/// "iid", "rademacher" / "wild", "mammen" (case-insensitive). Throws InvalidArgument naming
/// `arg`.
NullBootstrap null_bootstrap_from_name(const std::string& name,
                                       const std::string& arg = "bootstrap");
const char* null_bootstrap_name(NullBootstrap b);

/// B columns of bootstrap errors from residuals e (n): iid draws with replacement from
/// e - mean(e), or wild e_i v_i with Rademacher or Mammen multipliers (wild_multipliers).
arma::mat null_bootstrap_errors(const arma::vec& e, NullBootstrap type, arma::uword B,
                                std::mt19937_64& rng);

struct SignificanceOptions {
  NullBootstrap bootstrap = NullBootstrap::wild_mammen;
  int replications = 399;
  unsigned long long seed = 1;
  std::vector<std::size_t> columns;  ///< 0-based columns to test; empty = every column
  int chunk = 64;                    ///< replications evaluated per pass over the pairs
};

struct SignificanceTest {
  std::vector<std::size_t> columns;  ///< tested columns (0-based)
  arma::vec statistic;               ///< lambda_j
  arma::vec p_value;                 ///< bootstrap p-value per column
  arma::mat draws;                   ///< B x (number of columns): lambda*_b
  arma::vec null_scale;              ///< sqrt(n / df0) applied to the null residuals
  int replications = 0;
  std::string bootstrap;
};

/// lambda_j for each column of Y (n x k responses on the model's X with its bandwidths, degree,
/// kernels and sample weights). Throws NumericalError when a fit or derivative is undefined.
arma::rowvec significance_statistics(const LocalPolynomial& model, std::size_t column,
                                     const arma::mat& Y);

/// The bootstrap significance test of each requested column of a fitted model (see the file
/// comment). Reproducible with opt.seed; interruptible between chunks.
SignificanceTest significance_test(const LocalPolynomial& model, const SignificanceOptions& opt,
                                   arma::uword output = 0);

/// Largest n for which specification_test re-selects bandwidths in each draw by default.
constexpr std::size_t kReselectMaxN = 500;

struct SpecificationOptions {
  NullBootstrap bootstrap = NullBootstrap::wild_mammen;
  int replications = 399;
  unsigned long long seed = 1;
  /// Kernels and column types of X (kernel_pairs.hpp); its threads run the statistic, the
  /// bootstrap and the bandwidth search.
  KernelSpec kernel;
  arma::vec bandwidth;    ///< empty = cv_ls of y on X with `degree`
  int degree = 0;         ///< of the cv_ls bandwidth search (np's npregbw default: lc)
  /// Bootstrap with selected bandwidths: 1 = select them again on each y* (the bootstrap then
  /// replicates the whole procedure; without it the data-dependent bandwidth makes the test
  /// oversized in small samples: 0.09-0.10 instead of 0.05 at n = 100, bench/results/
  /// specification_tests.md), 0 = hold them fixed (np's npcmstest), -1 = automatic:
  /// re-select when n <= kReselectMaxN. Ignored when `bandwidth` is given.
  int reselect = -1;
  int chunk = 64;
};

struct SpecificationTest {
  double statistic = 0;           ///< J_n
  double p_value = 0;             ///< bootstrap
  double asymptotic_p_value = 0;  ///< 1 - Phi(J_n)
  double I_n = 0;                 ///< the unstandardised statistic (density-scaled kernel K_h)
  arma::vec bandwidth;
  std::string bandwidth_method;   ///< "given" or "cv_ls"
  arma::vec coefficients;         ///< OLS beta (minimum-norm when Z is rank-deficient)
  arma::vec residuals;            ///< OLS residuals u
  int rank = 0;                   ///< numerical rank of Z
  arma::vec draws;                ///< J*_b
  bool reselected = false;        ///< bandwidths re-selected on each bootstrap sample
  int replications = 0;
  std::string bootstrap;
};

/// J_n (and S_1, S_2) for each column of U (n x k residual vectors) with the kernel of X.
/// Returns a 3 x k matrix: rows J_n, S_1, S_2.
arma::mat specification_statistics(const KernelSpace& space, const arma::mat& U, int n_threads);

/// The Hsiao-Li-Racine specification test of OLS on design Z against the kernel regression on
/// X (see the file comment). Z n x p (include the intercept column yourself), y n, X n x q.
SpecificationTest specification_test(const arma::mat& Z, const arma::vec& y, const arma::mat& X,
                                     const SpecificationOptions& opt = {});

/// The default parametric design for X: an intercept, the continuous columns, and dummies for
/// every level but the first of each categorical column.
arma::mat default_design(const arma::mat& X, const std::string& var_types);

}  // namespace attnreg
