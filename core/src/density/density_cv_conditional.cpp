// Conditional density cv_ls (Hall, Racine and Li 2004), see density.hpp and
// density_cv_impl.hpp for the notation. For each x group g and each left-out row r in it, with
// u the weights c_r' Px(g_r', g) of the rows outside g and e those of g's own rows
// (s_g (c_r' - 1(r' = r))):
//   Q = u'A u + 2 e'A u + e'A e,  Num = u'Py(:, r) + s_g (own rows' Py),
//   Den = sum_{h != g} Px(h, g) n_h + s_g (n_g - 1),
// and the row adds c_r (Q / Den^2 - 2 Num / Den).
#include "attnreg/detail/density_cv_impl.hpp"

namespace attnreg {

using density_detail::ColumnState;
using density_detail::Mode;
using Impl = DensityObjective::Impl;

namespace {

// The matrices of one evaluation: the x kernel between the x groups (Gx x Gx), the y
// convolution A and density Py between the rows (R x R), V(:, g) = sum_{r in g} c_r A(:, r),
// and their derivatives (per x column for Px, per y column for the others).
struct CondMatrices {
  arma::mat Px, A, Py, V;
  std::vector<arma::mat> dPx, dA, dPy, dV;
};

// The pieces of group g that do not depend on the left-out row (per parameter j for the
// derivatives: x columns first, then y columns).
struct CondGroup {
  double s = 0.0, Den = 0.0, uAu = 0.0;
  arma::vec u, AU;
  std::vector<arma::vec> dAU, du;
  std::vector<double> duAu, ds, dDen;
};

// sum_t x[t] v[mem[t]]: a weighted sum over the rows of one group.
double member_dot(const double* x, const double* v, const std::vector<std::size_t>& mem) {
  double acc = 0.0;
  for (std::size_t t = 0; t < mem.size(); ++t) acc += x[t] * v[mem[t]];
  return acc;
}

// sum_t x[t] sum_v M(mem[t], mem[v]) e[v]: a quadratic form over the rows of one group.
double member_quad(const double* x, const arma::mat& M, const std::vector<std::size_t>& mem,
                   const double* e) {
  double acc = 0.0;
  for (std::size_t t = 0; t < mem.size(); ++t) {
    double row = 0.0;
    for (std::size_t v = 0; v < mem.size(); ++v) row += M(mem[t], mem[v]) * e[v];
    acc += x[t] * row;
  }
  return acc;
}

// sum_r x[r] y[r], in order.
double plain_dot(const double* x, const double* y, std::size_t R) {
  double acc = 0.0;
  for (std::size_t r = 0; r < R; ++r) acc += x[r] * y[r];
  return acc;
}

// out(r) = c_r P(g_r, g) for the rows outside group g, 0 inside it.
void outside_weights(const Impl& I, const arma::mat& P, std::size_t g, arma::vec& out) {
  for (std::size_t r = 0; r < I.Zu.n_rows; ++r)
    out(r) = I.gx_of[r] == g ? 0.0 : I.c(r) * P(I.gx_of[r], g);
}

// A and Py (and their derivatives) from the y columns' convolution and density kernels.
void y_matrices(const Impl& I, const std::vector<ColumnState>& st,
                const std::vector<ColumnState>& cst, bool der, CondMatrices& m) {
  const std::size_t R = I.Zu.n_rows, dx = I.dx, dy = I.dy;
  std::vector<arma::mat> FA(dy), FP(dy), dFA(der ? dy : 0), dFP(der ? dy : 0);
  for (std::size_t k = 0; k < dy; ++k) {
    const std::size_t j = dx + k;
    FA[k].set_size(R, R);
    FP[k].set_size(R, R);
    if (der) { dFA[k].set_size(R, R); dFP[k].set_size(R, R); }
#pragma omp parallel for num_threads(I.threads) schedule(static)
    for (std::size_t r = 0; r < R; ++r) {
      density_detail::eval_column(I.cols[j], I.K, cst[j], I.Zu(r, j), I.Zu.colptr(j), R,
                                  FA[k].colptr(r), der ? dFA[k].colptr(r) : nullptr);
      density_detail::eval_column(I.cols[j], I.K, st[j], I.Zu(r, j), I.Zu.colptr(j), R,
                                  FP[k].colptr(r), der ? dFP[k].colptr(r) : nullptr);
    }
  }
  density_cv::column_products(FA, dFA, R, R, m.A, m.dA);
  density_cv::column_products(FP, dFP, R, R, m.Py, m.dPy);
}

// Group g's pieces; false when its denominator is not positive. G's vectors are sized by the
// caller (R each).
bool prepare_group(const Impl& I, const CondMatrices& m, std::size_t g, bool der, CondGroup& G) {
  G.s = m.Px(g, g);
  outside_weights(I, m.Px, g, G.u);
  density_cv::mix_other_groups(m.Px, g, m.V, G.AU);
  G.uAu = arma::dot(G.u, G.AU);
  G.Den = I.group_den(m.Px, g);
  if (!(G.Den > 0.0)) return false;
  for (std::size_t j = 0; der && j < I.d; ++j) {
    if (j < I.dx) {
      outside_weights(I, m.dPx[j], g, G.du[j]);
      density_cv::mix_other_groups(m.dPx[j], g, m.V, G.dAU[j]);
      G.duAu[j] = 2.0 * arma::dot(G.du[j], G.AU);
      G.ds[j] = m.dPx[j](g, g);
      G.dDen[j] = I.group_den(m.dPx[j], g);
    } else {
      density_cv::mix_other_groups(m.Px, g, m.dV[j - I.dx], G.dAU[j]);
      G.duAu[j] = arma::dot(G.u, G.dAU[j]);
    }
  }
  return true;
}

// Adds row mem[ir]'s term (pp[0]) and its gradient (pp[1 + j]); cm and e are work buffers of
// the group's size.
void add_row(const Impl& I, const CondMatrices& m, const CondGroup& G,
             const std::vector<std::size_t>& mem, std::size_t ir, bool der, double* cm,
             double* e, double* de, double* pp) {
  const std::size_t R = I.Zu.n_rows, mg = mem.size(), r = mem[ir];
  const double s = G.s, Den = G.Den;
  // The own group's counts with the left-out row removed, and their weights.
  for (std::size_t t = 0; t < mg; ++t) cm[t] = I.c(mem[t]) - (t == ir ? 1.0 : 0.0);
  for (std::size_t t = 0; t < mg; ++t) e[t] = s * cm[t];
  const double Q = G.uAu + 2.0 * member_dot(e, G.AU.memptr(), mem) + member_quad(e, m.A, mem, e);
  const double* Pyr = m.Py.colptr(r);
  const double own = member_dot(cm, Pyr, mem);
  const double Num = plain_dot(G.u.memptr(), Pyr, R) + s * own;
  const double cr = I.c(r);
  pp[0] += cr * (Q / Den / Den - 2.0 * Num / Den);
  for (std::size_t j = 0; der && j < I.d; ++j) {
    double dQ, dNum, dDen;
    const double edAU = member_dot(e, G.dAU[j].memptr(), mem);
    if (j < I.dx) {
      const double ds = G.ds[j];
      for (std::size_t t = 0; t < mg; ++t) de[t] = ds * cm[t];
      const double deAU = member_dot(de, G.AU.memptr(), mem);
      dQ = G.duAu[j] + 2.0 * (deAU + edAU) + 2.0 * member_quad(de, m.A, mem, e);
      dNum = plain_dot(G.du[j].memptr(), Pyr, R) + ds * own;
      dDen = G.dDen[j];
    } else {
      const std::size_t k = j - I.dx;
      dQ = G.duAu[j] + 2.0 * edAU + member_quad(e, m.dA[k], mem, e);
      const double* dPyr = m.dPy[k].colptr(r);
      dNum = plain_dot(G.u.memptr(), dPyr, R) + s * member_dot(cm, dPyr, mem);
      dDen = 0.0;
    }
    const double rq = Q / Den / Den, rd = dDen / Den;  // no Den^3: it can underflow
    pp[1 + j] += cr * (dQ / Den / Den - 2.0 * rq * rd - 2.0 * (dNum / Den - Num / Den * rd));
  }
}

}  // namespace

double DensityObjective::Impl::cond_ls(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const std::size_t R = Zu.n_rows, Gx = Xg.n_rows, np = d;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::pdf, bw, der);
  const std::vector<ColumnState> cst = states(Mode::pdf, Mode::conv, bw, der);
  CondMatrices m;
  x_matrix(st, der, m.Px, m.dPx);
  y_matrices(*this, st, cst, der, m);
  group_sums(m.A, m.dA, m.V, m.dV);
  arma::mat part(1 + np, Gx, arma::fill::zeros);
  std::vector<char> bad(Gx, 0);
#pragma omp parallel num_threads(threads)
  {
    CondGroup G;
    G.u.set_size(R);
    G.AU.set_size(R);
    G.dAU.assign(der ? np : 0, arma::vec(R));
    G.du.assign(der ? dx : 0, arma::vec(R));
    G.duAu.assign(np, 0.0);
    G.ds.assign(np, 0.0);
    G.dDen.assign(np, 0.0);
    std::vector<double> cm, e, de;
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      if (!prepare_group(*this, m, g, der, G)) { bad[g] = 1; continue; }
      const std::vector<std::size_t>& mem = members[g];
      cm.resize(mem.size());
      e.resize(mem.size());
      de.resize(mem.size());
      for (std::size_t ir = 0; ir < mem.size(); ++ir)
        add_row(*this, m, G, mem, ir, der, cm.data(), e.data(), de.data(), part.colptr(g));
    }
  }
  return sum_group_parts(part, bad, n, der ? grad : nullptr);
}

}  // namespace attnreg
