// Conditional distribution cv_ls (Li, Lin and Racine 2013), see density.hpp and
// density_cv_impl.hpp for the notation: for each x group g and each left-out row r in it,
//   F(y_t) = (A(t, g) + s_g (W(t, g) - G(y_t | Y_r))) / Den_g,
//   A(:, g) = sum_{h != g} Px(h, g) W(:, h),  W(:, h) = sum_{r' in h} c_r' G(. | Y_r'),
// and the row adds c_r sum_t m_t (1(Y_r <= y_t) - F(y_t))^2 over the distinct y values y_t
// (m_t their counts); the objective is the sum over n^2.
#include <algorithm>

#include "attnreg/detail/density_cv_impl.hpp"

namespace attnreg {

using density_cv::kGaussTail;
using density_detail::ColumnState;
using density_detail::Mode;
using Impl = DensityObjective::Impl;

namespace {

// The band of each distinct value s: the rows t with G(y_t | y_s) evaluated, [lo_s, hi_s];
// below it G = 0 and above it G = 1 (Gaussian pairs beyond kGaussTail bandwidths; the whole
// range for the other kernels), and the bands' offsets in w.Hb. far(t, s) is monotone in t
// (y sorted).
void band_limits(const Impl& I, double ih, Impl::DistWork& w) {
  const std::size_t T = I.ys.n_elem;
  const bool gauss = I.K.type == KernelType::gaussian;
  const double* y = I.ys.memptr();
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
}

// G(y_t | y_s) (and dG) over each band, in w.Hb (w.dHb): rows t <= s of each band (u <= 0)
// first, then rows t > s from G(u) = 1 - G(-u).
void fill_bands(const Impl& I, double ih, bool der, Impl::DistWork& w) {
  const std::size_t T = I.ys.n_elem;
  const bool gauss = I.K.type == KernelType::gaussian;
  const double* y = I.ys.memptr();
  const std::vector<std::size_t>& lo = w.lo;
  const std::vector<std::size_t>& hi = w.hi;
  const std::vector<std::size_t>& off = w.off;
  w.Hb.resize(off[T]);
  if (der) w.dHb.resize(off[T]);
  double* Hb = w.Hb.data();
  double* dHb = der ? w.dHb.data() : nullptr;
#pragma omp parallel num_threads(I.threads)
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
        Hc[t] = density_detail::kcdf(I.K, a);
        if (der) dHc[t] = -a * density_detail::kdens(I.K, a);
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
}

// W(:, g) = sum_{r in g} c_r G(. | Y_r) (the 1's above each band through a running count),
// dW likewise; then the leave-group-out mixtures A(:, g) = sum_{h != g} Px(h, g) W(:, h),
// dAy from dW, dAx[j] from dPx[j].
void mix_bands(const Impl& I, const arma::mat& Px, const std::vector<arma::mat>& dPx, bool der,
               Impl::DistWork& w) {
  const std::size_t Gx = I.Xg.n_rows, T = I.ys.n_elem, dx = I.dx;
  const double* Hb = w.Hb.data();
  const double* dHb = der ? w.dHb.data() : nullptr;
  w.W.set_size(T, Gx);
  if (der) w.dW.set_size(T, Gx);
  w.A.set_size(T, Gx);
  if (der) {
    w.dAy.set_size(T, Gx);
    w.dAx.resize(dx);
    for (std::size_t j = 0; j < dx; ++j) w.dAx[j].set_size(T, Gx);
  }
#pragma omp parallel num_threads(I.threads)
  {
    std::vector<double> above(T + 1);
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      double* Wg = w.W.colptr(g);
      std::fill(Wg, Wg + T, 0.0);
      std::fill(above.begin(), above.end(), 0.0);
      for (std::size_t r : I.members[g]) {
        const std::size_t tr = I.ts_of[r];
        density_detail::axpy(I.c(r), Hb + w.off[tr], w.hi[tr] - w.lo[tr] + 1, Wg + w.lo[tr]);
        above[w.hi[tr] + 1] += I.c(r);
      }
      double run = 0.0;
      for (std::size_t t = 0; t < T; ++t) {
        run += above[t];
        Wg[t] += run;
      }
      if (der) {
        double* dWg = w.dW.colptr(g);
        std::fill(dWg, dWg + T, 0.0);
        for (std::size_t r : I.members[g]) {
          const std::size_t tr = I.ts_of[r];
          density_detail::axpy(I.c(r), dHb + w.off[tr], w.hi[tr] - w.lo[tr] + 1, dWg + w.lo[tr]);
        }
      }
    }
  }
#pragma omp parallel for num_threads(I.threads) schedule(static)
  for (std::size_t g = 0; g < Gx; g += 4) {
    density_detail::mix_columns4(w.W.memptr(), T, T, Px.memptr(), Gx, g, w.A.colptr(g), T);
    if (der) {
      density_detail::mix_columns4(w.dW.memptr(), T, T, Px.memptr(), Gx, g, w.dAy.colptr(g), T);
      for (std::size_t j = 0; j < dx; ++j)
        density_detail::mix_columns4(w.W.memptr(), T, T, dPx[j].memptr(), Gx, g,
                                     w.dAx[j].colptr(g), T);
    }
  }
}

}  // namespace

// One continuous y (dist_ls's formulas, in the order of the sorted distinct y values so that a
// row's indicator 1(Y_r <= y_t) is 1 from its own position on). G(y_t | y_s) is evaluated once
// per unordered pair of distinct y values (G(-u) = 1 - G(u)), and each left-out row costs one
// fused pass (density_detail::dist_row). Gaussian pairs beyond kGaussTail = 8.5 bandwidths are
// taken as 0 / 1: G(-8.5) = 9.5e-18 and |dG| < 2e-16 are below what the squared-error
// objective resolves (it compares G with 0/1 indicators; as the regression engine's
// truncation, kernel_pairs.hpp); compact kernels are exactly 0 / 1 beyond their support anyway.
double DensityObjective::Impl::dist_ls1(const arma::vec& bw, arma::vec* grad,
                                        DistWork& w) const {
  const bool der = grad != nullptr;
  const std::size_t Gx = Xg.n_rows, T = ys.n_elem;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::cdf, bw, der);
  arma::mat Px;
  std::vector<arma::mat> dPx;
  x_matrix(st, der, Px, dPx);
  const double ih = 1.0 / bw(dx);
  band_limits(*this, ih, w);
  fill_bands(*this, ih, der, w);
  mix_bands(*this, Px, dPx, der, w);
  const double* Hb = w.Hb.data();
  const double* dHb = der ? w.dHb.data() : nullptr;
  arma::mat part(1 + d, Gx, arma::fill::zeros);
  std::vector<char> bad(Gx, 0);
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> me(der ? T : 0), dsv(dx), dDen(dx);
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      const double s = Px(g, g);
      const double Den = group_den(Px, g);
      if (!(Den > 0.0)) { bad[g] = 1; continue; }
      const double iden = 1.0 / Den;
      for (std::size_t j = 0; der && j < dx; ++j) {
        dsv[j] = dPx[j](g, g);
        dDen[j] = group_den(dPx[j], g);
      }
      double* pp = part.colptr(g);
      const double* Ag = w.A.colptr(g);
      const double* Wg = w.W.colptr(g);
      for (std::size_t r : members[g]) {
        const std::size_t tr = ts_of[r];
        double out[4];
        density_detail::dist_row(T, tr, w.lo[tr], w.hi[tr], ms.memptr(), Ag, Wg, Hb + w.off[tr],
                                 s, iden, der ? w.dAy.colptr(g) : nullptr,
                                 der ? w.dW.colptr(g) : nullptr, der ? dHb + w.off[tr] : nullptr,
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
  return sum_group_parts(part, bad, n * n, grad);
}

namespace {

// Gm(t, r) = G(y_t | Y_r): Ty x R (column r contiguous), with y derivatives.
void cdf_matrix(const Impl& I, const std::vector<ColumnState>& st, bool der, arma::mat& Gm,
                std::vector<arma::mat>& dGm) {
  const std::size_t R = I.Zu.n_rows, Ty = I.Yv.n_rows, dx = I.dx, dy = I.dy;
  std::vector<arma::mat> F(dy), dF(der ? dy : 0);
  for (std::size_t k = 0; k < dy; ++k) {
    const std::size_t j = dx + k;
    const double off = I.cols[j].continuous() ? 0.0 : 1.0;  // cdf query = levels <= value
    arma::vec yq = I.Yv.col(k) + off;
    F[k].set_size(Ty, R);
    if (der) dF[k].set_size(Ty, R);
#pragma omp parallel for num_threads(I.threads) schedule(static)
    for (std::size_t r = 0; r < R; ++r)
      density_detail::eval_column_cdf_reversed(I.cols[j], I.K, st[j], I.Zu(r, j), yq.memptr(), Ty,
                                               F[k].colptr(r), der ? dF[k].colptr(r) : nullptr);
  }
  density_cv::column_products(F, dF, Ty, R, Gm, dGm);
}

// The matrices of one evaluation of dist_ls.
struct DistMatrices {
  arma::mat Px, Gm, W;
  std::vector<arma::mat> dPx, dGm, dW;
};

// Row r of group g (A its mixture Ag, dA the derivatives' dAg, Den and dB its denominator and
// the x derivatives' ones): adds its term to pp[0] and its gradient to pp[1 + j]. Ip and Fp
// are work buffers of Ty values.
void add_dist_row(const Impl& I, const DistMatrices& m, std::size_t g, std::size_t r,
                  const arma::vec& Ag, const std::vector<arma::vec>& dAg, double Den,
                  const std::vector<double>& dDen, bool der, double* Ip, double* Fp, double* pp) {
  const std::size_t Ty = I.Yv.n_rows, dx = I.dx, dy = I.dy;
  const double s = m.Px(g, g);
  // Raw pointers in the hot loops (Armadillo's operator() checks bounds).
  const double* Wg = m.W.colptr(g);
  const double* Ap = Ag.memptr();
  const double* mp = I.mt.memptr();
  const double* Gr = m.Gm.colptr(r);
  if (dy == 1) {
    const double yr = I.Zu(r, dx);
    const double* yv = I.Yv.colptr(0);
    for (std::size_t t = 0; t < Ty; ++t) Ip[t] = yr <= yv[t] ? 1.0 : 0.0;
  } else {
    for (std::size_t t = 0; t < Ty; ++t) {
      bool le = true;
      for (std::size_t k = 0; k < dy; ++k) le = le && I.Zu(r, dx + k) <= I.Yv(t, k);
      Ip[t] = le ? 1.0 : 0.0;
    }
  }
  for (std::size_t t = 0; t < Ty; ++t) Fp[t] = (Ap[t] + s * (Wg[t] - Gr[t])) / Den;
  const double cr = I.c(r);
  double acc = 0.0;
  for (std::size_t t = 0; t < Ty; ++t) {
    const double e = Ip[t] - Fp[t];
    acc += mp[t] * e * e;
  }
  pp[0] += cr * acc;
  for (std::size_t j = 0; der && j < I.d; ++j) {
    double dacc = 0.0;
    const double* dA = dAg[j].memptr();
    if (j < dx) {
      const double ds = m.dPx[j](g, g);
      for (std::size_t t = 0; t < Ty; ++t) {
        const double dnum = dA[t] + ds * (Wg[t] - Gr[t]);
        const double dF = (dnum - Fp[t] * dDen[j]) / Den;
        dacc += mp[t] * (Ip[t] - Fp[t]) * dF;
      }
    } else {
      const std::size_t k = j - dx;
      const double* dWg = m.dW[k].colptr(g);
      const double* dGr = m.dGm[k].colptr(r);
      for (std::size_t t = 0; t < Ty; ++t) {
        const double dnum = dA[t] + s * (dWg[t] - dGr[t]);
        dacc += mp[t] * (Ip[t] - Fp[t]) * dnum / Den;
      }
    }
    pp[1 + j] += -2.0 * cr * dacc;
  }
}

}  // namespace

// Several y columns or an ordered y (one continuous y: dist_ls1).
double DensityObjective::Impl::dist_ls(const arma::vec& bw, arma::vec* grad) const {
  const bool der = grad != nullptr;
  const std::size_t Gx = Xg.n_rows, Ty = Yv.n_rows, np = d;
  const std::vector<ColumnState> st = states(Mode::pdf, Mode::cdf, bw, der);
  DistMatrices m;
  x_matrix(st, der, m.Px, m.dPx);
  cdf_matrix(*this, st, der, m.Gm, m.dGm);
  group_sums(m.Gm, m.dGm, m.W, m.dW);
  arma::mat part(1 + np, Gx, arma::fill::zeros);
  std::vector<char> bad(Gx, 0);
#pragma omp parallel num_threads(threads)
  {
    arma::vec Ag(Ty), Fv(Ty), Iv(Ty);
    std::vector<arma::vec> dAg(np, arma::vec(Ty));
    std::vector<double> dDen(np, 0.0);
#pragma omp for schedule(static)
    for (std::size_t g = 0; g < Gx; ++g) {
      density_cv::mix_other_groups(m.Px, g, m.W, Ag);
      const double Den = group_den(m.Px, g);
      if (!(Den > 0.0)) { bad[g] = 1; continue; }
      for (std::size_t j = 0; der && j < np; ++j) {
        if (j < dx) {
          density_cv::mix_other_groups(m.dPx[j], g, m.W, dAg[j]);
          dDen[j] = group_den(m.dPx[j], g);
        } else {
          density_cv::mix_other_groups(m.Px, g, m.dW[j - dx], dAg[j]);
        }
      }
      for (std::size_t r : members[g])
        add_dist_row(*this, m, g, r, Ag, dAg, Den, dDen, der, Iv.memptr(), Fv.memptr(),
                     part.colptr(g));
    }
  }
  return sum_group_parts(part, bad, n * n, grad);
}

}  // namespace attnreg
