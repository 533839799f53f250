// attnreg: the Monte Carlo lab (empirical bias, variance and MSE of linear smoothers by
// simulation), written once for both faces.
//
// A study is: one design X (n x d) and evaluation points drawn and held fixed; the face evaluates
// the regression function m at both (it is the user's R or Python function); R responses
// m(X) + noise * N(0, 1) are drawn; each estimator is a linear smoother with weights W at the
// evaluation points, so all replications are summarised at once (monte_carlo_summary). An
// oracle bandwidth is the grid bandwidth with the smallest empirical (integrated) MSE.
//
// Random numbers: every draw comes from std::mt19937_64 seeded with
// std::seed_seq{seed mod 2^32, seed div 2^32, stream}, both of which the C++ standard specifies
// exactly, and is turned into numbers by fixed formulas (below), so a seed gives the same study
// on every platform and in both languages. Study k (0 for a single study; the sample size index
// of a rate study) uses stream 2k for the design and evaluation points and stream 2k + 1 for
// the noise.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/kernels/kernel.hpp"

namespace attnreg {

enum class MonteCarloDesign { uniform = 0, cone };

/// "uniform" or "cone"; throws InvalidArgument naming `arg`.
MonteCarloDesign monte_carlo_design_from_name(const std::string& name,
                                              const std::string& arg = "design");

/// The engine of one stream of a seed (see the file comment).
std::mt19937_64 monte_carlo_engine(std::uint64_t seed, std::uint32_t stream);

/// A uniform draw on (0, 1): (top 53 bits of one engine output + 1/2) / 2^53.
double monte_carlo_uniform(std::mt19937_64& eng);
/// A standard normal draw: Box-Muller, sqrt(-2 log u1) cos(2 pi u2), from two uniform draws.
double monte_carlo_normal(std::mt19937_64& eng);

/// An (n x d) design drawn row by row (point by point). Uniform: U(0, 1)^d. Cone (Zuo et al.
/// 2025, arXiv:2510.01450, App. E.1 eq. 51 for one segment with the all-positive sign
/// pattern): X_j = |Z_j| for j <= cone_dims (0 = d) and X_j = Z_j otherwise, Z ~ N(0, I_d).
arma::mat simulate_design(arma::uword n, arma::uword d, MonteCarloDesign design,
                          arma::uword cone_dims, std::mt19937_64& eng);

struct MonteCarloSample {
  arma::mat X;       ///< n x d design
  arma::mat X_eval;  ///< evaluation points (empty when none were asked for)
};

/// The design and evaluation points of study `study` (stream 2 study): X first, then the
/// evaluation points: n_eval < 0 is the default (101 points evenly spaced on [0, 1] for a
/// one-dimensional uniform design, else 100 design draws), 0 none, k > 0 k design draws.
MonteCarloSample monte_carlo_sample(arma::uword n, arma::uword d, MonteCarloDesign design,
                                    arma::uword cone_dims, long n_eval, std::uint64_t seed,
                                    std::uint32_t study = 0);

/// Responses m_train + noise * N(0, 1), n x replications, drawn column by column (replication
/// by replication) from stream 2 study + 1.
arma::mat monte_carlo_responses(const arma::vec& m_train, double noise, arma::uword replications,
                                std::uint64_t seed, std::uint32_t study = 0);

/// The default oracle grid: s n^(-1/(d+4)) times 14 log-spaced factors from 0.25 to 2.5 (s = 0.3
/// for the uniform design on [0, 1]^d, 1 for the cone's unit-variance Gaussian).
arma::vec monte_carlo_default_grid(arma::uword n, arma::uword d, MonteCarloDesign design);

struct MonteCarloOptions {
  /// "nw" (also "lc": local constant), "ll" (local linear), "ols", "ridge".
  std::vector<std::string> estimators{"nw", "ll", "ols", "ridge"};
  double bandwidth = 0;           ///< > 0: this bandwidth in every column; 0: the oracle
  arma::vec bandwidth_grid;       ///< the oracle's grid (positive; required when bandwidth = 0)
  double ridge_alpha = 1.0;       ///< penalty of "ridge" (the intercept is not penalised)
  Kernel kernel{KernelType::gaussian};
  /// The oracle minimises the mean MSE over the first `criterion_points` evaluation points
  /// (0 = all: the integrated MSE).
  arma::uword criterion_points = 0;
  int n_threads = 0;
};

struct MonteCarloEstimate {
  std::string estimator;  ///< as given in MonteCarloOptions::estimators
  double bandwidth = 0;   ///< the bandwidth used (NaN for ols and ridge)
  MonteCarloSummary summary;
};

/// One summary per estimator, in the order given. A grid bandwidth for which some evaluation
/// point has no fit (NumericalError) is skipped; when every one is, NumericalError. Reports
/// one progress step per fit and stops on Ctrl-C (Interrupted).
std::vector<MonteCarloEstimate> monte_carlo_estimates(const arma::mat& X, const arma::mat& X_eval,
                                                      const arma::mat& Y_sim,
                                                      const arma::vec& truth,
                                                      const MonteCarloOptions& opt);

}  // namespace attnreg
