// Cross-validation objectives and bandwidth search for the density estimators (density.hpp).
//
// Notation: the training data are grouped into R distinct rows r of [X Y] (encoded, counts
// c_r, n = sum c_r). For the conditional objectives the rows are further grouped by their x
// part into Gx distinct x values g (n_g observations; Px(g, g') the x product kernel, whose
// diagonal Px(g, g) is the weight of a point on itself).
//
// Leave-one-out sums never subtract a point's own term from a full sum when the own term can
// dominate: a row's own group enters with the count c - 1 (row streaming), or, in the
// conditional cv_ls objectives, the observations of the own x group enter through s_g = Px(g, g)
// times their counts with the left-out one removed. The only subtraction left is in the
// distribution objective's y factor (W - G, both in [0, n]), where absolute accuracy is what
// counts.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>

#include "attnreg/density/density.hpp"
#include "attnreg/detail/pow2_scale.hpp"
#include "attnreg/detail/density_kernels.hpp"
#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

using density_detail::Column;
using density_detail::ColumnState;
using density_detail::Mode;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGaussTail = 8.5;

double spread(const arma::vec& x) {
  arma::vec s = arma::sort(x);
  const double n = static_cast<double>(s.n_elem);
  auto quant = [&](double p) {
    const double pos = p * (n - 1.0);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min<std::size_t>(lo + 1, s.n_elem - 1);
    return s(lo) + (pos - lo) * (s(hi) - s(lo));
  };
  const double sd = arma::stddev(s), iqr = quant(0.75) - quant(0.25);
  double v = iqr > 0.0 ? std::min(sd, iqr / 1.349) : sd;
  if (!(v > 0.0)) v = s.max() - s.min();
  return v;
}
}  // namespace

struct DensityObjective::Impl {
  DensityKind kind;
  DensityMethod method;
  std::vector<Column> cols;
  Kernel K;
  std::size_t dx = 0, dy = 0, d = 0;
  arma::mat Zu;     // R x d
  arma::vec c;      // R
  double n = 0;
  int threads = 1;
  // x groups (conditional cv_ls)
  arma::mat Xg;                                // Gx x dx
  std::vector<std::size_t> gx_of;              // R
  std::vector<std::vector<std::size_t>> members;
  arma::vec ng;                                // Gx
  // distinct y values (distribution cv_ls)
  arma::mat Yv;                                // Ty x dy
  arma::vec mt;                                // Ty
  std::vector<std::size_t> ty_of;              // R
  // One continuous y (distribution cv_ls fast path): distinct y values sorted ascending, their
  // counts, and each row's position among them.
  bool dist1 = false;
  arma::vec ys, ms;
  std::vector<std::size_t> ts_of;              // R
  // Buffers of the fast path, kept between evaluations (fresh T x T allocations each time
  // cost more than the arithmetic); an evaluation running concurrently gets its own.
  struct DistWork {
    std::vector<double> Hb, dHb;  // bands of G(. | y_s) and dG, column by column
    std::vector<std::size_t> lo, hi, off;
    arma::mat W, dW, A, dAy;
    std::vector<arma::mat> dAx;
  };
  mutable std::mutex work_mutex;
  mutable DistWork work;

  std::vector<ColumnState> states(Mode xmode, Mode ymode, const arma::vec& bw, bool der) const {
    std::vector<ColumnState> st(d);
    for (std::size_t j = 0; j < d; ++j)
      st[j] = density_detail::make_state(cols[j], j < dx ? xmode : ymode, bw(j), der);
    return st;
  }

  double rows(const arma::vec& bw, arma::vec* grad) const;
  double rows_gauss1(const arma::vec& bw, arma::vec* grad) const;
  double cond_ls(const arma::vec& bw, arma::vec* grad) const;
  double dist_ls(const arma::vec& bw, arma::vec* grad) const;
  double dist_ls1(const arma::vec& bw, arma::vec* grad, DistWork& w) const;
  // Gx x Gx x-kernel matrix and its derivatives (one per x column).
  void x_matrix(const std::vector<ColumnState>& st, bool der, arma::mat& P,
                std::vector<arma::mat>& dP) const;
};

// Density cv_ml / cv_ls of one continuous column with the Gaussian kernel: each unordered
// pair of distinct values is evaluated once (gauss_pairs_*), its term added to both rows' sums.
// Rows are cut into at most 16 blocks with about equal numbers of pairs (a function of R only,
// whatever the thread count); a block adds its terms for the later rows into its own buffer,
// and the buffers are summed in block order, so the sums do not depend on the number of
// threads. Row a's sum is (its pairs with later rows) + (earlier rows' pairs with it) +
// (c_a - 1) exp(0): the own row enters with its count minus one, as in rows().
double DensityObjective::Impl::rows_gauss1(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const bool ls = method == DensityMethod::cv_ls;
  const std::size_t R = Zu.n_rows, k = ls ? 4 : 2;
  // Block B holds rows [first[B], first[B + 1]): equal shares of the R (R - 1) / 2 pairs.
  const std::size_t nb = std::max<std::size_t>(1, std::min<std::size_t>(16, R / 32));
  std::vector<std::size_t> first(nb + 1);
  for (std::size_t B = 0; B <= nb; ++B)
    first[B] = std::min(R, static_cast<std::size_t>(std::ceil(
                               R * (1.0 - std::sqrt(1.0 - static_cast<double>(B) / nb)))));
  const double ih = 1.0 / bw(0);
  const double* y = Zu.colptr(0);
  const double* cp = c.memptr();
  arma::mat rowsum(k, R, arma::fill::zeros);
  std::vector<double> colbuf(nb * k * R, 0.0);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::size_t B = 0; B < nb; ++B) {
    double* col = &colbuf[B * k * R];
    for (std::size_t a = first[B]; a < first[B + 1]; ++a) {
      const std::size_t m = R - a - 1;
      if (m == 0) continue;
      // The block's buffer holds each quantity for rows 0..R-1 at stride R.
      if (ls)
        density_detail::gauss_pairs_ls(y[a], cp[a], y + a + 1, cp + a + 1, m, ih, der,
                                       rowsum.colptr(a), col + a + 1, R);
      else
        density_detail::gauss_pairs_ml(y[a], cp[a], y + a + 1, cp + a + 1, m, ih, der,
                                       rowsum.colptr(a), col + a + 1, R);
    }
  }
  // Earlier rows' terms, block by block in order.
  arma::mat colsum(k, R, arma::fill::zeros);
  for (std::size_t B = 0; B < nb; ++B)
    for (std::size_t q = 0; q < k; ++q) {
      const double* col = &colbuf[(B * k + q) * R];
      for (std::size_t b = 0; b < R; ++b) colsum(q, b) += col[b];
    }
  const double cK = 0.39894228040143267794 * ih;  // phi(u) / h
  const double cC = 0.28209479177387814347 * ih;  // Kbar(u) / h = exp(-u^2/4) / (2 sqrt(pi) h)
  double obj = 0.0, gr = 0.0;
  for (std::size_t a = 0; a < R; ++a) {
    const double ca = cp[a], ca1 = ca - 1.0;
    // exp(0) = 1 and its derivative factor (0 - 1) for the own row.
    const double S = cK * (rowsum(0, a) + colsum(0, a) + ca1);
    const double D = cK * (rowsum(1, a) + colsum(1, a) - ca1);
    if (!ls) {
      if (!(S > 0.0)) return kInf;
      obj -= ca * std::log(S / (n - 1.0));
      if (der) gr -= ca * D / S;
    } else {
      // T: every b including the whole own row (count c_a).
      const double T = cC * (rowsum(2, a) + colsum(2, a) + ca);
      const double E = cC * (rowsum(3, a) + colsum(3, a) - ca);
      obj += ca * (T / (n * n) - 2.0 * S / (n * (n - 1.0)));
      if (der) gr += ca * (E / (n * n) - 2.0 * D / (n * (n - 1.0)));
    }
  }
  if (der) *grad = arma::vec{gr};
  return obj;
}

// Row streaming: density cv_ml / cv_ls and conditional density cv_ml, O(R^2 d^2). The pdf
// and convolution kernels are symmetric in the two rows, so each unordered pair of distinct
// rows is evaluated once and its term added to both rows' sums, through the same fixed blocks
// as rows_gauss1 (sums independent of the thread count). The own row enters with the count
// c_a - 1 in the leave-one-out sums and c_a in the convolution sum T (every b).
double DensityObjective::Impl::rows(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const bool dens = kind == DensityKind::density;
  if (dens && d == 1 && cols[0].continuous() && K.type == KernelType::gaussian)
    return rows_gauss1(bw, grad);
  const bool ls = method == DensityMethod::cv_ls;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::pdf, bw, der);
  const std::vector<ColumnState> cst = ls ? states(Mode::conv, Mode::conv, bw, der)
                                          : std::vector<ColumnState>();
  const std::size_t R = Zu.n_rows;
  // Quantities per row: [S or Num, dS_j..., (T, dT_j...) or (Den, dDen_j...)]; the ones not
  // needed (derivatives without grad, dDen_j for y columns) stay 0.
  const std::size_t width = 2 * (1 + d);
  std::vector<char> active(width, 0);
  active[0] = 1;
  active[1 + d] = ls || !dens;
  for (std::size_t j = 0; der && j < d; ++j) {
    active[1 + j] = 1;
    active[2 + d + j] = ls || (!dens && j < dx);
  }
  auto loo = [&](std::size_t q) { return q <= d || !ls; };  // T, dT_j take every b
  const std::size_t nb = std::max<std::size_t>(1, std::min<std::size_t>(16, R / 32));
  std::vector<std::size_t> first(nb + 1);
  for (std::size_t B = 0; B <= nb; ++B)
    first[B] = std::min(R, static_cast<std::size_t>(std::ceil(
                               R * (1.0 - std::sqrt(1.0 - static_cast<double>(B) / nb)))));
  arma::mat rowsum(width, R, arma::fill::zeros), self(width, R, arma::fill::zeros);
  std::vector<double> colbuf(nb * width * R, 0.0);
  const double* cp = c.memptr();  // raw pointers: Armadillo's operator() checks bounds
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> f(d * R), df(der ? d * R : 0), fb(ls ? d * R : 0),
        dfb(ls && der ? d * R : 0), w(R);
#pragma omp for schedule(dynamic, 1)
    for (std::size_t B = 0; B < nb; ++B) {
      double* col = &colbuf[B * width * R];
      for (std::size_t a = first[B]; a < first[B + 1]; ++a) {
        const std::size_t m1 = R - a;  // b = a .. R-1; index 0 is the row itself
        for (std::size_t j = 0; j < d; ++j) {
          density_detail::eval_column(cols[j], K, st[j], Zu(a, j), Zu.colptr(j) + a, m1,
                                      &f[j * R], der ? &df[j * R] : nullptr);
          if (ls)
            density_detail::eval_column(cols[j], K, cst[j], Zu(a, j), Zu.colptr(j) + a, m1,
                                        &fb[j * R], der ? &dfb[j * R] : nullptr);
        }
        for (std::size_t q = 0; q < width; ++q) {
          if (!active[q]) continue;
          // w = product over the columns of q's group, the derivative column in place of one.
          const bool conv = ls && q > d;
          const std::size_t jd = q == 0 || q == 1 + d ? d : (q <= d ? q - 1 : q - 2 - d);
          const std::size_t j1 = !dens && q > d ? dx : d;
          const std::vector<double>& F = conv ? fb : f;
          const std::vector<double>& dF = conv ? dfb : df;
          for (std::size_t b = 0; b < m1; ++b) w[b] = 1.0;
          for (std::size_t j = 0; j < j1; ++j) {
            const double* v = j == jd ? &dF[j * R] : &F[j * R];
            for (std::size_t b = 0; b < m1; ++b) w[b] *= v[b];
          }
          self(q, a) = w[0];
          rowsum(q, a) = density_detail::row_col_update(w.data() + 1, cp + a + 1, m1 - 1, cp[a],
                                                        col + q * R + a + 1);
        }
      }
    }
  }
  arma::mat colsum(width, R, arma::fill::zeros);
  for (std::size_t B = 0; B < nb; ++B)
    for (std::size_t q = 0; q < width; ++q) {
      if (!active[q]) continue;
      const double* cq = &colbuf[(B * width + q) * R];
      for (std::size_t b = 0; b < R; ++b) colsum(q, b) += cq[b];
    }
  double obj = 0.0;
  arma::vec gr(d, arma::fill::zeros);
  std::vector<double> o(width);
  for (std::size_t a = 0; a < R; ++a) {
    const double ca = c(a);
    for (std::size_t q = 0; q < width; ++q)
      o[q] = rowsum(q, a) + colsum(q, a) + (loo(q) ? ca - 1.0 : ca) * self(q, a);
    if (dens && !ls) {
      if (!(o[0] > 0.0)) return kInf;
      obj -= ca * std::log(o[0] / (n - 1.0));
      if (der) for (std::size_t j = 0; j < d; ++j) gr(j) -= ca * o[1 + j] / o[0];
    } else if (dens) {
      obj += ca * (o[1 + d] / (n * n) - 2.0 * o[0] / (n * (n - 1.0)));
      if (der)
        for (std::size_t j = 0; j < d; ++j)
          gr(j) += ca * (o[2 + d + j] / (n * n) - 2.0 * o[1 + j] / (n * (n - 1.0)));
    } else {
      if (!(o[0] > 0.0) || !(o[1 + d] > 0.0)) return kInf;
      obj -= ca * (std::log(o[0]) - std::log(o[1 + d]));
      if (der)
        for (std::size_t j = 0; j < d; ++j) gr(j) -= ca * (o[1 + j] / o[0] - o[2 + d + j] / o[1 + d]);
    }
  }
  if (der) *grad = gr;
  return obj;
}

void DensityObjective::Impl::x_matrix(const std::vector<ColumnState>& st, bool der, arma::mat& P,
                                      std::vector<arma::mat>& dP) const {
  const std::size_t Gx = Xg.n_rows;
  P.ones(Gx, Gx);
  std::vector<arma::mat> F(dx), dF(der ? dx : 0);
  for (std::size_t j = 0; j < dx; ++j) {
    F[j].set_size(Gx, Gx);
    if (der) dF[j].set_size(Gx, Gx);
    for (std::size_t g = 0; g < Gx; ++g)
      density_detail::eval_column(cols[j], K, st[j], Xg(g, j), Xg.colptr(j), Gx, F[j].colptr(g),
                                  der ? dF[j].colptr(g) : nullptr);
    P %= F[j];
  }
  dP.assign(der ? dx : 0, arma::mat());
  for (std::size_t j = 0; der && j < dx; ++j) {
    dP[j] = dF[j];
    for (std::size_t k = 0; k < dx; ++k)
      if (k != j) dP[j] %= F[k];
  }
  // Column g holds Px(g, .): P(g', g) = kernel of query g against training g' -- symmetric.
}

// Conditional density cv_ls (Hall, Racine and Li 2004), see density.hpp.
double DensityObjective::Impl::cond_ls(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const std::size_t R = Zu.n_rows, Gx = Xg.n_rows;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::pdf, bw, der);
  const std::vector<ColumnState> cst = states(Mode::pdf, Mode::conv, bw, der);
  arma::mat Px;
  std::vector<arma::mat> dPx;
  x_matrix(st, der, Px, dPx);
  // R x R y matrices: A (convolution) and Py (density), with derivatives per y column.
  arma::mat A(R, R, arma::fill::ones), Py(R, R, arma::fill::ones);
  std::vector<arma::mat> dA(der ? dy : 0), dPy(der ? dy : 0);
  {
    std::vector<arma::mat> FA(dy), FP(dy), dFA(der ? dy : 0), dFP(der ? dy : 0);
    for (std::size_t k = 0; k < dy; ++k) {
      const std::size_t j = dx + k;
      FA[k].set_size(R, R);
      FP[k].set_size(R, R);
      if (der) { dFA[k].set_size(R, R); dFP[k].set_size(R, R); }
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::size_t r = 0; r < R; ++r) {
        density_detail::eval_column(cols[j], K, cst[j], Zu(r, j), Zu.colptr(j), R, FA[k].colptr(r),
                                    der ? dFA[k].colptr(r) : nullptr);
        density_detail::eval_column(cols[j], K, st[j], Zu(r, j), Zu.colptr(j), R, FP[k].colptr(r),
                                    der ? dFP[k].colptr(r) : nullptr);
      }
      A %= FA[k];
      Py %= FP[k];
    }
    for (std::size_t k = 0; der && k < dy; ++k) {
      dA[k] = dFA[k];
      dPy[k] = dFP[k];
      for (std::size_t l = 0; l < dy; ++l)
        if (l != k) { dA[k] %= FA[l]; dPy[k] %= FP[l]; }
    }
  }
  // V(:, g') = sum_{r' in g'} c_r' A(:, r'), and its y derivatives.
  auto group_sum = [&](const arma::mat& M) {
    arma::mat V(R, Gx, arma::fill::zeros);
    for (std::size_t g = 0; g < Gx; ++g)
      for (std::size_t r : members[g]) V.col(g) += c(r) * M.col(r);
    return V;
  };
  const arma::mat V = group_sum(A);
  std::vector<arma::mat> dV(der ? dy : 0);
  for (std::size_t k = 0; der && k < dy; ++k) dV[k] = group_sum(dA[k]);
  const std::size_t np = d;
  arma::mat part(1 + np, Gx, arma::fill::zeros);
  std::vector<char> bad(Gx, 0);
#pragma omp parallel num_threads(threads)
  {
    arma::vec u(R), AU(R), du(R), dAU(R), e;
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      const std::vector<std::size_t>& mem = members[g];
      const double s = Px(g, g);
      // u: weights of rows outside the own x group; AU = A u.
      for (std::size_t r = 0; r < R; ++r) u(r) = gx_of[r] == g ? 0.0 : c(r) * Px(gx_of[r], g);
      AU.zeros();
      double B = 0.0;
      for (std::size_t h = 0; h < Gx; ++h)
        if (h != g) {
          AU += Px(h, g) * V.col(h);
          B += Px(h, g) * ng(h);
        }
      const double uAu = arma::dot(u, AU);
      const double Den = B + s * (ng(g) - 1.0);
      if (!(Den > 0.0)) { bad[g] = 1; continue; }
      const std::size_t mg = mem.size();
      e.set_size(mg);
      double* pp = part.colptr(g);
      // Per-parameter pieces that do not depend on the left-out row.
      std::vector<arma::vec> dAUs(np);
      std::vector<double> duAu(np, 0.0), dB(np, 0.0), dsv(np, 0.0);
      std::vector<arma::vec> dus(np);
      for (std::size_t j = 0; der && j < np; ++j) {
        if (j < dx) {
          for (std::size_t r = 0; r < R; ++r)
            du(r) = gx_of[r] == g ? 0.0 : c(r) * dPx[j](gx_of[r], g);
          dAU.zeros();
          for (std::size_t h = 0; h < Gx; ++h)
            if (h != g) {
              dAU += dPx[j](h, g) * V.col(h);
              dB[j] += dPx[j](h, g) * ng(h);
            }
          duAu[j] = 2.0 * arma::dot(du, AU);
          dsv[j] = dPx[j](g, g);
          dus[j] = du;
        } else {
          const std::size_t k = j - dx;
          dAU.zeros();
          for (std::size_t h = 0; h < Gx; ++h)
            if (h != g) dAU += Px(h, g) * dV[k].col(h);
          duAu[j] = arma::dot(u, dAU);
        }
        dAUs[j] = dAU;
      }
      for (std::size_t ir = 0; ir < mg; ++ir) {
        const std::size_t r = mem[ir];
        for (std::size_t t = 0; t < mg; ++t) e(t) = s * (c(mem[t]) - (t == ir ? 1.0 : 0.0));
        double eAU = 0.0, eAe = 0.0;
        for (std::size_t t = 0; t < mg; ++t) {
          eAU += e(t) * AU(mem[t]);
          double row = 0.0;
          for (std::size_t v = 0; v < mg; ++v) row += A(mem[t], mem[v]) * e(v);
          eAe += e(t) * row;
        }
        const double Q = uAu + 2.0 * eAU + eAe;
        const double* Pyr = Py.colptr(r);
        const double* up = u.memptr();
        double Num = 0.0;
        for (std::size_t r2 = 0; r2 < R; ++r2) Num += up[r2] * Pyr[r2];
        double own = 0.0;
        for (std::size_t t = 0; t < mg; ++t) own += (c(mem[t]) - (t == ir ? 1.0 : 0.0)) * Py(mem[t], r);
        Num += s * own;
        const double cr = c(r);
        pp[0] += cr * (Q / Den / Den - 2.0 * Num / Den);
        for (std::size_t j = 0; der && j < np; ++j) {
          double dQ, dNum, dDen;
          if (j < dx) {
            const double ds = dsv[j];
            double deAU = 0.0, edAU = 0.0, deAe = 0.0, dnum_own = 0.0;
            for (std::size_t t = 0; t < mg; ++t) {
              const double det = ds * (c(mem[t]) - (t == ir ? 1.0 : 0.0));
              deAU += det * AU(mem[t]);
              edAU += e(t) * dAUs[j](mem[t]);
              double row = 0.0;
              for (std::size_t v = 0; v < mg; ++v) row += A(mem[t], mem[v]) * e(v);
              deAe += det * row;
            }
            dQ = duAu[j] + 2.0 * (deAU + edAU) + 2.0 * deAe;
            double dn = 0.0;
            const double* dup = dus[j].memptr();
            for (std::size_t r2 = 0; r2 < R; ++r2) dn += dup[r2] * Pyr[r2];
            dnum_own = ds * own;
            dNum = dn + dnum_own;
            dDen = dB[j] + ds * (ng(g) - 1.0);
          } else {
            const std::size_t k = j - dx;
            double edAU = 0.0, edAe = 0.0;
            for (std::size_t t = 0; t < mg; ++t) {
              edAU += e(t) * dAUs[j](mem[t]);
              double row = 0.0;
              for (std::size_t v = 0; v < mg; ++v) row += dA[k](mem[t], mem[v]) * e(v);
              edAe += e(t) * row;
            }
            dQ = duAu[j] + 2.0 * edAU + edAe;
            double dn = 0.0;
            const double* dPyr = dPy[k].colptr(r);
            for (std::size_t r2 = 0; r2 < R; ++r2) dn += up[r2] * dPyr[r2];
            double down = 0.0;
            for (std::size_t t = 0; t < mg; ++t)
              down += (c(mem[t]) - (t == ir ? 1.0 : 0.0)) * dPy[k](mem[t], r);
            dNum = dn + s * down;
            dDen = 0.0;
          }
          const double rq = Q / Den / Den, rd = dDen / Den;  // no Den^3: it can underflow
          pp[1 + j] += cr * (dQ / Den / Den - 2.0 * rq * rd - 2.0 * (dNum / Den - Num / Den * rd));
        }
      }
    }
  }
  for (std::size_t g = 0; g < Gx; ++g)
    if (bad[g]) return kInf;
  double obj = 0.0;
  arma::vec gr(np, arma::fill::zeros);
  for (std::size_t g = 0; g < Gx; ++g) {
    obj += part(0, g);
    for (std::size_t j = 0; der && j < np; ++j) gr(j) += part(1 + j, g);
  }
  if (der) *grad = gr / n;
  return obj / n;
}

// Conditional distribution cv_ls with one continuous y (dist_ls's formulas, in the order of
// the sorted distinct y values so that a row's indicator 1(Y_r <= y_t) is 1 from its own
// position on). G(y_t | y_s) is evaluated once per unordered pair of distinct y values
// (G(-u) = 1 - G(u)), and each left-out row costs one fused pass (density_detail::dist_row).
// Gaussian pairs beyond kGaussTail = 8.5 bandwidths are taken as 0 / 1: G(-8.5) = 9.5e-18 and
// |dG| < 2e-16 are below what the squared-error objective resolves (it compares G with 0/1
// indicators; as the regression engine's truncation, kernel_pairs.hpp); compact kernels are
// exactly 0 / 1 beyond their support anyway.
double DensityObjective::Impl::dist_ls1(const arma::vec& bw, arma::vec* grad,
                                        DistWork& w) const {
  const bool der = grad != nullptr;
  const std::size_t Gx = Xg.n_rows, T = ys.n_elem;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::cdf, bw, der);
  arma::mat Px;
  std::vector<arma::mat> dPx;
  x_matrix(st, der, Px, dPx);
  const double ih = 1.0 / bw(dx);
  const bool gauss = K.type == KernelType::gaussian;
  const double* y = ys.memptr();
  // Band of each distinct value s: the rows t with G(y_t | y_s) evaluated, [lo_s, hi_s]; below
  // it G = 0 and above it G = 1 (Gaussian pairs beyond kGaussTail bandwidths, as dist_ls;
  // the whole range for the other kernels). far(t, s) is monotone in t (y sorted).
  std::vector<std::size_t>& lo = w.lo;
  std::vector<std::size_t>& hi = w.hi;
  std::vector<std::size_t>& off = w.off;
  lo.resize(T);
  hi.resize(T);
  off.resize(T + 1);
  auto far = [&](std::size_t t, std::size_t s2) { return gauss && (y[t] - y[s2]) * ih < -kGaussTail; };
  for (std::size_t s2 = 0; s2 < T; ++s2) {
    std::size_t a = 0, b = s2;  // first t <= s2 with !far(t, s2)
    while (a < b) {
      const std::size_t mid = a + (b - a) / 2;
      if (far(mid, s2)) a = mid + 1; else b = mid;
    }
    lo[s2] = a;
    a = s2;
    b = T - 1;  // last t >= s2 with !far(s2, t)
    while (a < b) {
      const std::size_t mid = b - (b - a) / 2;
      if (far(s2, mid)) b = mid - 1; else a = mid;
    }
    hi[s2] = a;
  }
  off[0] = 0;
  for (std::size_t s2 = 0; s2 < T; ++s2) off[s2 + 1] = off[s2] + (hi[s2] - lo[s2] + 1);
  w.Hb.resize(off[T]);
  if (der) w.dHb.resize(off[T]);
  double* Hb = w.Hb.data();
  double* dHb = der ? w.dHb.data() : nullptr;
  // Rows t <= s of each band (u <= 0) first, then rows t > s from G(u) = 1 - G(-u).
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(dynamic, 16)
    for (std::size_t s2 = 0; s2 < T; ++s2) {
      double* Hc = Hb + off[s2] - lo[s2];
      double* dHc = der ? dHb + off[s2] - lo[s2] : nullptr;
      if (gauss) {
        const std::size_t m = s2 + 1 - lo[s2];
        density_detail::gauss_cdf_band(y + lo[s2], m, y[s2], ih, der, Hc + lo[s2],
                                       der ? dHc + lo[s2] : nullptr);
        continue;
      }
      for (std::size_t t = lo[s2]; t <= s2; ++t) {
        const double a = (y[t] - y[s2]) * ih;  // <= 0
        Hc[t] = density_detail::kcdf(K, a);
        if (der) {
          const double ka = gauss ? 0.39894228040143267794 * kernel_detail::exp_nonpositive(-0.5 * a * a)
                                  : density_detail::kdens(K, a);
          dHc[t] = -a * ka;
        }
      }
    }
#pragma omp for schedule(dynamic, 16)
    for (std::size_t s2 = 0; s2 < T; ++s2) {
      double* Hc = Hb + off[s2] - lo[s2];
      double* dHc = der ? dHb + off[s2] - lo[s2] : nullptr;
      for (std::size_t t = s2 + 1; t <= hi[s2]; ++t) {
        const std::size_t k = off[t] + (s2 - lo[t]);  // G(y_s | y_t), s in t's band
        Hc[t] = 1.0 - Hb[k];
        if (der) dHc[t] = -dHb[k];
      }
    }
  }
  // W(:, g) = sum_{r in g} c_r G(. | Y_r) (the 1's above each band through a running count),
  // dW likewise; then the leave-group-out mixtures A(:, g) = sum_{h != g} Px(h, g) W(:, h),
  // dAy from dW, dAx[j] from dPx[j].
  w.W.set_size(T, Gx);
  if (der) w.dW.set_size(T, Gx);
  w.A.set_size(T, Gx);
  if (der) {
    w.dAy.set_size(T, Gx);
    w.dAx.resize(dx);
    for (std::size_t j = 0; j < dx; ++j) w.dAx[j].set_size(T, Gx);
  }
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> above(T + 1);
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      double* Wg = w.W.colptr(g);
      std::fill(Wg, Wg + T, 0.0);
      std::fill(above.begin(), above.end(), 0.0);
      for (std::size_t r : members[g]) {
        const std::size_t tr = ts_of[r];
        density_detail::axpy(c(r), Hb + off[tr], hi[tr] - lo[tr] + 1, Wg + lo[tr]);
        above[hi[tr] + 1] += c(r);
      }
      double run = 0.0;
      for (std::size_t t = 0; t < T; ++t) {
        run += above[t];
        Wg[t] += run;
      }
      if (der) {
        double* dWg = w.dW.colptr(g);
        std::fill(dWg, dWg + T, 0.0);
        for (std::size_t r : members[g]) {
          const std::size_t tr = ts_of[r];
          density_detail::axpy(c(r), dHb + off[tr], hi[tr] - lo[tr] + 1, dWg + lo[tr]);
        }
      }
    }
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t g = 0; g < Gx; g += 4) {
    density_detail::mix_columns4(w.W.memptr(), T, T, Px.memptr(), Gx, g, w.A.colptr(g), T);
    if (der) {
      density_detail::mix_columns4(w.dW.memptr(), T, T, Px.memptr(), Gx, g, w.dAy.colptr(g), T);
      for (std::size_t j = 0; j < dx; ++j)
        density_detail::mix_columns4(w.W.memptr(), T, T, dPx[j].memptr(), Gx, g,
                                     w.dAx[j].colptr(g), T);
    }
  }
  const std::size_t np = d;
  arma::mat part(1 + np, Gx, arma::fill::zeros);
  std::vector<char> bad(Gx, 0);
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> me(der ? T : 0), dsv(dx), dDen(dx);
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      const double s = Px(g, g);
      double B = 0.0;
      for (std::size_t h = 0; h < Gx; ++h)
        if (h != g) B += Px(h, g) * ng(h);
      const double Den = B + s * (ng(g) - 1.0);
      if (!(Den > 0.0)) { bad[g] = 1; continue; }
      const double iden = 1.0 / Den;
      for (std::size_t j = 0; der && j < dx; ++j) {
        double dB = 0.0;
        for (std::size_t h = 0; h < Gx; ++h)
          if (h != g) dB += dPx[j](h, g) * ng(h);
        dsv[j] = dPx[j](g, g);
        dDen[j] = dB + dsv[j] * (ng(g) - 1.0);
      }
      double* pp = part.colptr(g);
      const double* Ag = w.A.colptr(g);
      const double* Wg = w.W.colptr(g);
      for (std::size_t r : members[g]) {
        const std::size_t tr = ts_of[r];
        double out[4];
        density_detail::dist_row(T, tr, lo[tr], hi[tr], ms.memptr(), Ag, Wg, Hb + off[tr], s,
                                 iden, der ? w.dAy.colptr(g) : nullptr,
                                 der ? w.dW.colptr(g) : nullptr, der ? dHb + off[tr] : nullptr,
                                 der ? me.data() : nullptr, out);
        const double cr = c(r);
        pp[0] += cr * out[0];
        if (!der) continue;
        for (std::size_t j = 0; j < dx; ++j) {
          const double sx = density_detail::dot(me.data(), w.dAx[j].colptr(g), T);
          pp[1 + j] += -2.0 * cr * iden * (sx + dsv[j] * out[1] - dDen[j] * out[2]);
        }
        pp[1 + dx] += -2.0 * cr * iden * out[3];
      }
    }
  }
  for (std::size_t g = 0; g < Gx; ++g)
    if (bad[g]) return kInf;
  double obj = 0.0;
  arma::vec gr(np, arma::fill::zeros);
  for (std::size_t g = 0; g < Gx; ++g) {
    obj += part(0, g);
    for (std::size_t j = 0; der && j < np; ++j) gr(j) += part(1 + j, g);
  }
  if (der) *grad = gr / (n * n);
  return obj / (n * n);
}

// Conditional distribution cv_ls (Li, Lin and Racine 2013), see density.hpp: several y
// columns or an ordered y (one continuous y: dist_ls1).
double DensityObjective::Impl::dist_ls(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const std::size_t R = Zu.n_rows, Gx = Xg.n_rows, Ty = Yv.n_rows;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::cdf, bw, der);
  arma::mat Px;
  std::vector<arma::mat> dPx;
  x_matrix(st, der, Px, dPx);
  // Gm(t, r) = G(y_t | Y_r): Ty x R (column r contiguous), with y derivatives.
  arma::mat Gm(Ty, R, arma::fill::ones);
  std::vector<arma::mat> dGm(der ? dy : 0);
  {
    std::vector<arma::mat> F(dy), dF(der ? dy : 0);
    for (std::size_t k = 0; k < dy; ++k) {
      const std::size_t j = dx + k;
      const double off = cols[j].continuous() ? 0.0 : 1.0;  // cdf query = levels <= value
      arma::vec yq = Yv.col(k) + off;
      F[k].set_size(Ty, R);
      if (der) dF[k].set_size(Ty, R);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::size_t r = 0; r < R; ++r)
        density_detail::eval_column_cdf_reversed(cols[j], K, st[j], Zu(r, j), yq.memptr(), Ty,
                                                 F[k].colptr(r), der ? dF[k].colptr(r) : nullptr);
      Gm %= F[k];
    }
    for (std::size_t k = 0; der && k < dy; ++k) {
      dGm[k] = dF[k];
      for (std::size_t l = 0; l < dy; ++l)
        if (l != k) dGm[k] %= F[l];
    }
  }
  auto group_sum = [&](const arma::mat& M) {  // Ty x Gx
    arma::mat W(Ty, Gx, arma::fill::zeros);
    for (std::size_t g = 0; g < Gx; ++g)
      for (std::size_t r : members[g]) W.col(g) += c(r) * M.col(r);
    return W;
  };
  const arma::mat W = group_sum(Gm);
  std::vector<arma::mat> dW(der ? dy : 0);
  for (std::size_t k = 0; der && k < dy; ++k) dW[k] = group_sum(dGm[k]);
  const std::size_t np = d;
  arma::mat part(1 + np, Gx, arma::fill::zeros);
  std::vector<char> bad(Gx, 0);
#pragma omp parallel num_threads(threads)
  {
    arma::vec Ag(Ty), Fv(Ty), Iv(Ty);
    std::vector<arma::vec> dAg(np, arma::vec(Ty));
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      const double s = Px(g, g);
      Ag.zeros();
      double B = 0.0;
      for (std::size_t h = 0; h < Gx; ++h)
        if (h != g) {
          Ag += Px(h, g) * W.col(h);
          B += Px(h, g) * ng(h);
        }
      const double Den = B + s * (ng(g) - 1.0);
      if (!(Den > 0.0)) { bad[g] = 1; continue; }
      std::vector<double> dB(np, 0.0);
      for (std::size_t j = 0; der && j < np; ++j) {
        dAg[j].zeros();
        for (std::size_t h = 0; h < Gx; ++h) {
          if (h == g) continue;
          if (j < dx) {
            dAg[j] += dPx[j](h, g) * W.col(h);
            dB[j] += dPx[j](h, g) * ng(h);
          } else {
            dAg[j] += Px(h, g) * dW[j - dx].col(h);
          }
        }
      }
      double* pp = part.colptr(g);
      // Raw pointers in the hot loops (Armadillo's operator() checks bounds).
      const double* Wg = W.colptr(g);
      const double* Ap = Ag.memptr();
      const double* mp = mt.memptr();
      double* Ip = Iv.memptr();
      double* Fp = Fv.memptr();
      for (std::size_t r : members[g]) {
        const double* Gr = Gm.colptr(r);
        if (dy == 1) {
          const double yr = Zu(r, dx);
          const double* yv = Yv.colptr(0);
          for (std::size_t t = 0; t < Ty; ++t) Ip[t] = yr <= yv[t] ? 1.0 : 0.0;
        } else {
          for (std::size_t t = 0; t < Ty; ++t) {
            bool le = true;
            for (std::size_t k = 0; k < dy; ++k) le = le && Zu(r, dx + k) <= Yv(t, k);
            Ip[t] = le ? 1.0 : 0.0;
          }
        }
        for (std::size_t t = 0; t < Ty; ++t) Fp[t] = (Ap[t] + s * (Wg[t] - Gr[t])) / Den;
        const double cr = c(r);
        double acc = 0.0;
        for (std::size_t t = 0; t < Ty; ++t) {
          const double e = Ip[t] - Fp[t];
          acc += mp[t] * e * e;
        }
        pp[0] += cr * acc;
        for (std::size_t j = 0; der && j < np; ++j) {
          double dacc = 0.0;
          const double* dA = dAg[j].memptr();
          if (j < dx) {
            const double ds = dPx[j](g, g);
            const double dDen = dB[j] + ds * (ng(g) - 1.0);
            for (std::size_t t = 0; t < Ty; ++t) {
              const double dnum = dA[t] + ds * (Wg[t] - Gr[t]);
              const double dF = (dnum - Fp[t] * dDen) / Den;
              dacc += mp[t] * (Ip[t] - Fp[t]) * dF;
            }
          } else {
            const std::size_t k = j - dx;
            const double* dWg = dW[k].colptr(g);
            const double* dGr = dGm[k].colptr(r);
            for (std::size_t t = 0; t < Ty; ++t) {
              const double dnum = dA[t] + s * (dWg[t] - dGr[t]);
              dacc += mp[t] * (Ip[t] - Fp[t]) * dnum / Den;
            }
          }
          pp[1 + j] += -2.0 * cr * dacc;
        }
      }
    }
  }
  for (std::size_t g = 0; g < Gx; ++g)
    if (bad[g]) return kInf;
  double obj = 0.0;
  arma::vec gr(np, arma::fill::zeros);
  for (std::size_t g = 0; g < Gx; ++g) {
    obj += part(0, g);
    for (std::size_t j = 0; der && j < np; ++j) gr(j) += part(1 + j, g);
  }
  if (der) *grad = gr / (n * n);
  return obj / (n * n);
}

DensityObjective::DensityObjective(const DensityData& data, DensityMethod method)
    : data_(&data), method_(method), impl_(std::make_shared<Impl>()) {
  check::require(method != DensityMethod::normal_reference, "method",
                 "normal_reference has no objective; use cv_ml or cv_ls");
  check::require(!(method == DensityMethod::cv_ml &&
                   data.kind() == DensityKind::conditional_distribution),
                 "bandwidth",
                 "a conditional distribution has no likelihood: use cv_ls or normal_reference "
                 "(as np's npcdistbw)");
  check::require(data.n() >= 3, "X", "cross-validation needs at least 3 rows (got " +
                                         std::to_string(data.n()) + "); pass the bandwidths");
  Impl& I = *impl_;
  I.kind = data.kind();
  I.method = method;
  I.cols = density_detail::make_columns(data);
  I.K = data.options().kernel;
  I.dx = data.X().n_cols;
  I.dy = data.Y().n_cols;
  I.d = I.dx + I.dy;
  I.threads = resolve_threads(data.options().n_threads);
  const arma::mat Z = I.kind == DensityKind::density ? data.X()
                                                     : arma::mat(arma::join_rows(data.X(), data.Y()));
  DistinctRows g = distinct_rows(density_detail::encode_training(I.cols, Z));
  I.Zu = std::move(g.X);
  I.c = std::move(g.count);
  I.n = static_cast<double>(data.n());
  const std::size_t R = I.Zu.n_rows;
  if (static_cast<double>(R) * R < 4e4) I.threads = 1;
  const bool triple = method == DensityMethod::cv_ls && I.kind != DensityKind::density;
  if (triple) {
    DistinctRows gx = distinct_rows(arma::mat(I.Zu.cols(0, I.dx - 1)));
    I.Xg = std::move(gx.X);
    I.gx_of = gx.group_of;
    I.members.assign(I.Xg.n_rows, {});
    I.ng.zeros(I.Xg.n_rows);
    for (std::size_t r = 0; r < R; ++r) {
      I.members[I.gx_of[r]].push_back(r);
      I.ng(I.gx_of[r]) += I.c(r);
    }
    if (I.kind == DensityKind::conditional_density) {
      check::require(R <= 4000, "bandwidth",
                     "cv_ls for a conditional density keeps (distinct rows)^2 kernel values; "
                     "with " + std::to_string(R) + " distinct rows (more than 4000) use cv_ml");
    } else {
      DistinctRows gy = distinct_rows(arma::mat(I.Zu.cols(I.dx, I.d - 1)));
      I.Yv = std::move(gy.X);
      I.ty_of = gy.group_of;
      I.mt.zeros(I.Yv.n_rows);
      for (std::size_t r = 0; r < R; ++r) I.mt(I.ty_of[r]) += I.c(r);
      if (I.dy == 1 && I.cols[I.dx].continuous()) {
        I.dist1 = true;
        const arma::uvec ord = arma::sort_index(I.Yv.col(0));
        std::vector<std::size_t> rank(ord.n_elem);
        for (std::size_t t = 0; t < ord.n_elem; ++t) rank[ord(t)] = t;
        I.ys = arma::vec(I.Yv.col(0)).elem(ord);
        I.ms = I.mt.elem(ord);
        I.ts_of.resize(R);
        for (std::size_t r = 0; r < R; ++r) I.ts_of[r] = rank[I.ty_of[r]];
      }
      check::require(static_cast<double>(R) * I.Yv.n_rows <= 2.5e7, "bandwidth",
                     "cv_ls for a conditional distribution keeps (distinct rows) x (distinct y) "
                     "values; this sample has too many (more than 2.5e7): use normal_reference "
                     "or a subsample");
    }
  }
  // Search box.
  lower_.set_size(I.d);
  upper_.set_size(I.d);
  for (std::size_t j = 0; j < I.d; ++j) {
    const Column& col = I.cols[j];
    if (col.continuous()) {
      const arma::vec v = j < I.dx ? arma::vec(data.X().col(j)) : arma::vec(data.Y().col(j - I.dx));
      const double sp = spread(v);
      if (!(sp > 0.0)) {
        std::ostringstream msg;
        msg << (j < I.dx ? "X" : "y") << ": continuous column " << ((j < I.dx ? j : j - I.dx) + 1)
            << " is constant: no bandwidth can be selected (drop the column)";
        throw InvalidArgument(msg.str());
      }
      lower_(j) = 1e-3 * sp;
      upper_(j) = 100.0 * (v.max() - v.min());
    } else {
      if (col.n_levels() < 2) {
        std::ostringstream msg;
        msg << (j < I.dx ? "X" : "y") << ": categorical column "
            << ((j < I.dx ? j : j - I.dx) + 1)
            << " has a single level: drop it (it cannot change the estimate)";
        throw InvalidArgument(msg.str());
      }
      lower_(j) = 0.0;
      upper_(j) = col.ck.max_bandwidth(col.n_levels()) * (1.0 - 1e-6);
    }
  }
}

std::size_t DensityObjective::n_unique() const { return impl_->Zu.n_rows; }

double DensityObjective::operator()(const arma::vec& bandwidth, arma::vec* grad) const {
  data_->check_bandwidth(bandwidth, "bandwidth");
  const Impl& I = *impl_;
  if (I.kind != DensityKind::density && method_ == DensityMethod::cv_ls) {
    if (I.kind == DensityKind::conditional_density) return I.cond_ls(bandwidth, grad);
    if (!I.dist1) return I.dist_ls(bandwidth, grad);
    std::unique_lock<std::mutex> lock(I.work_mutex, std::try_to_lock);
    if (lock.owns_lock()) return I.dist_ls1(bandwidth, grad, I.work);
    Impl::DistWork own;
    return I.dist_ls1(bandwidth, grad, own);
  }
  return I.rows(bandwidth, grad);
}

DensityBandwidthResult select_density_bandwidth(const DensityData& data, DensityMethod method) {
  DensityBandwidthResult res;
  res.method = density_method_name(method);
  if (method == DensityMethod::normal_reference) {
    res.bandwidth = density_normal_reference(data);
    res.objective = std::numeric_limits<double>::quiet_NaN();
    res.converged = true;
    res.message = "normal-reference rule";
    return res;
  }
  {
    // A continuous column spread beyond 2^+-200 (densities ~ 1 / spread over- or underflow, as
    // do their squares in cv_ls) is searched on data scaled by a power of two (exact), its
    // bandwidth scaled back: the search is invariant under x -> c x (log-bandwidths shift, the
    // objective shifts (cv_ml) or scales (cv_ls); optimize.hpp). The density's own unit is that
    // of its continuous columns (density: all of them; conditional density: y's; conditional
    // distribution: none).
    const std::vector<VarType>& t = data.types();
    const std::size_t dx = data.X().n_cols;
    std::vector<int> e(t.size(), 0);
    bool any = false;
    for (std::size_t j = 0; j < t.size(); ++j) {
      if (t[j] != VarType::continuous) continue;
      const arma::vec v = j < dx ? arma::vec(data.X().col(j)) : arma::vec(data.Y().col(j - dx));
      e[j] = detail::extreme_scale_exponent(v.max() - v.min(), 200);
      any = any || e[j] != 0;
    }
    if (any) {
      arma::mat Xs = data.X(), Ys = data.Y();
      std::string tx, ty;
      int units = 0;
      for (std::size_t j = 0; j < t.size(); ++j) {
        (j < dx ? tx : ty).push_back(static_cast<char>(t[j]));
        if (e[j] == 0) continue;
        if (j < dx) Xs.col(j) *= std::ldexp(1.0, -e[j]);
        else Ys.col(j - dx) *= std::ldexp(1.0, -e[j]);
        if (data.kind() == DensityKind::density ||
            (data.kind() == DensityKind::conditional_density && j >= dx))
          units += e[j];
      }
      const DensityData scaled(data.kind(), Xs, tx, Ys, ty, data.options());
      DensityBandwidthResult r = select_density_bandwidth(scaled, method);
      for (std::size_t j = 0; j < t.size(); ++j) {
        if (e[j] == 0) continue;
        r.bandwidth(j) = std::ldexp(r.bandwidth(j), e[j]);
        if (j < r.lower.n_elem) r.lower(j) = std::ldexp(r.lower(j), e[j]);
        if (j < r.upper.n_elem) r.upper(j) = std::ldexp(r.upper(j), e[j]);
      }
      // Densities in data units are 2^-units times those of the scaled data.
      if (std::isfinite(r.objective) && units != 0)
        r.objective = method == DensityMethod::cv_ml
                          ? r.objective + static_cast<double>(data.n()) * units * std::log(2.0)
                          : std::ldexp(r.objective, -units);
      return r;
    }
  }
  const DensityObjective obj(data, method);
  const std::size_t d = data.n_bandwidths();
  const std::vector<VarType>& types = data.types();
  res.lower = obj.lower();
  res.upper = obj.upper();
  arma::vec lo(d), hi(d), base(d);
  for (std::size_t j = 0; j < d; ++j) {
    const bool cont = types[j] == VarType::continuous;
    lo(j) = cont ? std::log(obj.lower()(j)) : obj.lower()(j);
    hi(j) = cont ? std::log(obj.upper()(j)) : obj.upper()(j);
  }
  // Normal-reference start for continuous columns (all-categorical data: the box's middle).
  bool any_cont = false;
  for (VarType t : types) any_cont = any_cont || t == VarType::continuous;
  const arma::vec nr = any_cont ? density_normal_reference(data) : arma::vec(d, arma::fill::zeros);
  for (std::size_t j = 0; j < d; ++j)
    base(j) = types[j] == VarType::continuous
                  ? std::min(std::max(std::log(nr(j)), lo(j)), hi(j))
                  : 0.5 * (lo(j) + hi(j));
  const DensityOptions& opt = data.options();
  std::vector<bool> log_scale(d);
  for (std::size_t j = 0; j < d; ++j) log_scale[j] = types[j] == VarType::continuous;
  const arma::mat starts = search_starts(base, lo, hi, log_scale, opt.n_starts, opt.seed);
  int evals = 0;
  auto to_bw = [&](const arma::vec& t) {
    arma::vec b(d);
    for (std::size_t j = 0; j < d; ++j) b(j) = types[j] == VarType::continuous ? std::exp(t(j)) : t(j);
    return b;
  };
  const Objective f = [&](const arma::vec& t, arma::vec& g) {
    ++evals;
    return obj(to_bw(t), &g);
  };
  MinimizeResult best;
  best.f = kInf;
  const bool have = minimize_from_starts(f, starts, lo, hi, log_scale, opt.minimize, best);
  if (!have || !std::isfinite(best.f))
    throw NumericalError(
        "bandwidth: the cross-validation objective is undefined (+inf) everywhere the search "
        "went: some leave-one-out estimate is zero (isolated points with a compact kernel); "
        "use the Gaussian kernel or normal_reference");
  res.bandwidth = to_bw(best.x);
  res.objective = best.f;
  res.n_evals = evals;
  res.converged = best.converged;
  res.message = best.message;
  return res;
}

}  // namespace attnreg
