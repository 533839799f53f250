#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/base/constants.hpp"

#include <cmath>
#include <limits>

namespace attnreg {
namespace criteria {
namespace {
}  // namespace

double cv_ls(double rss_loo, double weight_sum) { return rss_loo / weight_sum; }

double gcv(const FitSums& s) {
  const double den = s.n - s.trace_L;
  if (!(den > 0.0)) return kInf;
  const double sc = s.n / s.weight_sum;  // GCV = (rss / W) / (1 - tr / n)^2
  return sc * s.n * s.rss / (den * den);
}

double aicc(const FitSums& s) {
  const double den = 1.0 - (s.trace_L + 2.0) / s.n;
  if (!(den > 0.0) || !(s.rss > 0.0)) return kInf;
  return std::log(s.rss / s.weight_sum) + (1.0 + s.trace_L / s.n) / den;
}

double residual_df(double n, double trace_L, double trace_LtL) {
  return n - 2 * trace_L + trace_LtL;
}

double loo_mean_square(const arma::mat& y, const arma::mat& loo, const arma::vec& w) {
  double num = 0.0, den = 0.0;
  for (arma::uword i = 0; i < y.n_rows; ++i) {
    const double wi = w.is_empty() ? 1.0 : w(i);
    if (!(wi > 0.0)) continue;
    double r2 = 0.0;
    for (arma::uword c = 0; c < y.n_cols; ++c) {
      const double r = y(i, c) - loo(i, c);
      r2 += r * r;
    }
    num += wi * r2;
    den += wi;
  }
  return num / (den * static_cast<double>(y.n_cols));
}

double cv_ls(double rss_loo, double weight_sum, const arma::vec& drss, arma::vec& grad) {
  grad = drss / weight_sum;
  return cv_ls(rss_loo, weight_sum);
}

double gcv(const FitSums& s, const arma::vec& drss, const arma::vec& dtr, arma::vec& grad) {
  const double f = gcv(s);
  grad.reset();
  if (f == kInf) return f;
  const double den = s.n - s.trace_L, sc = s.n / s.weight_sum;
  grad = (sc * s.n / (den * den)) * drss + (sc * 2.0 * s.n * s.rss / (den * den * den)) * dtr;
  return f;
}

double aicc(const FitSums& s, const arma::vec& drss, const arma::vec& dtr, arma::vec& grad) {
  const double f = aicc(s);
  grad.reset();
  if (f == kInf) return f;
  const double nd = s.n, tr = s.trace_L, den = 1.0 - (tr + 2.0) / nd;
  const double df_dtr = (den / nd + (1.0 + tr / nd) / nd) / (den * den);
  grad = drss / s.rss + df_dtr * dtr;
  return f;
}

}  // namespace criteria
}  // namespace attnreg
