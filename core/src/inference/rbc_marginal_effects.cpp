// attnreg: robust bias-corrected intervals for the derivatives of local polynomial fits; the
// formulas and their sources are in core/include/attnreg/inference/rbc_marginal_effects.hpp.
#include "attnreg/inference/rbc_marginal_effects.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "attnreg/base/error.hpp"
#include "attnreg/inference/distributions.hpp"
#include "attnreg/inference/nn_variance.hpp"

namespace attnreg {

// A named namespace: the unity build puts several sources in one translation unit.
namespace rbc_gradient_detail {

// Exponent vectors (one entry per continuous column) of every monomial of total degree <= q,
// graded: all of degree 0, then 1, ..., so the first k_p are those of degree <= p.
std::vector<std::vector<int>> monomials(std::size_t dc, int q) {
  std::vector<std::vector<int>> out;
  std::vector<int> a(dc, 0);
  struct Rec {
    std::vector<std::vector<int>>& out;
    std::vector<int>& a;
    std::size_t dc;
    void operator()(std::size_t c, int left) const {
      if (c + 1 == dc) {
        a[c] = left;
        out.push_back(a);
        return;
      }
      for (int e = left; e >= 0; --e) {
        a[c] = e;
        (*this)(c + 1, left - e);
      }
    }
  };
  const Rec rec{out, a, dc};
  for (int deg = 0; deg <= q; ++deg) rec(0, deg);
  return out;
}

std::size_t count_up_to(const std::vector<std::vector<int>>& mon, int p) {
  std::size_t k = 0;
  for (const auto& a : mon) {
    int s = 0;
    for (int e : a) s += e;
    if (s <= p) ++k;
  }
  return k;
}

struct Plan {
  arma::mat Kh, Kb;                 // kernel weights of the fit (h) and the pilot (b) at the
                                    // evaluation rows row0, row0 + 1, ... of the current block
  arma::uword row0 = 0;
  arma::mat Xc;                     // n x dc continuous training columns
  arma::mat Ec;                     // m x dc continuous evaluation columns
  arma::vec h, b;                   // dc bandwidths of the fit and the pilot
  std::vector<std::vector<int>> mon;
  std::size_t kp = 0, kq = 0;
  std::vector<std::size_t> kv;      // per continuous column: index of the monomial v e_c
  int p = 0, q = 0, v = 1;
  bool compact = true;              // kernel with compact support (else: every row is in W(x))
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
bool wls_weights(const arma::mat& Z, const arma::vec& w, arma::mat& C) {
  const double wmax = w.max();
  if (!(wmax > 0) || Z.n_rows < Z.n_cols) return false;
  const arma::vec sq = arma::sqrt(w / wmax);
  arma::mat Q, R;
  if (!arma::qr_econ(Q, R, Z.each_col() % sq)) return false;
  const arma::vec rd = arma::abs(R.diag());
  if (!(rd.min() > 1e-10 * std::max(rd.max(), 1.0))) return false;
  C = arma::solve(arma::trimatu(R), Q.t());
  C.each_row() %= sq.t();
  return true;
}

// Design of the monomials [first, last) at the window rows, in units u = (x_i - x) / scale.
arma::mat design(const Plan& P, const arma::uvec& idx, arma::uword j, const arma::vec& scale,
                 std::size_t k) {
  const std::size_t dc = P.Xc.n_cols;
  arma::mat U(idx.n_elem, dc), Z(idx.n_elem, k);
  for (std::size_t c = 0; c < dc; ++c)
    for (arma::uword i = 0; i < idx.n_elem; ++i)
      U(i, c) = (P.Xc(idx(i), c) - P.Ec(j, c)) / scale(c);
  for (std::size_t t = 0; t < k; ++t)
    for (arma::uword i = 0; i < idx.n_elem; ++i) {
      double z = 1.0;
      for (std::size_t c = 0; c < dc; ++c)
        for (int e = 0; e < P.mon[t][c]; ++e) z *= U(i, c);
      Z(i, t) = z;
    }
  return Z;
}

// Squared residuals of the fit (r2h) and of the pilot (r2b) at the window rows (header comment).
void local_residuals(const Plan& P, const arma::mat& Zp, const arma::mat& Cp, const arma::mat& Zq,
                     const arma::mat& Cq, const arma::vec& xw, const arma::vec& yw,
                     const std::string& where, arma::vec& r2h, arma::vec& r2b) {
  if (P.kind == VarianceKind::nn) {
    r2h = nn_residual_variance(xw, yw, kNnMatch);
    r2b = r2h;
    return;
  }
  const arma::vec eh = yw - Zp * (Cp * yw), eb = yw - Zq * (Cq * yw);
  r2h = arma::square(eh);
  r2b = arma::square(eb);
  const double nx = static_cast<double>(yw.n_elem);
  if (P.kind == VarianceKind::hc1) {
    r2h *= nx / std::max(nx - static_cast<double>(P.kp), 1.0);
    r2b *= nx / std::max(nx - static_cast<double>(P.kq), 1.0);
  } else if (P.kind == VarianceKind::hc2 || P.kind == VarianceKind::hc3) {
    const arma::vec lev = arma::sum(Zp % Cp.t(), 1);  // L_ii = z_i' (coefficient weights)_i
    for (arma::uword i = 0; i < lev.n_elem; ++i) {
      const double om = 1.0 - lev(i);
      if (!(om > 1e-12))
        throw NumericalError("cov_type: the local leverage at " + where + " is " +
                             std::to_string(lev(i)) + " (>= 1), so " +
                             variance_kind_name(P.kind) +
                             " is undefined; use a larger bandwidth or HC0/HC1");
      const double f = P.kind == VarianceKind::hc2 ? 1.0 / om : 1.0 / (om * om);
      r2h(i) *= f;
      r2b(i) *= f;
    }
  }
}

// One evaluation point: every continuous column's estimate, se, bias, estimate_bc, se_bc.
void rbc_point(const Plan& P, const arma::mat& X_eval, arma::uword j, const arma::vec& y,
               RbcGradientResult& res) {
  const std::string where = point_text(X_eval, j);
  const arma::uword jb = j - P.row0;
  const arma::rowvec in = P.Kh.row(jb) + P.Kb.row(jb);
  const arma::uvec idx = P.compact ? arma::uvec(arma::find(in > 0))
                                   : arma::regspace<arma::uvec>(0, P.Kh.n_cols - 1);
  if (idx.n_elem < P.kq)
    throw NumericalError("pilot_bandwidth: the pilot local polynomial of degree " +
                         std::to_string(P.q) + " at " + where + " has " +
                         std::to_string(idx.n_elem) + " training point(s) in its window, fewer "
                         "than its " + std::to_string(P.kq) + " coefficients; use larger "
                         "bandwidths");
  const arma::rowvec kh = P.Kh.row(jb), kb = P.Kb.row(jb);
  const arma::vec wh = kh.t(), wb = kb.t();
  const arma::mat Zp = design(P, idx, j, P.h, P.kp), Zq = design(P, idx, j, P.b, P.kq);
  arma::mat Cp, Cq;
  if (!wls_weights(Zp, wh(idx), Cp))
    throw NumericalError("X: the local polynomial of degree " + std::to_string(P.p) + " at " +
                         where + " is singular (its weighted points do not determine a "
                         "polynomial of that degree); use a larger bandwidth");
  if (!wls_weights(Zq, wb(idx), Cq))
    throw NumericalError("pilot_bandwidth: the pilot local polynomial of degree " +
                         std::to_string(P.q) + " at " + where + " is singular (its weighted "
                         "points do not determine a polynomial of that degree in every "
                         "continuous direction); use a larger pilot_bandwidth");
  const arma::vec yw = y(idx);
  arma::vec r2h, r2b;
  const arma::vec xw = P.Xc.n_cols == 1 ? arma::vec(P.Xc.col(0)) : arma::vec();
  local_residuals(P, Zp, Cp, Zq, Cq, P.Xc.n_cols == 1 ? arma::vec(xw(idx)) : arma::vec(), yw,
                  where, r2h, r2b);
  const double vfact = std::tgamma(static_cast<double>(P.v) + 1.0);
  for (std::size_t c = 0; c < P.kv.size(); ++c) {
    const arma::rowvec g = Cp.row(P.kv[c]) * (vfact / std::pow(P.h(c), P.v));
    // bias weights: moments of g in the pilot's units times the pilot's coefficient weights
    arma::rowvec bw(idx.n_elem, arma::fill::zeros);
    for (std::size_t t = P.kp; t < P.kq; ++t) bw += arma::dot(g, Zq.col(t)) * Cq.row(t);
    const arma::rowvec gbc = g - bw;
    res.estimate(j, c) = arma::dot(g, yw);
    res.bias(j, c) = arma::dot(bw, yw);
    res.estimate_bc(j, c) = arma::dot(gbc, yw);
    res.se(j, c) = std::sqrt(arma::dot(arma::square(g), r2h));
    res.se_bc(j, c) = std::sqrt(arma::dot(arma::square(gbc), r2b));
  }
}

// The model's product kernel at bandwidths bw (its sample weights and categorical kernels, no
// truncation) as a local-constant fit, whose attention weights are the kernel weights up to a
// factor per row (which cancels in every weighted least squares here).
LocalPolynomial kernel_model(const LocalPolynomial& model, const arma::vec& bw) {
  LocalFitOptions fo = model.options();
  fo.degree = 0;
  fo.ridge = 0;
  fo.compute_fitted = false;
  fo.kernel.truncation = 0;
  LocalPolynomial nw(fo);
  nw.fit(model.training_x(), model.training_y(), bw, model.state().sample_weight);
  return nw;
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
                   const RbcGradientOptions& opt, int p, int q) {
  check::require(std::isfinite(opt.level) && opt.level > 0 && opt.level < 1, "level",
                 "must be in (0, 1) (level is a fraction: 0.95 for a 95% interval)");
  check::require(p >= 1, "degree",
                 "RBC intervals for marginal effects need a local polynomial of degree >= 1 "
                 "(the derivative is a local coefficient); refit with degree 1 (local linear) "
                 "or 2");
  check::require(model.options().ridge == 0, "ridge",
                 "RBC intervals for marginal effects are for the unpenalised local polynomial; "
                 "refit with ridge = 0");
  check::require(opt.order >= 1 && opt.order <= p, "order",
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

}  // namespace rbc_gradient_detail

int default_gradient_pilot_degree(int p, int v) { return (p - v) % 2 != 0 ? p + 1 : p + 2; }

RbcGradientResult rbc_gradient(const LocalPolynomial& model, const arma::mat& X_eval,
                               const RbcGradientOptions& opt, arma::uword output) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  check::require(output < model.n_outputs(), "output",
                 "is " + std::to_string(output) + " but the model has " +
                     std::to_string(model.n_outputs()) + " output column(s)");
  model.options().kernel.kernel.require_nonnegative("RBC marginal effects");
  const std::vector<std::size_t>& cc = model.space().continuous_columns();
  check::require(!cc.empty(), "X",
                 "marginal effects with RBC intervals need at least one continuous regressor");
  const int p = model.options().degree;
  const int v = opt.order;
  const int q = opt.pilot_degree < 0 ? default_gradient_pilot_degree(p, v) : opt.pilot_degree;
  rbc_gradient_detail::check_options(model, X_eval, opt, p, q);
  rbc_gradient_detail::Plan P;
  P.p = p;
  P.q = q;
  P.v = v;
  P.kind = opt.kind;
  P.compact = model.options().kernel.kernel.compact();
  const arma::vec bfull =
      opt.pilot_bandwidths.is_empty() ? arma::vec(model.bandwidth()) : opt.pilot_bandwidths;
  const std::size_t dc = cc.size();
  P.Xc.set_size(model.n_obs(), dc);
  P.Ec.set_size(X_eval.n_rows, dc);
  P.h.set_size(dc);
  P.b.set_size(dc);
  for (std::size_t c = 0; c < dc; ++c) {
    P.Xc.col(c) = model.training_x().col(cc[c]);
    P.Ec.col(c) = X_eval.col(cc[c]);
    P.h(c) = model.bandwidth()(cc[c]);
    P.b(c) = bfull(cc[c]);
  }
  P.mon = rbc_gradient_detail::monomials(dc, q);
  P.kp = rbc_gradient_detail::count_up_to(P.mon, p);
  P.kq = P.mon.size();
  for (std::size_t c = 0; c < dc; ++c) {
    std::vector<int> a(dc, 0);
    a[c] = v;
    P.kv.push_back(static_cast<std::size_t>(std::find(P.mon.begin(), P.mon.end(), a) -
                                            P.mon.begin()));
  }
  const LocalPolynomial nwh = rbc_gradient_detail::kernel_model(model, model.bandwidth());
  const LocalPolynomial nwb = rbc_gradient_detail::kernel_model(model, bfull);
  const arma::vec y = model.training_y().col(output);
  RbcGradientResult res;
  res.columns = cc;
  res.pilot_degree = q;
  res.z = normal_quantile(0.5 + opt.level / 2);
  for (arma::mat* M : {&res.estimate, &res.se, &res.bias, &res.estimate_bc, &res.se_bc})
    M->set_size(X_eval.n_rows, dc);
  // Blocks of evaluation rows, so that the kernel weights take O(block n) memory (every training
  // row as an evaluation row is n^2 otherwise).
  const arma::uword m = X_eval.n_rows, blk = 256;
  for (P.row0 = 0; P.row0 < m; P.row0 += blk) {
    const arma::mat Xb = X_eval.rows(P.row0, std::min(m, P.row0 + blk) - 1);
    P.Kh = rbc_gradient_detail::kernel_weights(nwh, Xb, "bandwidth");
    P.Kb = rbc_gradient_detail::kernel_weights(nwb, Xb, "pilot_bandwidth");
    for (arma::uword j = P.row0; j < P.row0 + Xb.n_rows; ++j)
      rbc_gradient_detail::rbc_point(P, X_eval, j, y, res);
  }
  return res;
}

}  // namespace attnreg
