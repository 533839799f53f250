// attnreg (internal): one column of a density product kernel, in the three forms the density
// estimators need, with the derivative with respect to the column's search parameter
// (log h for continuous columns, lambda for categorical ones). See density.hpp.
//
//   pdf   continuous K(u)/h, u = (q - t)/h;         d/dlog h = -(K(u) + u K'(u)) / h
//         categorical l(q, t; lambda);              d/dlambda
//   cdf   continuous G(u) = int_{-inf}^u K;         d/dlog h = -u K(u)
//         ordered sum_{levels z <= q} l(z, t)       (query index = number of levels <= q)
//   conv  continuous Kbar(u)/h, Kbar = K * K;       d/dlog h = -(Kbar(u) + u Kbar'(u)) / h
//         categorical sum_{levels z} l(z, q) l(z, t)
//   (li_racine_normalized: cdf and conv sum over all integers z, in closed form)
//
// Categorical values are level indices (0 .. L-1, stored as doubles); the kernel between two
// levels is read from an L x L table (cdf: (L+1) x L) built once per bandwidth.
#pragma once

#include <cstddef>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/density/density.hpp"
#include "attnreg/kernels/kernel.hpp"
#include <string>

namespace attnreg {
namespace density_detail {

enum class Mode : int { pdf = 0, cdf, conv };

/// Kernel density K(u), its derivative K'(u), integral G(u), self-convolution Kbar(t) and
/// Kbar'(t) (scalar; Kbar by Gauss-Legendre on the pieces where it is polynomial/smooth).
double kdens(const Kernel& k, double u);
double kderiv(const Kernel& k, double u);
double kcdf(const Kernel& k, double u);
double kconv(const Kernel& k, double t, double* deriv);

/// Categorical kernel derivative d l / d lambda.
double cat_deriv(const CategoricalKernel& ck, double x, double xi, double lambda, int n_levels);

/// A column: its type, its categorical kernel and levels (categorical columns).
struct Column {
  VarType type = VarType::continuous;
  CategoricalKernel ck;
  std::vector<double> levels;
  bool continuous() const { return type == VarType::continuous; }
  int n_levels() const { return static_cast<int>(levels.size()); }
};

/// Per-bandwidth state of a column in one mode: h (continuous) or the tables (categorical).
struct ColumnState {
  Mode mode = Mode::pdf;
  double bw = 1.0;
  std::vector<double> tab, dtab;
  int L = 0;
};

ColumnState make_state(const Column& col, Mode mode, double bw, bool derivs);

/// f[b] (and df[b] when df is non-null) for query value q against training values t[0..m).
/// Continuous: raw values. Categorical: level indices (cdf: q = number of levels <= query).
void eval_column(const Column& col, const Kernel& k, const ColumnState& st, double q,
                 const double* t, std::size_t m, double* f, double* df);

/// cdf mode with the roles swapped: f[a] = G(q[a] | training value t) for queries q[0..m)
/// (categorical queries as cdf row indices, i.e. the number of levels <= the value).
void eval_column_cdf_reversed(const Column& col, const Kernel& k, const ColumnState& st,
                              double t, const double* q, std::size_t m, double* f, double* df);

/// The value and derivative of a column at distance zero (q == t), pdf mode.
double self_value(const Column& col, const Kernel& k, const ColumnState& st, double q,
                  double* deriv);

/// Columns of a data set, x columns then y columns, with the training levels.
std::vector<Column> make_columns(const DensityData& data);
/// [X Y] with categorical values replaced by their level index.
arma::mat encode_training(const std::vector<Column>& cols, const arma::mat& Z);
/// One query value of column `col` in `mode`: continuous values as they are, categorical ones
/// as a level index (cdf: the number of levels <= v). Throws InvalidArgument naming `arg`,
/// the row and the column for a category never seen in training (pdf / conv).
double encode_query(const Column& col, Mode mode, double v, const std::string& arg,
                    std::size_t row, std::size_t column);


/// Fused Gaussian pair sums of one row a against the rows b = 0..m-1 of a one-column sample
/// (the density objectives' symmetric pass: the caller passes the rows after a). With
/// u = (ya - y[b]) * ih, e = exp(-u^2/2) and v = exp(-u^2/4):
///   ml: row[0] += sum_b c[b] e, row[1] += sum_b c[b] e (u^2 - 1)   (der),
///       col[b] += ca e, col[stride + b] += ca e (u^2 - 1)         (der);
///   ls: the same with e = v^2 (0 where u^2/2 > 708, as exp_nonpositive), and also
///       row[2] += sum c v, row[3] += sum c v (u^2/2 - 1), col[2 stride + b], col[3 stride + b].
/// Unnormalised (the caller multiplies by the kernel constants and 1/h). Compiled for
/// AVX-512, AVX2 and the baseline.
void gauss_pairs_ml(double ya, double ca, const double* y, const double* c, std::size_t m,
                    double ih, bool der, double* row, double* col, std::size_t stride);
void gauss_pairs_ls(double ya, double ca, const double* y, const double* c, std::size_t m,
                    double ih, bool der, double* row, double* col, std::size_t stride);

/// Gaussian CDF on a band: with a_t = (y[t] - ys) * ih in [-8.5, 0], G[t] = Phi(a_t) (by
/// tabulated Taylor series, within 1.2e-16 absolute and 2e-14 relative of kcdf; see
/// density_kernels.cpp) and, when der, dG[t] = -a_t phi(a_t).
void gauss_cdf_band(const double* y, std::size_t m, double ys, double ih, bool der, double* G,
                    double* dG);

/// Leave-one-out mixtures of the columns of M (T rows, leading dimension ld) for the outputs
/// g = g0 .. min(g0 + 4, G) - 1 at once (one read of M per 4 outputs):
///   out[k * ldo + t] = sum_{h != g0 + k} P[(g0 + k) * G + h] M[h * ld + t],
/// summed in the order h = 0, 1, ... (P is G x G, column-major; column g holds output g's
/// coefficients).
void mix_columns4(const double* M, std::size_t ld, std::size_t T, const double* P,
                  std::size_t G, std::size_t g0, double* out, std::size_t ldo);
/// One row's pair terms w[0..m) against the later rows: returns sum_b c[b] w[b] and adds
/// ca * w[b] to col[b] (their sums over the earlier rows).
double row_col_update(const double* w, const double* c, std::size_t m, double ca, double* col);
/// sum_t x[t] y[t] for t < T.
double dot(const double* x, const double* y, std::size_t T);
/// out[t] += a * x[t] for t < T.
void axpy(double a, const double* x, std::size_t T, double* out);

/// One left-out row of the conditional distribution cv_ls (one continuous y; density_cv.cpp):
/// with the y values sorted, I_t = 1(t >= tr), G_t = G(y_t | Y_r) = 0 for t < lo, Gb[t - lo]
/// for lo <= t <= hi (dG likewise from dGb) and 1 beyond (dG = 0),
/// F_t = (Ag_t + s (Wg_t - G_t)) * iden and e_t = I_t - F_t, returns
///   out[0] = sum_t m_t e_t^2,  out[1] = sum m e (Wg - G),  out[2] = sum m e F,
///   out[3] = sum m e (dAy + s (dWg - dG))   (derivatives: when dWg is non-null),
/// and stores me[t] = m_t e_t (derivatives) for the x derivatives. lo <= tr <= hi.
void dist_row(std::size_t T, std::size_t tr, std::size_t lo, std::size_t hi, const double* m,
              const double* Ag, const double* Wg, const double* Gb, double s, double iden,
              const double* dAy, const double* dWg, const double* dGb, double* me, double* out);

}  // namespace density_detail
}  // namespace attnreg
