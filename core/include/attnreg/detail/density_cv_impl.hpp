// Private: the state of a DensityObjective (density.hpp) and the pieces its objectives share.
// One file per objective family in core/src/density: density_cv_rows.cpp (row streaming:
// density cv_ml / cv_ls, conditional density cv_ml), density_cv_conditional.cpp (conditional
// density cv_ls), density_cv_distribution.cpp (conditional distribution cv_ls), the x-group
// algebra they share in density_cv_groups.cpp, and the objective's set-up and the bandwidth
// search in density_cv.cpp.
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
#pragma once

#include "attnreg/base/constants.hpp"
#include <cmath>
#include <cstddef>
#include <limits>
#include <mutex>
#include <vector>

#include "attnreg/base/arma.hpp"
#include "attnreg/density/density.hpp"
#include "attnreg/detail/density_kernels.hpp"

namespace attnreg {
namespace density_cv {

constexpr double kGaussTail = 8.5;

/// Leave-one-out cv_ml term of a row with count ca whose leave-one-out kernel sum is S
/// (subtracted from the objective): ca log(S / (n - 1)).
inline double ml_term(double ca, double S, double n) { return ca * std::log(S / (n - 1.0)); }

/// cv_ls term of a row with count ca: ca (T / n^2 - 2 S / (n (n - 1))), T the convolution sum
/// over every row, S the leave-one-out sum; with derivative sums in their place, its derivative.
inline double ls_term(double ca, double T, double S, double n) {
  return ca * (T / (n * n) - 2.0 * S / (n * (n - 1.0)));
}

/// P = prod_j F[j] (elementwise, in column order) and dP[j] = dF[j] prod_{k != j} F[k] when
/// dF is given (one per factor; empty: no derivatives). F and dF are consumed.
void column_products(std::vector<arma::mat>& F, std::vector<arma::mat>& dF, arma::uword rows,
                     arma::uword cols, arma::mat& P, std::vector<arma::mat>& dP);

/// out = sum_{h != g} P(h, g) M(:, h): the mixture of the columns of the other x groups.
void mix_other_groups(const arma::mat& P, std::size_t g, const arma::mat& M, arma::vec& out);

}  // namespace density_cv

struct DensityObjective::Impl {
  using Column = density_detail::Column;
  using ColumnState = density_detail::ColumnState;
  using Mode = density_detail::Mode;

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

  // Set-up (density_cv.cpp).
  void group_x();
  void group_y();
  // The objectives.
  double rows(const arma::vec& bw, arma::vec* grad) const;
  double rows_gauss1(const arma::vec& bw, arma::vec* grad) const;
  double cond_ls(const arma::vec& bw, arma::vec* grad) const;
  double dist_ls(const arma::vec& bw, arma::vec* grad) const;
  double dist_ls1(const arma::vec& bw, arma::vec* grad, DistWork& w) const;

  // The x-group algebra of the conditional cv_ls objectives (density_cv_groups.cpp).
  // Gx x Gx x-kernel matrix and its derivatives (one per x column).
  void x_matrix(const std::vector<ColumnState>& st, bool der, arma::mat& P,
                std::vector<arma::mat>& dP) const;
  /// V(:, g) = sum_{r in g} c_r M(:, r).
  arma::mat group_sum(const arma::mat& M) const;
  /// group_sum of M and of each of its derivatives dM[k] (into dV[k]).
  void group_sums(const arma::mat& M, const std::vector<arma::mat>& dM, arma::mat& V,
                  std::vector<arma::mat>& dV) const;
  /// The leave-one-out denominator of group g, sum_{h != g} P(h, g) n_h + P(g, g) (n_g - 1),
  /// with Px for P; with dPx[j] for P, its derivative.
  double group_den(const arma::mat& P, std::size_t g) const;
  /// Sum of the groups' parts (row 0 the objective, rows 1.. the gradient) divided by `scale`;
  /// +inf when a group's denominator was not positive.
  double sum_group_parts(const arma::mat& part, const std::vector<char>& bad, double scale,
                         arma::vec* grad) const;
};

}  // namespace attnreg
