// attnreg: the Monte Carlo lab (see monte_carlo.hpp).
#include "attnreg/inference/monte_carlo.hpp"

#include <cctype>
#include <cmath>
#include <limits>

#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"
#include "attnreg/least_squares/least_squares.hpp"
#include "attnreg/least_squares/least_squares_spectral.hpp"
#include "attnreg/solve/local_fit.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

MonteCarloDesign monte_carlo_design_from_name(const std::string& name, const std::string& arg) {
  return detail::option_from_name<MonteCarloDesign>(
      name, {{"uniform", MonteCarloDesign::uniform}, {"cone", MonteCarloDesign::cone}}, arg,
      "design", "'uniform' or 'cone'");
}

std::mt19937_64 monte_carlo_engine(std::uint64_t seed, std::uint32_t stream) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed & 0xffffffffu),
                    static_cast<std::uint32_t>(seed >> 32), stream};
  return std::mt19937_64(seq);
}

double monte_carlo_uniform(std::mt19937_64& eng) {
  return (static_cast<double>(eng() >> 11) + 0.5) * 0x1.0p-53;
}

double monte_carlo_normal(std::mt19937_64& eng) {
  const double u1 = monte_carlo_uniform(eng);
  const double u2 = monte_carlo_uniform(eng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
}

arma::mat simulate_design(arma::uword n, arma::uword d, MonteCarloDesign design,
                          arma::uword cone_dims, std::mt19937_64& eng) {
  check::require(d >= 1, "d", "must be at least 1");
  const arma::uword m = cone_dims == 0 ? d : cone_dims;
  check::require(design != MonteCarloDesign::cone || m <= d, "cone_dims",
                 "must be between 1 and d = " + std::to_string(d) + ", got " +
                     std::to_string(cone_dims));
  arma::mat X(n, d);
  for (arma::uword i = 0; i < n; ++i) {
    for (arma::uword j = 0; j < d; ++j) {
      if (design == MonteCarloDesign::uniform) {
        X(i, j) = monte_carlo_uniform(eng);
      } else {
        const double z = monte_carlo_normal(eng);
        X(i, j) = j < m ? std::fabs(z) : z;
      }
    }
  }
  return X;
}

MonteCarloSample monte_carlo_sample(arma::uword n, arma::uword d, MonteCarloDesign design,
                                    arma::uword cone_dims, long n_eval, std::uint64_t seed,
                                    std::uint32_t study) {
  check::require(n >= 3, "n", "must be at least 3, got " + std::to_string(n));
  std::mt19937_64 eng = monte_carlo_engine(seed, 2 * study);
  MonteCarloSample s;
  s.X = simulate_design(n, d, design, cone_dims, eng);
  if (n_eval < 0) {
    if (design == MonteCarloDesign::uniform && d == 1) {
      s.X_eval = arma::linspace<arma::vec>(0.0, 1.0, 101);
    } else {
      s.X_eval = simulate_design(100, d, design, cone_dims, eng);
    }
  } else if (n_eval > 0) {
    s.X_eval = simulate_design(static_cast<arma::uword>(n_eval), d, design, cone_dims, eng);
  }
  return s;
}

arma::mat monte_carlo_responses(const arma::vec& m_train, double noise, arma::uword replications,
                                std::uint64_t seed, std::uint32_t study) {
  check::require(replications >= 2, "replications",
                 "needs at least 2, got " + std::to_string(replications));
  check::require(std::isfinite(noise) && noise >= 0, "noise",
                 "must be a finite standard deviation >= 0");
  check::require(m_train.is_finite(), "func",
                 "returned NaN or Inf at a design point; the regression function must be finite");
  std::mt19937_64 eng = monte_carlo_engine(seed, 2 * study + 1);
  const arma::uword n = m_train.n_elem;
  arma::mat Y(n, replications);
  for (arma::uword r = 0; r < replications; ++r)
    for (arma::uword i = 0; i < n; ++i) Y(i, r) = m_train(i) + noise * monte_carlo_normal(eng);
  return Y;
}

arma::vec monte_carlo_default_grid(arma::uword n, arma::uword d, MonteCarloDesign design) {
  const double scale = design == MonteCarloDesign::cone ? 1.0 : 0.3;
  const double base =
      scale * std::pow(static_cast<double>(n), -1.0 / (static_cast<double>(d) + 4.0));
  return base * arma::exp(arma::linspace<arma::vec>(std::log(0.25), std::log(2.5), 14));
}

namespace {

enum class McEstimator { nw, ll, ols, ridge };

McEstimator estimator_from_name(const std::string& name) {
  using E = McEstimator;
  return detail::option_from_name<E>(
      name, {{"nw", E::nw}, {"lc", E::nw}, {"ll", E::ll}, {"ols", E::ols}, {"ridge", E::ridge}},
      "estimators", "estimator", "'nw' (or 'lc'), 'll', 'ols', 'ridge'");
}

// Weights at the evaluation points (m x n) of one estimator; h in every column (kernels).
arma::mat smoother_weights(McEstimator e, const arma::mat& X, const arma::mat& X_eval, double h,
                           const MonteCarloOptions& opt) {
  const arma::mat y0(X.n_rows, 1, arma::fill::zeros);
  if (e == McEstimator::ols) {
    OLSOptions o;
    o.n_threads = opt.n_threads;
    OLS ols(o);
    ols.fit(X, y0);
    return ols.attention_weights(X_eval);
  }
  if (e == McEstimator::ridge) {
    RidgeOptions o;
    o.lambda = opt.ridge_alpha;
    o.n_threads = opt.n_threads;
    Ridge ridge(o);
    ridge.fit(X, y0);
    return ridge.attention_weights(X_eval);
  }
  LocalFitOptions o;
  o.degree = e == McEstimator::nw ? 0 : 1;
  o.kernel.kernel = opt.kernel;
  o.kernel.n_threads = opt.n_threads;
  o.compute_fitted = false;
  LocalPolynomial lp(o);
  lp.fit(X, y0, arma::vec(X.n_cols, arma::fill::value(h)));
  return lp.attention_weights(X_eval);
}

double criterion(const MonteCarloSummary& s, arma::uword k) {
  if (k == 0 || k >= s.mse.n_elem) return s.integrated_mse;
  return arma::mean(s.mse.head(k));
}

}  // namespace

std::vector<MonteCarloEstimate> monte_carlo_estimates(const arma::mat& X, const arma::mat& X_eval,
                                                      const arma::mat& Y_sim,
                                                      const arma::vec& truth,
                                                      const MonteCarloOptions& opt) {
  check::require(X.n_rows >= 3 && X.is_finite(), "X",
                 "needs at least 3 finite rows, got " + std::to_string(X.n_rows));
  check::require(X_eval.n_rows >= 1 && X_eval.n_cols == X.n_cols && X_eval.is_finite(),
                 "eval_points",
                 "need finite rows with one column per regressor (" + std::to_string(X.n_cols) +
                     ")");
  check::require(truth.n_elem == X_eval.n_rows && truth.is_finite(), "func",
                 "must return one finite value per evaluation point");
  check::require(!opt.estimators.empty(), "estimators", "give at least one estimator");
  const bool oracle = !(opt.bandwidth > 0);
  check::require(oracle ? opt.bandwidth == 0 : std::isfinite(opt.bandwidth), "bandwidth",
                 "must be 'oracle' or one finite number > 0");
  check::require(!oracle || (opt.bandwidth_grid.n_elem >= 1 && opt.bandwidth_grid.is_finite() &&
                             opt.bandwidth_grid.min() > 0),
                 "bandwidth_grid", "needs at least one finite bandwidth > 0");
  check::require(std::isfinite(opt.ridge_alpha) && opt.ridge_alpha >= 0, "ridge_alpha",
                 "must be a finite number >= 0");
  std::vector<McEstimator> kinds;
  std::size_t total = 0;
  for (const std::string& name : opt.estimators) {
    kinds.push_back(estimator_from_name(name));
    const bool kernel = kinds.back() == McEstimator::nw || kinds.back() == McEstimator::ll;
    total += kernel && oracle ? opt.bandwidth_grid.n_elem : 1;
  }
  ProgressScope progress(total, "monte carlo");
  InterruptGuard guard;
  std::size_t done = 0;
  auto step = [&]() {
    progress.step(++done);
    if (guard.poll()) throw Interrupted();
  };
  std::vector<MonteCarloEstimate> out;
  for (std::size_t e = 0; e < kinds.size(); ++e) {
    MonteCarloEstimate r;
    r.estimator = opt.estimators[e];
    const McEstimator kind = kinds[e];
    if (kind == McEstimator::ols || kind == McEstimator::ridge) {
      r.bandwidth = std::numeric_limits<double>::quiet_NaN();
      r.summary = monte_carlo_summary(smoother_weights(kind, X, X_eval, 0, opt), Y_sim, truth);
      step();
    } else if (!oracle) {
      r.bandwidth = opt.bandwidth;
      r.summary = monte_carlo_summary(smoother_weights(kind, X, X_eval, opt.bandwidth, opt),
                                      Y_sim, truth);
      step();
    } else {
      bool found = false;
      double best = std::numeric_limits<double>::infinity();
      for (double h : opt.bandwidth_grid) {
        arma::mat W;
        try {
          W = smoother_weights(kind, X, X_eval, h, opt);
        } catch (const NumericalError&) {  // a point without kernel weight: h is too small
          step();
          continue;
        }
        MonteCarloSummary s = monte_carlo_summary(W, Y_sim, truth);
        const double c = criterion(s, opt.criterion_points);
        if (c < best) {
          found = true;
          best = c;
          r.bandwidth = h;
          r.summary = std::move(s);
        }
        step();
      }
      if (!found) {
        throw NumericalError("bandwidth_grid: no bandwidth in the grid gives " + r.estimator +
                             " a fit at every evaluation point; use larger bandwidths");
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace attnreg
