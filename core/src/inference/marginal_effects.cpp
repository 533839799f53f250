// Marginal effects with standard errors (marginal_effects.hpp has the formulas).
#include "attnreg/inference/marginal_effects.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/solve/local_solve.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

namespace {

struct Ctx {
  const KernelSpace* sp = nullptr;
  int degree = 0;
  double ridge = 0.0;
  std::vector<double> pen;       // per continuous column, bandwidth units
  std::vector<double> hc;        // continuous bandwidths
  std::size_t n = 0, dc = 0;
};

// Fit weights l (n, internal order) and, when G is non-null, the derivative weights of every
// continuous column (G[a * n + i]) at query q. Scratch w (n). False when the fit does not exist.
bool query_weights(const Ctx& c, const PreparedQueries& Q, std::size_t q, double* w, double* l,
                   double* G) {
  const KernelSpace& sp = *c.sp;
  const std::size_t n = c.n, dc = c.dc;
  const double mx = sp.weights(Q, q, 0, n, w);
  if (!(mx > 0.0) || mx < KernelSpace::kTinyWeight) return false;
  const arma::mat& xs = sp.scaled();
  const double* qc = dc > 0 ? Q.cont.colptr(q) : nullptr;
  const KernelType kt = sp.spec().kernel.type;
  if (c.degree == 0) {
    double W = 0.0;
    for (std::size_t i = 0; i < n; ++i) W += w[i];
    for (std::size_t i = 0; i < n; ++i) l[i] = w[i] / W;
    if (G != nullptr)
      for (std::size_t a = 0; a < dc; ++a) {
        const double* xa = xs.colptr(a);
        double* g = G + a * n;
        double sbar = 0.0;
        for (std::size_t i = 0; i < n; ++i) {
          g[i] = w[i] > 0.0 ? -kernel_dlogk(kt, xa[i] - qc[a]) / c.hc[a] : 0.0;
          sbar += l[i] * g[i];
        }
        for (std::size_t i = 0; i < n; ++i) g[i] = l[i] * (g[i] - sbar);
      }
    return true;
  }
  // Local linear: A = sum w [1; u][1; u]' + ridge omega diag(0, pen) and X = A^{-1} Z, Z the
  // p x n design [1; u_i], by the local fit's solve (local_solve.hpp). M (n x p, column-major)
  // holds Z row-major, so the solve runs in place on it.
  const std::size_t p = dc + 1;
  std::vector<double> A(p * p, 0.0), L(p * p), s(p);
  arma::mat M(n, p);
  for (std::size_t i = 0; i < n; ++i) {
    M(i, 0) = 1.0;
    for (std::size_t a = 0; a < dc; ++a) M(i, 1 + a) = xs(i, a) - qc[a];
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (w[i] == 0.0) continue;
    for (std::size_t r = 0; r < p; ++r)
      for (std::size_t t = r; t < p; ++t) A[r * p + t] += w[i] * M(i, r) * M(i, t);
  }
  local_solve::add_ridge(A.data(), p, 1, c.ridge, A[0], c.pen.data());
  if (local_solve::spd_solve(A.data(), p, M.memptr(), n, L.data(), s.data()) !=
      local_solve::SolveStatus::ok)
    return false;
  for (std::size_t i = 0; i < n; ++i) l[i] = w[i] * M(i, 0);
  if (G != nullptr)
    for (std::size_t a = 0; a < dc; ++a)
      for (std::size_t i = 0; i < n; ++i) G[a * n + i] = w[i] * M(i, 1 + a) / c.hc[a];
  return true;
}

[[noreturn]] void throw_failed(std::size_t row) {
  std::ostringstream m;
  m << "X: the fit does not exist at row " << (row + 1)
    << " (no training point with a usable kernel weight, or a singular local design); a larger "
       "bandwidth or a query inside the data";
  throw NumericalError(m.str());
}

struct Plan {
  Ctx ctx;
  PreparedQueries Q;
  std::vector<std::size_t> cont, cat;        // column indices
  std::vector<PreparedQueries> Qalt;         // per categorical column
  std::vector<arma::vec> sign;               // per categorical column, per query (+1 / -1)
  std::size_t d = 0, m = 0;
};

Plan make_plan(const LocalPolynomial& model, const arma::mat& X_new) {
  check::require(model.is_fitted(), "model", "is not fitted; call fit() first");
  const LocalFitOptions& o = model.options();
  o.kernel.kernel.require_nonnegative("marginal effects");
  check::require(o.degree == 0 || o.degree == 1, "degree",
                 "marginal effects with standard errors are for local constant (degree 0) and "
                 "local linear (degree 1) fits");
  check::require(model.n_outputs() == 1, "y",
                 "marginal effects need a single response (fit one model per output)");
  const KernelSpace& sp = model.space();
  Plan P;
  P.d = sp.dim();
  P.m = X_new.n_rows;
  P.Q = sp.prepare(X_new, "X");
  P.ctx.sp = &sp;
  P.ctx.degree = o.degree;
  P.ctx.ridge = o.degree == 1 ? o.ridge : 0.0;
  P.ctx.n = sp.n();
  P.ctx.dc = sp.n_continuous();
  P.cont = sp.continuous_columns();
  P.cat = sp.categorical_columns();
  arma::vec hc(P.cont.size());
  for (std::size_t a = 0; a < P.cont.size(); ++a) hc(a) = sp.bandwidth()(P.cont[a]);
  P.ctx.hc.assign(hc.begin(), hc.end());
  if (o.degree == 1) P.ctx.pen = local_penalty_scales(hc, 1);
  for (std::size_t c = 0; c < P.cat.size(); ++c) {
    const std::size_t j = P.cat[c];
    const std::vector<double>& lv = sp.levels(c);
    const bool ordered = sp.var_types()[j] == VarType::ordered;
    arma::mat Xa = X_new;
    arma::vec sg(P.m, arma::fill::ones);
    for (std::size_t q = 0; q < P.m; ++q) {
      const double v = X_new(q, j);
      const auto it = std::lower_bound(lv.begin(), lv.end(), v);
      const std::size_t pos = static_cast<std::size_t>(it - lv.begin());
      if (!ordered) {
        Xa(q, j) = lv.front();
      } else if (pos > 0 && pos < lv.size()) {
        Xa(q, j) = lv[pos - 1];
      } else {
        Xa(q, j) = lv.size() > 1 ? lv[1] : lv[0];
        sg(q) = -1.0;
      }
    }
    P.Qalt.push_back(sp.prepare(Xa, "X"));
    P.sign.push_back(sg);
  }
  return P;
}

// Derivative weights of every column (n x d, column j = weights of column j) at query q.
bool all_weights(const Plan& P, std::size_t q, std::vector<double>& w, std::vector<double>& l,
                 std::vector<double>& l2, std::vector<double>& Gc, arma::mat& Gout) {
  const std::size_t n = P.ctx.n;
  if (!query_weights(P.ctx, P.Q, q, w.data(), l.data(), P.cont.empty() ? nullptr : Gc.data()))
    return false;
  for (std::size_t a = 0; a < P.cont.size(); ++a)
    std::copy(&Gc[a * n], &Gc[a * n] + n, Gout.colptr(P.cont[a]));
  for (std::size_t c = 0; c < P.cat.size(); ++c) {
    if (!query_weights(P.ctx, P.Qalt[c], q, w.data(), l2.data(), nullptr)) return false;
    const double sg = P.sign[c](q);
    double* g = Gout.colptr(P.cat[c]);
    for (std::size_t i = 0; i < n; ++i) g[i] = sg * (l[i] - l2[i]);
  }
  return true;
}


// C(K) = int K(z - 1/2) K(z + 1/2) dz: closed form for the Gaussian, composite Simpson over
// [-1/2, 1/2] (where both factors of a kernel supported on [-1, 1] are non-zero; the kinks
// of the triangular kernel lie at the ends) for the compact kernels.
double half_shift_overlap(const Kernel& K) {
  if (K.type == KernelType::gaussian) return std::exp(-0.25) / (2.0 * std::sqrt(M_PI));
  const int N = 4000;
  const double step = 1.0 / N;
  double s = 0.0;
  for (int k = 0; k <= N; ++k) {
    const double z = -0.5 + k * step;
    const double f = K(z - 0.5) * K(z + 0.5);
    s += (k == 0 || k == N) ? f : (k % 2 == 1 ? 4.0 * f : 2.0 * f);
  }
  return s * step / 3.0;
}

// R np's asymptotic standard errors of local-constant gradients (marginal_effects.hpp) at
// query q into se (d values). False when the fit does not exist there.
bool np_gradient_se(const Plan& P, std::size_t q, const arma::vec& y, double RK, double CK,
                    double cK, std::vector<double>& w, std::vector<double>& l, double* se) {
  const std::size_t n = P.ctx.n, dc = P.cont.size();
  const double Rd = std::pow(RK, static_cast<double>(dc));
  const double cd = std::pow(cK, static_cast<double>(dc));
  // sum_i K_i, the local mean and the local variance of y at the query rows of Qx.
  auto local = [&](const PreparedQueries& Qx, double& sk, double& var) {
    if (!query_weights(P.ctx, Qx, q, w.data(), l.data(), nullptr)) return false;
    double W = 0.0, m1 = 0.0, m2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      W += w[i];
      m1 += l[i] * y(i);
      m2 += l[i] * y(i) * y(i);
    }
    sk = cd * W;
    var = std::max(0.0, m2 - m1 * m1);
    return true;
  };
  double sk = 0.0, var = 0.0;
  if (!local(P.Q, sk, var)) return false;
  const double merr2 = var * Rd / sk;
  const double gfac = std::sqrt(2.0 * (RK - CK) / RK);
  for (std::size_t a = 0; a < dc; ++a) se[P.cont[a]] = gfac * std::sqrt(merr2) / P.ctx.hc[a];
  for (std::size_t c = 0; c < P.cat.size(); ++c) {
    if (dc == 0) {  // np reports 0 without a continuous regressor
      se[P.cat[c]] = 0.0;
      continue;
    }
    double sk2 = 0.0, var2 = 0.0;
    if (!local(P.Qalt[c], sk2, var2)) return false;
    se[P.cat[c]] = std::sqrt(merr2 + var2 * Rd / sk2);
  }
  return true;
}
}  // namespace

GradientSE gradient_se_from_name(const std::string& name, const std::string& arg) {
  const std::string s = detail::lower_case(name);
  if (s == "none" || s.empty()) return GradientSE::none;
  if (s == "asymptotic" || s == "hc" || s == "analytic") return GradientSE::asymptotic;
  if (s == "bootstrap" || s == "wild") return GradientSE::bootstrap;
  if (s == "np") return GradientSE::np;
  throw InvalidArgument(arg + ": unknown standard-error method '" + name +
                        "'; choose one of none, asymptotic, bootstrap, np");
}

namespace {
// Wild-bootstrap draws e_i v_i (Mammen's two-point v, drawn in (observation, replication)
// order) and the standard deviation of a linear statistic sum_i g_i y_i over them.
struct WildDraws {
  std::size_t B = 0, n = 0;
  arma::mat EV;  // B x n: column i = e_i v_i over replications (contiguous per observation)

  WildDraws(const arma::vec& e_int, std::size_t n_boot, std::uint64_t seed)
      : B(n_boot), n(e_int.n_elem) {
    if (B == 0) return;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unif(0.0, 1.0);
    const double s5 = std::sqrt(5.0);
    const double pa = (s5 + 1.0) / (2.0 * s5), va = -(s5 - 1.0) / 2.0, vb = (s5 + 1.0) / 2.0;
    EV.set_size(B, n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t b = 0; b < B; ++b)
        EV(b, i) = e_int(i) * (unif(rng) < pa ? va : vb);
  }

  double sd(const double* g, double* buf) const {
    std::fill(buf, buf + B, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      if (g[i] == 0.0) continue;
      const double* ev = EV.colptr(i);
      const double gi = g[i];
      for (std::size_t b = 0; b < B; ++b) buf[b] += gi * ev[b];
    }
    double mean = 0.0;
    for (std::size_t b = 0; b < B; ++b) mean += buf[b];
    mean /= static_cast<double>(B);
    double ss = 0.0;
    for (std::size_t b = 0; b < B; ++b) ss += (buf[b] - mean) * (buf[b] - mean);
    return std::sqrt(ss / static_cast<double>(B - 1));
  }
};

// The average effect over the m_all query rows (mult: each distinct row's multiplicity) and,
// from its derivative weights a (n x d), its standard error.
void average_effects(const GradientOptions& opt, const arma::vec& mult, std::size_t m_all,
                     const arma::mat& a, const arma::vec& e2, const WildDraws& boot,
                     GradientResult& res) {
  const std::size_t n = a.n_rows, d = a.n_cols, m = res.gradient.n_rows;
  res.average.set_size(d);
  for (std::size_t j = 0; j < d; ++j) {
    double s = 0.0;
    for (std::size_t q = 0; q < m; ++q) s += mult(q) * res.gradient(q, j);
    res.average(j) = s / static_cast<double>(m_all);
  }
  if (opt.se == GradientSE::none) return;
  res.average_se.set_size(d);
  std::vector<double> buf(boot.B);
  for (std::size_t j = 0; j < d; ++j) {
    const double* g = a.colptr(j);
    if (opt.se == GradientSE::asymptotic) {
      double v = 0.0;
      for (std::size_t i = 0; i < n; ++i) v += g[i] * g[i] * e2(i);
      res.average_se(j) = std::sqrt(v);
    } else {
      res.average_se(j) = boot.sd(g, buf.data());
    }
  }
}

// Results of the distinct query rows copied back to all m_all rows.
void expand_groups(const DistinctRows& dq, std::size_t m_all, bool want_se, GradientResult& res) {
  const std::size_t d = res.gradient.n_cols;
  arma::mat G(m_all, d), S(want_se ? m_all : 0, d);
  for (std::size_t i = 0; i < m_all; ++i) {
    G.row(i) = res.gradient.row(dq.group_of[i]);
    if (want_se) S.row(i) = res.se.row(dq.group_of[i]);
  }
  res.gradient = std::move(G);
  if (want_se) res.se = std::move(S);
}
}  // namespace

GradientResult local_gradient(const LocalPolynomial& model, const arma::mat& X_new,
                              const GradientOptions& opt) {
  if (opt.se == GradientSE::bootstrap)
    check::require(opt.n_boot >= 2 && opt.n_boot <= 100000, "n_boot",
                   "must be between 2 and 100000, got " + std::to_string(opt.n_boot));
  check::require(opt.n_threads >= 0, "n_threads", "must be >= 0 (0 = all available)");
  // Identical query rows have identical effects: evaluate each distinct row once (m_u of
  // them, with multiplicities mult) and copy back (integer-valued regressors: a few dozen
  // distinct rows among tens of thousands).
  check::require(X_new.n_rows >= 1, "X", "needs at least one row");
  const std::size_t m_all = X_new.n_rows;
  DistinctRows dq;
  if (X_new.is_finite()) dq = distinct_rows(X_new);
  const bool grouped = X_new.is_finite() && dq.X.n_rows < m_all;
  const Plan P = make_plan(model, grouped ? dq.X : X_new);
  const bool np_se = opt.se == GradientSE::np;
  double RK = 0.0, CK = 0.0, cK = 0.0;
  if (np_se) {
    check::require(P.ctx.degree == 0, "se",
                   "'np' is R np's asymptotic formula for local-constant gradients; for a local "
                   "linear fit use 'asymptotic' or 'bootstrap'");
    check::require(model.space().obs_weights().is_empty(), "se",
                   "'np' (R np's formula) has no observation weights; use 'asymptotic' or "
                   "'bootstrap' for a weighted fit");
    check::require(!opt.average, "average",
                   "R np has no standard error for the average effect; use se='asymptotic' or "
                   "'bootstrap' with average");
    const Kernel& K = model.space().spec().kernel;
    RK = K.roughness();
    CK = half_shift_overlap(K);
    cK = K.constant();
  }
  const std::size_t n = P.ctx.n, d = P.d, m = P.m;
  const arma::vec mult = grouped ? dq.count : arma::vec(m, arma::fill::ones);
  const KernelSpace& sp = model.space();
  GradientResult res;
  res.gradient.set_size(m, d);
  const bool want_se = opt.se != GradientSE::none;
  if (want_se) res.se.set_size(m, d);
  // Responses, residuals and bootstrap draws in the space's internal order.
  const arma::vec y = model.training_y().col(0);
  arma::vec y_int(n), e2(n);
  arma::vec e_int;
  if (want_se) {
    const arma::vec e = y - model.fitted().col(0);
    e_int.set_size(n);
    for (std::size_t k = 0; k < n; ++k) e_int(k) = e(sp.order()[k]);
    e2 = arma::square(e_int);
  }
  for (std::size_t k = 0; k < n; ++k) y_int(k) = y(sp.order()[k]);
  const std::size_t B = opt.se == GradientSE::bootstrap ? static_cast<std::size_t>(opt.n_boot) : 0;
  const WildDraws boot(e_int, B, opt.seed);
  // Fixed blocks of queries (independent of the thread count); per block the sum of the
  // derivative weights for the average, reduced in block order.
  const std::size_t nblk = std::max<std::size_t>(1, std::min<std::size_t>(m, 32));
  std::vector<arma::mat> blk_sum(opt.average ? nblk : 0);
  std::vector<long long> failed(nblk, -1);
  const int nthr = m * n > 20000 ? resolve_threads(opt.n_threads) : 1;
#pragma omp parallel num_threads(nthr)
  {
    std::vector<double> w(n), l(n), l2(n), Gc(std::max<std::size_t>(P.cont.size(), 1) * n);
    std::vector<double> buf(B);
    arma::mat G(n, d);
#pragma omp for schedule(dynamic)
    for (long long bi = 0; bi < static_cast<long long>(nblk); ++bi) {
      const std::size_t b = static_cast<std::size_t>(bi);
      const std::size_t q0 = b * m / nblk, q1 = (b + 1) * m / nblk;
      if (opt.average) blk_sum[b].zeros(n, d);
      for (std::size_t q = q0; q < q1; ++q) {
        if (!all_weights(P, q, w, l, l2, Gc, G)) {
          failed[b] = static_cast<long long>(q);
          break;
        }
        for (std::size_t j = 0; j < d; ++j) {
          const double* g = G.colptr(j);
          double est = 0.0, v = 0.0;
          for (std::size_t i = 0; i < n; ++i) est += g[i] * y_int(i);
          res.gradient(q, j) = est;
          if (opt.se == GradientSE::asymptotic) {
            for (std::size_t i = 0; i < n; ++i) v += g[i] * g[i] * e2(i);
            res.se(q, j) = std::sqrt(v);
          } else if (B > 0) {
            res.se(q, j) = boot.sd(g, buf.data());
          }
        }
        if (np_se) {
          std::vector<double> row(d);
          if (!np_gradient_se(P, q, y_int, RK, CK, cK, w, l, row.data())) {
            failed[b] = static_cast<long long>(q);
            break;
          }
          for (std::size_t j = 0; j < d; ++j) res.se(q, j) = row[j];
        }
        if (opt.average) blk_sum[b] += mult(q) * G;
      }
    }
  }
  for (std::size_t b = 0; b < nblk; ++b)
    if (failed[b] >= 0) {
      std::size_t row = static_cast<std::size_t>(failed[b]);
      if (grouped)  // the first row of that distinct row's group
        for (std::size_t i = 0; i < m_all; ++i)
          if (dq.group_of[i] == row) {
            row = i;
            break;
          }
      throw_failed(row);
    }
  if (opt.average) {
    arma::mat a(n, d, arma::fill::zeros);
    for (std::size_t b = 0; b < nblk; ++b) a += blk_sum[b];
    a /= static_cast<double>(m_all);
    average_effects(opt, mult, m_all, a, e2, boot, res);
  }
  if (grouped) expand_groups(dq, m_all, want_se, res);
  return res;
}

arma::mat gradient_weights(const LocalPolynomial& model, const arma::mat& X_new, std::size_t j) {
  const Plan P = make_plan(model, X_new);
  check::require(j < P.d, "column", "is out of range");
  const std::size_t n = P.ctx.n;
  const KernelSpace& sp = model.space();
  arma::mat out(P.m, n);
  std::vector<double> w(n), l(n), l2(n), Gc(std::max<std::size_t>(P.cont.size(), 1) * n);
  arma::mat G(n, P.d);
  for (std::size_t q = 0; q < P.m; ++q) {
    if (!all_weights(P, q, w, l, l2, Gc, G)) throw_failed(q);
    for (std::size_t k = 0; k < n; ++k) out(q, sp.order()[k]) = G(k, j);
  }
  return out;
}

}  // namespace attnreg
