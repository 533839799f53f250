// attnreg: bootstrap confidence bands for linear smoothers (wild and pairs bootstrap); see
// core/include/attnreg/inference/diagnostics.hpp.
#include "attnreg/inference/diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <vector>

#include "attnreg/base/constants.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/names.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/detail/diagnostics_checks.hpp"

namespace attnreg {

using detail::check_level;
using detail::one_continuous;
using detail::output_column;

BootstrapType bootstrap_type_from_name(const std::string& name, const std::string& arg) {
  using B = BootstrapType;
  return detail::option_from_name<B>(
      name,
      {{"rademacher", B::wild_rademacher}, {"wild", B::wild_rademacher},
       {"mammen", B::wild_mammen}, {"pairs", B::pairs}},
      arg, "bootstrap", "'rademacher' (wild), 'mammen' (wild) or 'pairs'");
}

arma::mat wild_multipliers(bool mammen, arma::uword n, arma::uword B, std::mt19937_64& rng) {
  arma::mat V(n, B);
  if (!mammen) {
    std::bernoulli_distribution coin(0.5);
    for (arma::uword b = 0; b < B; ++b)
      for (arma::uword i = 0; i < n; ++i) V(i, b) = coin(rng) ? 1.0 : -1.0;
  } else {
    const double s5 = std::sqrt(5.0);
    std::bernoulli_distribution coin((s5 + 1) / (2 * s5));
    for (arma::uword b = 0; b < B; ++b)
      for (arma::uword i = 0; i < n; ++i) V(i, b) = coin(rng) ? -(s5 - 1) / 2 : (s5 + 1) / 2;
  }
  return V;
}

BootstrapBands bootstrap_bands(const LocalPolynomial& model, const arma::mat& X_eval,
                               const BootstrapOptions& opt, arma::uword output) {
  check::require(opt.replications >= 19, "replications", "must be at least 19 (e.g. 999)");
  check_level(opt.level);
  check::require(!(opt.bias_corrected && opt.type == BootstrapType::pairs), "bias_corrected",
                 "is available for the wild bootstrap only");
  check::require(opt.kind != VarianceKind::cr1, "kind", "cr1 is not supported for bootstrap bands");
  // One task per call: the analytic fit and se (muted inner reports) at 0, then the draws.
  ProgressScope progress(static_cast<std::size_t>(opt.replications),
                         opt.type == BootstrapType::pairs ? "pairs bootstrap" : "wild bootstrap");
  PointwiseOptions po;
  po.kind = opt.kind;
  po.level = opt.level;
  const bool uni = one_continuous(model);
  check::require(!opt.bias_corrected || uni, "bias_corrected",
                 "needs one continuous regressor (the bias estimate is one-dimensional)");
  const PointwiseDiagnostics d = pointwise_diagnostics(model, X_eval, po, output);
  BootstrapBands r;
  r.center = opt.bias_corrected ? d.fit_bc : d.fit;
  r.se = opt.bias_corrected ? d.se_bc : d.se;
  const arma::uword m = X_eval.n_rows, B = static_cast<arma::uword>(opt.replications);
  const arma::mat& X = model.training_x();
  const arma::vec y = output_column(model.training_y(), output, "bootstrap");
  const arma::uword n = X.n_rows;
  std::mt19937_64 rng(opt.seed);
  r.draws.set_size(m, B);
  InterruptGuard guard;
  if (opt.type == BootstrapType::pairs) {
    std::uniform_int_distribution<arma::uword> pick(0, n - 1);
    const arma::vec& sw = model.sample_weight();
    LocalFitOptions fo = model.options();
    fo.compute_fitted = false;
    arma::uvec idx(n);
    for (arma::uword b = 0; b < B; ++b) {
      if (guard.poll()) throw Interrupted();
      for (arma::uword i = 0; i < n; ++i) idx(i) = pick(rng);
      LocalPolynomial mb(fo);
      try {
        mb.fit(X.rows(idx), arma::mat(y(idx)), model.bandwidth(),
               sw.is_empty() ? arma::vec() : arma::vec(sw(idx)));
        r.draws.col(b) = mb.predict(X_eval).col(0);
      } catch (const std::exception& e) {
        throw NumericalError(std::string("type: a pairs-bootstrap resample could not be fitted (") +
                             e.what() + "); use the wild bootstrap or a larger bandwidth");
      }
      progress.step(b + 1);
    }
  } else {
    arma::mat W = model.attention_weights(X_eval);
    if (opt.bias_corrected) W -= bias_weights(model, X_eval, -1, 0);
    const arma::vec e = output_column(model.residuals(), output, "bootstrap");
    const arma::vec base = W * output_column(model.fitted(), output, "bootstrap");
    arma::mat V = wild_multipliers(opt.type == BootstrapType::wild_mammen, n, B, rng);
    V.each_col() %= e;
    // m*(x) = l(x)'(m_hat + e v): the centre of the resampling world is l(x)' m_hat.
    r.draws = W * V;
    r.draws.each_col() += base;
    // Centre on the resampling world's truth: shift so that m* - base estimates m - E m.
    r.draws.each_col() += r.center - base;
    progress.step(B);
  }
  const double a = 1 - opt.level;
  r.low.set_size(m);
  r.high.set_size(m);
  arma::vec tmax(B, arma::fill::zeros);
  for (arma::uword j = 0; j < m; ++j) {
    const arma::rowvec dj = r.draws.row(j) - r.center(j);
    const arma::vec q = arma::quantile(dj.t(), arma::vec{a / 2, 1 - a / 2});
    r.low(j) = r.center(j) - q(1);
    r.high(j) = r.center(j) - q(0);
    if (r.se(j) > 0)
      for (arma::uword b = 0; b < B; ++b) tmax(b) = std::max(tmax(b), std::abs(dj(b)) / r.se(j));
  }
  r.critical_value = arma::as_scalar(arma::quantile(tmax, arma::vec{opt.level}));
  r.uniform_low = r.center - r.critical_value * r.se;
  r.uniform_high = r.center + r.critical_value * r.se;
  return r;
}

}  // namespace attnreg
