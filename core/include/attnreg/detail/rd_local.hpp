// attnreg: the pieces of the regression discontinuity estimators shared by core/src/rd/*.cpp
// (private; the public API is attnreg/rd/rdrobust.hpp). All local fits use the basis in
// bandwidth units, t = (x - c) / h, and convert coefficients to the scale of (x - c) at the end
// (beta_j = beta_t,j / h^j), so the polynomial Gram matrices stay well conditioned for any scale
// of x and any order.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnreg/rd/rdrobust.hpp"

namespace attnreg {
namespace rd {
namespace detail {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kSqrtEps = std::sqrt(std::numeric_limits<double>::epsilon());

double kernel_value(RdKernel k, double u);
double pilot_constant(RdKernel k);
double factorial(int k);
std::vector<double> spd_inverse(const std::vector<double>& g, int k, bool& ok);

// ---------------------------------------------------------------- data on one side
struct Side {
  std::vector<double> x;           // sorted ascending (units of the caller)
  std::vector<double> D;           // row-major n x k: outcome, [treatment], covariates
  std::size_t k = 1;
  std::vector<double> fw;          // unit weights (empty: none)
  std::vector<std::int64_t> cl;    // cluster codes (empty: none)
  std::vector<std::uint32_t> row;  // input row of each element
  std::size_t n() const { return x.size(); }
};

// The rows of one side with a positive weight at bandwidth h. When they are a contiguous block
// of the side (always without unit weights) the window points into the side's arrays; otherwise
// it holds a gathered copy. Movable, not copyable (the pointers may refer to its own copy).
struct Window {
  const double* x = nullptr;          // n values, ascending
  const double* D = nullptr;          // row-major n x k
  const std::int64_t* cl = nullptr;   // cluster codes, or null
  double c = 0;
  std::size_t k = 1;
  bool block = true;                  // rows first .. first + n - 1 of the side
  std::size_t first = 0;
  std::size_t n() const { return n_; }
  double u(std::size_t j) const { return x[j] - c; }  // x - c
  std::size_t idx(std::size_t j) const { return block ? first + j : idx_[j]; }  // side position
  Window() = default;
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  Window(Window&&) = default;
  Window& operator=(Window&&) = default;

  std::size_t n_ = 0;
  std::vector<std::size_t> idx_;      // the gathered copy (block = false)
  std::vector<double> x_, D_;
  std::vector<std::int64_t> cl_;
};

// Weighted polynomial fit of order o in t = u / hs: Gram G, its inverse, coefficients (o+1) x k
// in t units (row-major).
struct Fit {
  int o = 0;
  double hs = 1;
  std::vector<double> Ginv;
  std::vector<double> beta;
  bool ok = false;
};

Window gather(const Side& s, double c, double h, RdKernel kern);
std::vector<double> window_weights(const Side& s, const Window& w, double c, double h,
                                   RdKernel kern);
// The number of distinct x with a positive weight, counted up to `enough` (it stops there).
std::size_t distinct_positive(const Window& w, const std::vector<double>& wt,
                              std::size_t enough = static_cast<std::size_t>(-1));
Fit poly_fit(const Window& w, const std::vector<double>& wt, int o, double hs);
std::vector<double> coef_weights(const Window& w, const std::vector<double>& wt, const Fit& f,
                                 int coef);
void coef_weights_into(const Window& w, std::vector<double>& wt, const Fit& f, int coef);
double bias_constant(const Window& w, const std::vector<double>& wt, const Fit& f, int coef);
// The nearest-neighbour residuals of a whole side (nn_residuals over all its rows), from which
// those of any window that is a contiguous block of the side follow by recomputing the groups
// near its cut edges.
// Only the rows [r0, r1) that some window has needed are computed (cover): the windows of a
// side all end at the cutoff, so they are nested and the covered range grows at one end.
// The buffer has a row for every row of the side but is left uninitialised, so only the rows
// written (the covered ones) take memory.
struct NnSide {
  const Side* side = nullptr;
  std::unique_ptr<double[]> res;  // row-major n x k; rows [r0, r1) computed
  std::size_t r0 = 0, r1 = 0;
  // Extends the covered rows to include [first, last) (widened to whole tie groups).
  void cover(std::size_t first, std::size_t last, int nnmatch);
};
// res points at row `base` of the block (rows before it are not written).
void nn_residuals(const double* x, const double* D, std::size_t n, std::size_t k, int nnmatch,
                  std::size_t from, std::size_t to, double* res, std::size_t base = 0);
std::vector<double> residuals(const Window& w, RdVce vce, bool clustered, int nnmatch,
                              const Fit* f, const std::vector<double>* wt, int d,
                              const NnSide* nn_side = nullptr);
double variance_sum(const Window& w, const std::vector<double>& ell,
                    const std::vector<double>& res, const std::vector<double>& s, int k_df,
                    std::size_t* n_clusters = nullptr, bool cr1_factor = true);
// CR2/CR3 (the leverage-adjusted cluster variances): whether vce is one of them.
inline bool cluster_leverage(RdVce v) { return v == RdVce::cr2 || v == RdVce::cr3; }
void cluster_adjust(const Window& w, bool cr3, const Fit& f, const std::vector<double>& wt,
                    std::vector<double>& res);
void partial_sums(const Window& w, const std::vector<double>& wt, const Fit& f, std::size_t ny,
                  std::size_t dz, std::vector<double>& ZZ, std::vector<double>& ZY,
                  std::vector<double>* Ztil = nullptr);
std::vector<double> solve_gamma(const std::vector<double>& ZZ, const std::vector<double>& ZY,
                                std::size_t dz, std::size_t ny);

// The data after the checks: the rows of each side, sorted by x.
struct Prepared {
  Side left, right;           // raw units
  std::size_t n = 0, n_dropped = 0, dz = 0;
  bool fuzzy = false;
  double x_min = 0, x_max = 0;
  std::size_t m_left = 0, m_right = 0;
  // The i-th smallest x (the sides in turn: no separate sorted copy).
  double x_sorted(std::size_t i) const {
    return i < left.n() ? left.x[i] : right.x[i - left.n()];
  }
  std::vector<std::size_t> covs_kept, covs_dropped;
  std::size_t n_input = 0;
  std::size_t g_left = 0, g_right = 0;
};

Prepared prepare(const RdDataView& d, const RdOptions& opt);
double column_var(const Side& s, std::size_t col);
double column_mean(const Side& s, std::size_t col);
void validate(const RdOptions& opt);
RdOptions normalised(RdOptions opt, bool clustered);
// The name of the variance a normalised vce computes (cr1/cr2/cr3 with clusters).
std::string vce_label(RdVce vce, bool clustered);
int effective_bwcheck(const Prepared& P, const RdOptions& opt, bool& mass);
// Selects the bandwidths. It may rescale P's sides in place while it runs (stdvars): with
// `restore` (the input P was prepared from) they are put back in raw units before it returns;
// without, P is left in the rule's units (for callers that need only the bandwidths).
std::map<std::string, RdBandwidths> select_bandwidths(Prepared& P, const RdOptions& opt,
                                                      const std::string& which, int bwcheck,
                                                      const RdDataView* restore = nullptr);

}  // namespace detail
}  // namespace rd
}  // namespace attnreg
