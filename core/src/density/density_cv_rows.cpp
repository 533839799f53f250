// Row streaming objectives (density_cv_impl.hpp): density cv_ml / cv_ls and conditional density
// cv_ml, each unordered pair of distinct rows evaluated once.
#include <algorithm>
#include <cmath>

#include "attnreg/detail/density_cv_impl.hpp"

namespace attnreg {

using density_cv::ls_term;
using density_cv::ml_term;
using density_detail::ColumnState;
using density_detail::Mode;

namespace {

// Rows are cut into at most 16 blocks with about equal numbers of pairs (a function of R only,
// whatever the thread count): block B holds rows [first[B], first[B + 1]), equal shares of the
// R (R - 1) / 2 pairs. A block adds its terms for the later rows into its own buffer, and the
// buffers are summed in block order (sum_blocks), so the sums do not depend on the number of
// threads.
std::vector<std::size_t> pair_blocks(std::size_t R) {
  const std::size_t nb = std::max<std::size_t>(1, std::min<std::size_t>(16, R / 32));
  std::vector<std::size_t> first(nb + 1);
  for (std::size_t B = 0; B <= nb; ++B)
    first[B] = std::min(R, static_cast<std::size_t>(std::ceil(
                               R * (1.0 - std::sqrt(1.0 - static_cast<double>(B) / nb)))));
  return first;
}

// colsum(q, b) = sum over the blocks, in order, of their buffers' quantity q for row b (the
// buffer of block B holds quantity q for rows 0..R-1 at offset (B k + q) R); quantities with
// active[q] == 0 were never written and stay 0.
arma::mat sum_blocks(const std::vector<double>& colbuf, std::size_t nb, std::size_t k,
                     std::size_t R, const std::vector<char>& active) {
  arma::mat colsum(k, R, arma::fill::zeros);
  for (std::size_t B = 0; B < nb; ++B)
    for (std::size_t q = 0; q < k; ++q) {
      if (!active[q]) continue;
      const double* cq = &colbuf[(B * k + q) * R];
      for (std::size_t b = 0; b < R; ++b) colsum(q, b) += cq[b];
    }
  return colsum;
}

}  // namespace

// Density cv_ml / cv_ls of one continuous column with the Gaussian kernel: each unordered
// pair of distinct values is evaluated once (gauss_pairs_*), its term added to both rows' sums,
// through pair_blocks. Row a's sum is (its pairs with later rows) + (earlier rows' pairs with
// it) + (c_a - 1) exp(0): the own row enters with its count minus one, as in rows().
double DensityObjective::Impl::rows_gauss1(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const bool ls = method == DensityMethod::cv_ls;
  const std::size_t R = Zu.n_rows, k = ls ? 4 : 2;
  const std::vector<std::size_t> first = pair_blocks(R);
  const std::size_t nb = first.size() - 1;
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
  const arma::mat colsum = sum_blocks(colbuf, nb, k, R, std::vector<char>(k, 1));
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
      obj -= ml_term(ca, S, n);
      if (der) gr -= ca * D / S;
    } else {
      // T: every b including the whole own row (count c_a).
      const double T = cC * (rowsum(2, a) + colsum(2, a) + ca);
      const double E = cC * (rowsum(3, a) + colsum(3, a) - ca);
      obj += ls_term(ca, T, S, n);
      if (der) gr += ls_term(ca, E, D, n);
    }
  }
  if (der) *grad = arma::vec{gr};
  return obj;
}

namespace {

// The per-row sums of rows(): quantity q of row a is rowsum(q, a) (its pairs with later rows)
// + colsum(q, a) (earlier rows' pairs with it) + its count (minus one when leave-one-out) times
// self(q, a) (the row with itself).
struct RowSums {
  arma::mat rowsum, colsum, self;
};

// The objective and its gradient from the per-row sums of rows(): quantity q of row a (see
// rows() for their order) with the own row counted c_a - 1 times in the leave-one-out sums
// and c_a times in the convolution sums T, dT_j (every b).
double rows_objective(const DensityObjective::Impl& I, const RowSums& s, bool der,
                      arma::vec* grad) {
  const bool dens = I.kind == DensityKind::density;
  const bool ls = I.method == DensityMethod::cv_ls;
  const std::size_t d = I.d, R = I.Zu.n_rows, width = 2 * (1 + d);
  const double n = I.n;
  auto loo = [&](std::size_t q) { return q <= d || !ls; };  // T, dT_j take every b
  double obj = 0.0;
  arma::vec gr(d, arma::fill::zeros);
  std::vector<double> o(width);
  for (std::size_t a = 0; a < R; ++a) {
    const double ca = I.c(a);
    for (std::size_t q = 0; q < width; ++q)
      o[q] = s.rowsum(q, a) + s.colsum(q, a) + (loo(q) ? ca - 1.0 : ca) * s.self(q, a);
    if (dens && !ls) {
      if (!(o[0] > 0.0)) return kInf;
      obj -= ml_term(ca, o[0], n);
      if (der) for (std::size_t j = 0; j < d; ++j) gr(j) -= ca * o[1 + j] / o[0];
    } else if (dens) {
      obj += ls_term(ca, o[1 + d], o[0], n);
      if (der)
        for (std::size_t j = 0; j < d; ++j) gr(j) += ls_term(ca, o[2 + d + j], o[1 + j], n);
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

}  // namespace

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
  const std::vector<std::size_t> first = pair_blocks(R);
  const std::size_t nb = first.size() - 1;
  RowSums s;
  s.rowsum.zeros(width, R);
  s.self.zeros(width, R);
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
          s.self(q, a) = w[0];
          s.rowsum(q, a) = density_detail::row_col_update(w.data() + 1, cp + a + 1, m1 - 1,
                                                          cp[a], col + q * R + a + 1);
        }
      }
    }
  }
  s.colsum = sum_blocks(colbuf, nb, width, R, active);
  return rows_objective(*this, s, der, grad);
}

}  // namespace attnreg
