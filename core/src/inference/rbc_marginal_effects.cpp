// attnreg: robust bias-corrected intervals for the derivatives of local polynomial fits; the
// formulas and their sources are in core/include/attnreg/inference/rbc_marginal_effects.hpp.
#include "attnreg/inference/rbc_marginal_effects.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/detail/monomials.hpp"
#include "attnreg/inference/distributions.hpp"
#include "attnreg/inference/nn_variance.hpp"

namespace attnreg {

// A named namespace: the unity build puts several sources in one translation unit.
namespace rbc_gradient_detail {

struct Plan {
  arma::mat Xc;                     // n x dc continuous training columns
  arma::vec h, b;                   // dc bandwidths of the fit and the pilot
  std::vector<std::vector<int>> mon;
  std::size_t kp = 0, kq = 0;
  int p = 0, q = 0, v = 1;
  bool compact = true;              // kernel with compact support
  double truncation = 0;            // Gaussian: weights below truncation x (row maximum) dropped
  VarianceKind kind = VarianceKind::hc3;
};

std::string point_text(const arma::mat& X_eval, arma::uword j) {
  std::ostringstream s;
  s << "evaluation row " << (j + 1) << " x = (";
  for (arma::uword c = 0; c < X_eval.n_cols; ++c) s << (c ? ", " : "") << X_eval(j, c);
  s << ")";
  return s.str();
}

// Weighted least-squares coefficient weights: beta = C y for the design Z (r x k) and kernel
// weights w (r), by thin QR of sqrt(w) Z. False when the design is (numerically) singular.
// The square roots are a plain loop: Armadillo's element-wise sqrt opens an OpenMP parallel
// region on vectors of >= 320 entries, whose idle threads spin between the points.
bool wls_weights(const arma::mat& Z, const arma::vec& w, arma::mat& C) {
  const double wmax = w.max();
  if (!(wmax > 0) || Z.n_rows < Z.n_cols) return false;
  arma::vec sq(w.n_elem);
  for (arma::uword i = 0; i < w.n_elem; ++i) sq(i) = std::sqrt(w(i) / wmax);
  arma::mat Q, R;
  if (!arma::qr_econ(Q, R, Z.each_col() % sq)) return false;
  const arma::vec rd = arma::abs(R.diag());
  if (!(rd.min() > 1e-10 * std::max(rd.max(), 1.0))) return false;
  C = arma::solve(arma::trimatu(R), Q.t());
  C.each_row() %= sq.t();
  return true;
}

// Design of the first k monomials at the training rows idx, in units u = (x_i - x) / scale,
// x the point's continuous coordinates ec.
arma::mat design(const Plan& P, const arma::uvec& idx, const arma::rowvec& ec,
                 const arma::vec& scale, std::size_t k) {
  return detail::monomial_design(P.Xc, idx, ec, scale, P.mon, k);
}

// The local fit of degree p (bandwidth h) and the pilot of degree q (bandwidth b) at one point:
// the window rows idx (a kernel weight in the fit or the pilot above the truncation), their
// designs and coefficient weights (beta = C y(idx)).
struct LocalFits {
  arma::uvec idx;
  arma::mat Zp, Zq, Cp, Cq;
};

LocalFits local_fits(const Plan& P, const arma::rowvec& ec, const arma::rowvec& kh,
                     const arma::rowvec& kb, const std::string& where) {
  LocalFits F;
  const arma::uword n = kh.n_elem;
  double th = 0, tb = 0;
  if (!P.compact && P.truncation > 0) {
    th = P.truncation * kh.max();
    tb = P.truncation * kb.max();
  }
  std::vector<arma::uword> rows;
  rows.reserve(n);
  for (arma::uword i = 0; i < n; ++i)
    if (kh(i) > th || kb(i) > tb) rows.push_back(i);
  F.idx = arma::conv_to<arma::uvec>::from(rows);
  if (F.idx.n_elem < P.kq)
    throw NumericalError("pilot_bandwidth: the pilot local polynomial of degree " +
                         std::to_string(P.q) + " at " + where + " has " +
                         std::to_string(F.idx.n_elem) + " training point(s) in its window, "
                         "fewer than its " + std::to_string(P.kq) + " coefficients; use larger "
                         "bandwidths");
  arma::vec wh(F.idx.n_elem), wb(F.idx.n_elem);
  for (arma::uword t = 0; t < F.idx.n_elem; ++t) {
    wh(t) = kh(F.idx(t)) > th ? kh(F.idx(t)) : 0.0;
    wb(t) = kb(F.idx(t)) > tb ? kb(F.idx(t)) : 0.0;
  }
  F.Zp = design(P, F.idx, ec, P.h, P.kp);
  F.Zq = design(P, F.idx, ec, P.b, P.kq);
  if (!wls_weights(F.Zp, wh, F.Cp))
    throw NumericalError("X: the local polynomial of degree " + std::to_string(P.p) + " at " +
                         where + " is singular (its weighted points do not determine a "
                         "polynomial of that degree); use a larger bandwidth");
  if (!wls_weights(F.Zq, wb, F.Cq))
    throw NumericalError("pilot_bandwidth: the pilot local polynomial of degree " +
                         std::to_string(P.q) + " at " + where + " is singular (its weighted "
                         "points do not determine a polynomial of that degree in every "
                         "continuous direction); use a larger pilot_bandwidth");
  return F;
}

// The conventional (g) and bias-corrected (g - bias weights) weights over the window of the
// coefficient t (a monomial index) scaled by f (v! / h^v for a derivative, 1 for the level).
void target_weights(const Plan& P, const LocalFits& F, std::size_t t, double f, arma::rowvec& g,
                    arma::rowvec& bw, arma::rowvec& gbc) {
  g = F.Cp.row(t) * f;
  // bias weights: moments of g in the pilot's units times the pilot's coefficient weights
  bw.zeros(F.idx.n_elem);
  for (std::size_t s = P.kp; s < P.kq; ++s) bw += arma::dot(g, F.Zq.col(s)) * F.Cq.row(s);
  gbc = g - bw;
}

// HC scale of a squared residual of row with local leverage lev (HC2, HC3), window size nx.
double hc_factor(const Plan& P, double lev, double nx, std::size_t k, const std::string& where) {
  switch (P.kind) {
    case VarianceKind::hc1:
      return nx / std::max(nx - static_cast<double>(k), 1.0);
    case VarianceKind::hc2:
    case VarianceKind::hc3: {
      const double om = 1.0 - lev;
      if (!(om > 1e-12))
        throw NumericalError("cov_type: the local leverage at " + where + " is " +
                             std::to_string(lev) + " (>= 1), so " + variance_kind_name(P.kind) +
                             " is undefined; use a larger bandwidth or HC0/HC1");
      return P.kind == VarianceKind::hc2 ? 1.0 / om : 1.0 / (om * om);
    }
    default:
      return 1.0;
  }
}

// Squared residuals of the fit (r2h) and of the pilot (r2b) at the window rows (header comment).
void local_residuals(const Plan& P, const LocalFits& F, const arma::vec& xw, const arma::vec& yw,
                     const std::string& where, arma::vec& r2h, arma::vec& r2b) {
  if (P.kind == VarianceKind::nn) {
    r2h = nn_residual_variance(xw, yw, kNnMatch);
    r2b = r2h;
    return;
  }
  const arma::vec eh = yw - F.Zp * (F.Cp * yw), eb = yw - F.Zq * (F.Cq * yw);
  r2h = arma::square(eh);
  r2b = arma::square(eb);
  const double nx = static_cast<double>(yw.n_elem);
  if (P.kind == VarianceKind::hc1) {
    r2h *= hc_factor(P, 0, nx, P.kp, where);
    r2b *= hc_factor(P, 0, nx, P.kq, where);
  } else if (P.kind == VarianceKind::hc2 || P.kind == VarianceKind::hc3) {
    const arma::vec lev = arma::sum(F.Zp % F.Cp.t(), 1);  // L_ii = z_i' (coefficient weights)_i
    for (arma::uword i = 0; i < lev.n_elem; ++i) {
      const double f = hc_factor(P, lev(i), nx, P.kp, where);
      r2h(i) *= f;
      r2b(i) *= f;
    }
  }
}

// The model's product kernel at bandwidths bw (its sample weights and categorical kernels, no
// truncation: local_fits applies it to the fit's and the pilot's weights together).
LocalPolynomial kernel_model(const LocalPolynomial& model, const arma::vec& bw) {
  return kernel_weight_model(model, model.training_x(), bw, model.sample_weight(), false);
}

arma::mat kernel_weights(const LocalPolynomial& nw, const arma::mat& X_block, const char* arg) {
  try {
    return nw.attention_weights(X_block);
  } catch (const NumericalError& e) {
    throw NumericalError(std::string(arg) + ": no training point has a kernel weight at an "
                         "evaluation point (" + e.what() + "); use a larger " + arg);
  }
}

void check_options(const LocalPolynomial& model, const arma::mat& X_eval,
                   const RbcGradientOptions& opt, int p, int q, bool levels = false) {
  check::require(std::isfinite(opt.level) && opt.level > 0 && opt.level < 1, "level",
                 "must be in (0, 1) (level is a fraction: 0.95 for a 95% interval)");
  check::require(levels || p >= 1, "degree",
                 "RBC intervals for marginal effects need a local polynomial of degree >= 1 "
                 "(the derivative is a local coefficient); refit with degree 1 (local linear) "
                 "or 2");
  check::require(model.options().ridge == 0, "ridge",
                 "RBC intervals for marginal effects are for the unpenalised local polynomial; "
                 "refit with ridge = 0");
  check::require(levels || (opt.order >= 1 && opt.order <= p), "order",
                 "the derivative order must be between 1 and the degree " + std::to_string(p) +
                     ", got " + std::to_string(opt.order));
  check::require(q > p && q <= 6, "pilot_degree",
                 "must exceed the degree " + std::to_string(p) + " (and be at most 6), got " +
                     std::to_string(q));
  const VarianceKind k = opt.kind;
  check::require(k == VarianceKind::hc0 || k == VarianceKind::hc1 || k == VarianceKind::hc2 ||
                     k == VarianceKind::hc3 || k == VarianceKind::nn,
                 "cov_type",
                 std::string("'") + variance_kind_name(k) + "' is not available for RBC "
                 "marginal effects; use HC0, HC1, HC2, HC3 or nn");
  const std::size_t d = model.space().var_types().size();
  if (k == VarianceKind::nn)
    check::require(d == 1 && model.space().n_continuous() == 1, "cov_type",
                   "'nn' (nearest-neighbour residuals) needs one continuous regressor; use "
                   "HC3 or HC0 with several");
  check::require(X_eval.n_cols == d, "X",
                 "has " + std::to_string(X_eval.n_cols) + " columns but the model was fitted on " +
                     std::to_string(d));
  check::require(X_eval.n_rows >= 1, "X", "needs at least one row");
  check::require(X_eval.is_finite(), "X", "contains NaN or Inf; remove or impute those rows");
  check::require(opt.pilot_bandwidths.is_empty() || opt.pilot_bandwidths.n_elem == d,
                 "pilot_bandwidth",
                 "needs one value per column of X (" + std::to_string(d) + "), got " +
                     std::to_string(opt.pilot_bandwidths.n_elem));
  check::require(opt.pilot_bandwidths.is_finite() &&
                     (opt.pilot_bandwidths.is_empty() || opt.pilot_bandwidths.min() >= 0),
                 "pilot_bandwidth", "must be finite and non-negative");
  for (std::size_t c : model.space().continuous_columns()) {
    check::require(opt.pilot_bandwidths.is_empty() || opt.pilot_bandwidths(c) > 0,
                   "pilot_bandwidth",
                   "entry " + std::to_string(c + 1) + " (a continuous column) must be positive");
    const arma::vec u = arma::unique(model.training_x().col(c));
    check::require(u.n_elem > static_cast<arma::uword>(q), "X",
                   "column " + std::to_string(c + 1) + " has " + std::to_string(u.n_elem) +
                       " distinct value(s); the pilot local polynomial of degree " +
                       std::to_string(q) + " needs at least " + std::to_string(q + 1) +
                       " (fewer distinct values: a lower pilot_degree, or declare the column "
                       "categorical)");
  }
}

// The plan shared by the pointwise, averaged and level-difference results: the continuous
// columns, bandwidths and monomials (degree p of the fit, q of the pilot, target order v).
Plan make_plan(const LocalPolynomial& model, const RbcGradientOptions& opt, int p, int q, int v,
               arma::vec& bfull) {
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  Plan P;
  P.p = p;
  P.q = q;
  P.v = v;
  P.kind = opt.kind;
  P.compact = model.options().kernel.kernel.compact();
  P.truncation = model.options().kernel.truncation;
  bfull = opt.pilot_bandwidths.is_empty() ? arma::vec(model.bandwidth()) : opt.pilot_bandwidths;
  const std::size_t dc = cc.size();
  P.Xc.set_size(model.n_obs(), dc);
  P.h.set_size(dc);
  P.b.set_size(dc);
  for (std::size_t c = 0; c < dc; ++c) {
    P.Xc.col(c) = model.training_x().col(cc[c]);
    P.h(c) = model.bandwidth()(cc[c]);
    P.b(c) = bfull(cc[c]);
  }
  P.mon = detail::monomials(dc, q);
  P.kp = detail::count_up_to(P.mon, p);
  P.kq = P.mon.size();
  return P;
}

// The monomial index and scale v! / h_c^v of the pure derivative of order v in continuous
// column c (v = 0: the level, index 0, scale 1).
std::pair<std::size_t, double> derivative_target(const Plan& P, std::size_t c) {
  std::vector<int> a(P.Xc.n_cols, 0);
  a[c] = P.v;
  const auto t = static_cast<std::size_t>(std::find(P.mon.begin(), P.mon.end(), a) -
                                          P.mon.begin());
  return {t, std::tgamma(static_cast<double>(P.v) + 1.0) / std::pow(P.h(c), P.v)};
}

// Calls fn(j, F) with the local fits at every row j of X_pts, in blocks of evaluation rows so
// that the kernel weights take O(block n) memory (n^2 at every training row otherwise). The
// work per point is serial: no parallel region opens per point.
template <class Fn>
void each_point(const Plan& P, const LocalPolynomial& nwh, const LocalPolynomial& nwb,
                const std::vector<std::size_t>& cc, const arma::mat& X_pts, Fn&& fn) {
  const arma::uword m = X_pts.n_rows, blk = 256;
  arma::rowvec ec(cc.size());
  for (arma::uword r0 = 0; r0 < m; r0 += blk) {
    const arma::mat Xb = X_pts.rows(r0, std::min(m, r0 + blk) - 1);
    const arma::mat Kh = kernel_weights(nwh, Xb, "bandwidth");
    const arma::mat Kb = kernel_weights(nwb, Xb, "pilot_bandwidth");
    for (arma::uword jb = 0; jb < Xb.n_rows; ++jb) {
      const arma::uword j = r0 + jb;
      for (std::size_t c = 0; c < cc.size(); ++c) ec(c) = X_pts(j, cc[c]);
      const std::string where = point_text(X_pts, j);
      const LocalFits F = local_fits(P, ec, Kh.row(jb), Kb.row(jb), where);
      fn(j, F, where);
    }
  }
}

// The own-row residuals (header comment, "Averages and level differences"): for training row i
// the squared residuals of the fit and of the pilot at x_i itself, scaled as at a point; or the
// nearest-neighbour residuals of all rows (nn).
struct OwnResiduals {
  arma::vec r2h, r2b;
};

void own_row_residual(const Plan& P, const LocalFits& F, arma::uword i, const arma::vec& y,
                      const std::string& where, OwnResiduals& R) {
  const arma::uword* pos = std::lower_bound(F.idx.begin(), F.idx.end(), i);
  if (pos == F.idx.end() || *pos != i) return;  // zero weight everywhere (sample weight 0)
  const arma::uword k = static_cast<arma::uword>(pos - F.idx.begin());
  const arma::vec yw = y(F.idx);
  const double eh = y(i) - arma::dot(F.Zp.row(k), F.Cp * yw);
  const double eb = y(i) - arma::dot(F.Zq.row(k), F.Cq * yw);
  const double lev = arma::dot(F.Zp.row(k), F.Cp.col(k));
  const double nx = static_cast<double>(F.idx.n_elem);
  const double fh = hc_factor(P, lev, nx, P.kp, where);
  const double fb = P.kind == VarianceKind::hc1 ? hc_factor(P, lev, nx, P.kq, where) : fh;
  R.r2h(i) = eh * eh * fh;
  R.r2b(i) = eb * eb * fb;
}

OwnResiduals own_residuals(const Plan& P, const LocalPolynomial& nwh, const LocalPolynomial& nwb,
                           const std::vector<std::size_t>& cc, const LocalPolynomial& model,
                           const arma::vec& y) {
  OwnResiduals R;
  if (P.kind == VarianceKind::nn) {
    R.r2h = nn_residual_variance(arma::vec(P.Xc.col(0)), y, kNnMatch);
    R.r2b = R.r2h;
    return R;
  }
  R.r2h.zeros(y.n_elem);
  R.r2b.zeros(y.n_elem);
  each_point(P, nwh, nwb, cc, model.training_x(),
             [&](arma::uword j, const LocalFits& F, const std::string& where) {
               own_row_residual(P, F, j, y, "training " + where, R);
             });
  return R;
}

bool same_rows(const arma::mat& A, const arma::mat& B) {
  return A.n_rows == B.n_rows && A.n_cols == B.n_cols && arma::all(arma::vectorise(A == B));
}

// sum_i G_i y_i, sqrt(sum_i G_i^2 r2_i) for a weight column G.
double weighted_sum(const arma::vec& G, const arma::vec& y) { return arma::dot(G, y); }
double weighted_se(const arma::vec& G, const arma::vec& r2) {
  double s = 0;
  for (arma::uword i = 0; i < G.n_elem; ++i) s += G(i) * G(i) * r2(i);
  return std::sqrt(s);
}

}  // namespace rbc_gradient_detail

int default_gradient_pilot_degree(int p, int v) { return (p - v) % 2 != 0 ? p + 1 : p + 2; }

namespace {

// Shared checks of the three entry points; returns the pilot degree.
int rbc_common_checks(const LocalPolynomial& model, const arma::mat& X_eval,
                      const RbcGradientOptions& opt, arma::uword output, int v, bool levels) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(output < model.n_outputs(), "output",
                 "is " + std::to_string(output) + " but the model has " +
                     std::to_string(model.n_outputs()) + " output column(s)");
  model.options().kernel.kernel.require_nonnegative("RBC marginal effects");
  check::require(!model.space().continuous_columns().empty(), "X",
                 levels ? "RBC level differences need at least one continuous regressor (the "
                          "bias is estimated in the continuous directions)"
                        : "marginal effects with RBC intervals need at least one continuous "
                          "regressor");
  const int p = model.options().degree;
  const int q = opt.pilot_degree < 0 ? default_gradient_pilot_degree(p, v) : opt.pilot_degree;
  rbc_gradient_detail::check_options(model, X_eval, opt, p, q, levels);
  return q;
}

// What the three entry points share: the pilot degree, the plan (bandwidths of the fit and the
// pilot), the kernel-only models that give each point's window, and the response.
struct RbcEffectsSetup {
  int q;
  arma::vec bfull;
  rbc_gradient_detail::Plan P;
  std::vector<std::size_t> cc;
  LocalPolynomial nwh, nwb;
  arma::vec y;
  RbcEffectsSetup(const LocalPolynomial& model, const RbcGradientOptions& opt, arma::uword output, int v,
        int q_)
      : q(q_),
        P(rbc_gradient_detail::make_plan(model, opt, model.options().degree, q, v, bfull)),
        cc(model.space().continuous_columns()),
        nwh(rbc_gradient_detail::kernel_model(model, model.bandwidth())),
        nwb(rbc_gradient_detail::kernel_model(model, bfull)),
        y(model.training_y().col(output)) {}
};

// A result of rows x columns estimates with its labels.
RbcGradientResult empty_rbc_result(std::vector<std::size_t> columns, int q, double level,
                               arma::uword rows) {
  RbcGradientResult res;
  res.columns = std::move(columns);
  res.pilot_degree = q;
  res.z = normal_quantile(0.5 + level / 2);
  for (arma::mat* M : {&res.estimate, &res.se, &res.bias, &res.estimate_bc, &res.se_bc})
    M->set_size(rows, res.columns.size());
  return res;
}

}  // namespace

RbcGradientResult rbc_gradient(const LocalPolynomial& model, const arma::mat& X_eval,
                               const RbcGradientOptions& opt, arma::uword output) {
  namespace D = rbc_gradient_detail;
  const RbcEffectsSetup S(model, opt, output, opt.order,
                          rbc_common_checks(model, X_eval, opt, output, opt.order, false));
  const D::Plan& P = S.P;
  const std::vector<std::size_t>& cc = S.cc;
  const std::size_t dc = cc.size();
  const arma::vec& y = S.y;
  RbcGradientResult res = empty_rbc_result(cc, S.q, opt.level, X_eval.n_rows);
  D::each_point(P, S.nwh, S.nwb, cc, X_eval,
                [&](arma::uword j, const D::LocalFits& F, const std::string& where) {
                  const arma::vec yw = y(F.idx);
                  arma::vec r2h, r2b;
                  D::local_residuals(P, F, dc == 1 ? arma::vec(P.Xc.submat(F.idx, arma::uvec{0})) : arma::vec(),
                                     yw, where, r2h, r2b);
                  arma::rowvec g, bw, gbc;
                  for (std::size_t c = 0; c < dc; ++c) {
                    const auto [t, f] = D::derivative_target(P, c);
                    D::target_weights(P, F, t, f, g, bw, gbc);
                    res.estimate(j, c) = arma::dot(g, yw);
                    res.bias(j, c) = arma::dot(bw, yw);
                    res.estimate_bc(j, c) = arma::dot(gbc, yw);
                    res.se(j, c) = std::sqrt(arma::dot(arma::square(g), r2h));
                    res.se_bc(j, c) = std::sqrt(arma::dot(arma::square(gbc), r2b));
                  }
                });
  return res;
}

RbcGradientResult rbc_average_gradient(const LocalPolynomial& model, const arma::mat& X_eval,
                                       const RbcGradientOptions& opt, arma::uword output) {
  namespace D = rbc_gradient_detail;
  const RbcEffectsSetup S(model, opt, output, opt.order,
                          rbc_common_checks(model, X_eval, opt, output, opt.order, false));
  const D::Plan& P = S.P;
  const std::vector<std::size_t>& cc = S.cc;
  const std::size_t dc = cc.size();
  const arma::vec& y = S.y;
  const arma::uword n = y.n_elem;
  const double wq = 1.0 / static_cast<double>(X_eval.n_rows);
  arma::mat G(n, dc, arma::fill::zeros), Gbc(n, dc, arma::fill::zeros);
  // At the training rows (the usual average) one pass gives the weights and the residuals.
  const bool at_training = P.kind != VarianceKind::nn && D::same_rows(X_eval, model.training_x());
  D::OwnResiduals R;
  if (at_training) {
    R.r2h.zeros(n);
    R.r2b.zeros(n);
  }
  D::each_point(P, S.nwh, S.nwb, cc, X_eval,
                [&](arma::uword j, const D::LocalFits& F, const std::string& where) {
                  arma::rowvec g, bw, gbc;
                  for (std::size_t c = 0; c < dc; ++c) {
                    const auto [t, f] = D::derivative_target(P, c);
                    D::target_weights(P, F, t, f, g, bw, gbc);
                    for (arma::uword k = 0; k < F.idx.n_elem; ++k) {
                      G(F.idx(k), c) += wq * g(k);
                      Gbc(F.idx(k), c) += wq * gbc(k);
                    }
                  }
                  if (at_training) D::own_row_residual(P, F, j, y, where, R);
                });
  if (!at_training) R = D::own_residuals(P, S.nwh, S.nwb, cc, model, y);
  RbcGradientResult res = empty_rbc_result(cc, S.q, opt.level, 1);
  for (std::size_t c = 0; c < dc; ++c) {
    res.estimate(0, c) = D::weighted_sum(G.col(c), y);
    res.estimate_bc(0, c) = D::weighted_sum(Gbc.col(c), y);
    res.bias(0, c) = res.estimate(0, c) - res.estimate_bc(0, c);
    res.se(0, c) = D::weighted_se(G.col(c), R.r2h);
    res.se_bc(0, c) = D::weighted_se(Gbc.col(c), R.r2b);
  }
  return res;
}

RbcGradientResult rbc_level_difference(const LocalPolynomial& model, const arma::mat& X_eval,
                                       std::size_t column, double level_from, double level_to,
                                       bool average, const RbcGradientOptions& opt,
                                       arma::uword output) {
  namespace D = rbc_gradient_detail;
  const std::size_t d = model.space().var_types().size();
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(column < d, "column",
                 "is " + std::to_string(column + 1) + " but the model has " + std::to_string(d) +
                     " column(s)");
  check::require(model.space().var_types()[column] != VarType::continuous, "column",
                 "column " + std::to_string(column + 1) + " is continuous; level differences "
                 "are for categorical (ordered or unordered) columns; use the marginal effects "
                 "of a continuous column");
  const arma::vec lv = arma::unique(model.training_x().col(column));
  for (const auto& [arg, val] : {std::pair<const char*, double>{"levels", level_from},
                                 std::pair<const char*, double>{"levels", level_to}}) {
    std::ostringstream s;
    s << "the value " << val << " is not a level of column " << (column + 1)
      << " in the training data (levels:";
    for (arma::uword k = 0; k < std::min<arma::uword>(lv.n_elem, 20); ++k) s << " " << lv(k);
    s << (lv.n_elem > 20 ? " ...)" : ")");
    check::require(arma::any(lv == val), arg, s.str());
  }
  RbcGradientOptions o = opt;
  o.order = 0;
  const RbcEffectsSetup S(model, o, output, 0, rbc_common_checks(model, X_eval, o, output, 0, true));
  const D::Plan& P = S.P;
  const std::vector<std::size_t>& cc = S.cc;
  const arma::vec& y = S.y;
  const arma::uword n = y.n_elem, m = X_eval.n_rows;
  // The 2m points, interleaved: row 2j is evaluation row j with the column at level_to
  // (weight +1), row 2j + 1 the same at level_from (-1).
  arma::mat X2(2 * m, d);
  for (arma::uword j = 0; j < m; ++j) {
    X2.row(2 * j) = X_eval.row(j);
    X2.row(2 * j + 1) = X_eval.row(j);
    X2(2 * j, column) = level_to;
    X2(2 * j + 1, column) = level_from;
  }
  const D::OwnResiduals R = D::own_residuals(P, S.nwh, S.nwb, cc, model, y);
  RbcGradientResult res = empty_rbc_result({column}, S.q, opt.level, average ? 1 : m);
  // The weights of the current result row (pointwise: one pair of points; the average: all).
  arma::vec G(n, arma::fill::zeros), Gbc(n, arma::fill::zeros);
  const auto finish = [&](arma::uword r) {
    res.estimate(r, 0) = D::weighted_sum(G, y);
    res.estimate_bc(r, 0) = D::weighted_sum(Gbc, y);
    res.bias(r, 0) = res.estimate(r, 0) - res.estimate_bc(r, 0);
    res.se(r, 0) = D::weighted_se(G, R.r2h);
    res.se_bc(r, 0) = D::weighted_se(Gbc, R.r2b);
    G.zeros();
    Gbc.zeros();
  };
  const double scale = average ? 1.0 / static_cast<double>(m) : 1.0;
  D::each_point(P, S.nwh, S.nwb, cc, X2,
                [&](arma::uword j, const D::LocalFits& F, const std::string&) {
                  arma::rowvec g, bw, gbc;
                  D::target_weights(P, F, 0, 1.0, g, bw, gbc);
                  const double s = (j % 2 == 0 ? 1.0 : -1.0) * scale;
                  for (arma::uword k = 0; k < F.idx.n_elem; ++k) {
                    G(F.idx(k)) += s * g(k);
                    Gbc(F.idx(k)) += s * gbc(k);
                  }
                  if (!average && j % 2 == 1) finish(j / 2);
                });
  if (average) finish(0);
  return res;
}

}  // namespace attnreg
