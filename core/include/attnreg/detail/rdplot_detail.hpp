// attnreg: the pieces of the RD plot (attnreg/rd/rdplot.hpp) shared by core/src/rd/rdplot.cpp
// and core/src/rd/rdplot_covs.cpp (private).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "attnreg/rd/rdplot.hpp"

namespace attnreg {
namespace rd {
namespace detail {
// Defined in core/src/rd/rd_prepare.cpp (the covariate check of rdrobust): modified
// Gram-Schmidt on centred columns of z (n x dz, column-major); a column within 1e-7 of the span
// of the earlier ones is dropped, one constant or collinear with [1, x] is an InvalidArgument.
void check_covariates(const std::vector<double>& z, std::size_t n, std::size_t dz,
                      const std::vector<double>& x, std::vector<std::size_t>& kept,
                      std::vector<std::size_t>& dropped);
}  // namespace detail

namespace rdplot_detail {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The rows of one side, sorted by x (stable): x, y, unit weights, and the covariates row-major
// (dz values per row, every input column; empty without covariates).
struct SideData {
  std::vector<double> x, y, w, z;
};

// Least squares by Householder QR: A is n x k, B is n x r (column-major). rdiag gets |R_jj|;
// the k x r solution (column-major) is returned when every R_jj is nonzero (else NaN).
std::vector<double> qr_ls(std::vector<double> A, std::size_t n, std::size_t k,
                          std::vector<double> B, std::size_t r, std::vector<double>& rdiag);

// qr_ls that throws NumericalError naming `what` when A is rank deficient (a diagonal of R
// below n * eps times the largest).
std::vector<double> qr_solve(std::vector<double> A, std::size_t n, std::size_t k,
                             std::vector<double> B, std::size_t r, const std::string& what);

double kernel_weight(RdKernel k, double u);
std::vector<double> linspace_edges(double a, double b, int J);

// The bin of x among edges[0..J] ([e_j, e_j+1), the outer bins take what lies beyond).
std::size_t bin_index(const std::vector<double>& edges, double x);

// The weighted polynomial fit of one side in t = (x - c) / h: sets out.h and out.n_h, returns
// the (p + 1) x (1 + cols.size()) coefficients (column-major) of y and of the covariate columns
// cols; resid (if given) gets sqrt(w) times the residuals, ns x (1 + cols.size()). The weights
// are K((x - c) / h) times the unit weights, or with kh K((x - c) / h) / h times them (the
// K_h of Calonico, Cattaneo, Farrell and Titiunik 2019: it weighs the two sides of a fit with a
// common gamma, as rdrobust does, when their bandwidths differ).
std::vector<double> side_ls(const SideData& s, RdPlotSide& out, bool right,
                            const RdPlotOptions& opt, double range, std::size_t dz,
                            const std::vector<std::size_t>& cols, std::vector<double>* resid,
                            bool kh);

// coef (scale of x - c) and the curve of one side from g (t units), shifted by `shift`.
void set_curve(RdPlotSide& out, bool right, const RdPlotOptions& opt, const double* g,
               double shift, bool add_shift);

// Covariates (core/src/rd/rdplot_covs.cpp): the checks and the kept columns (res.covs_kept,
// covs_dropped, covs_eval), the joint fit of both sides' polynomials and gamma, and the adjusted
// binned means (after fill_bins).
void covs_prepare(const SideData& L, const SideData& R, std::size_t dz, RdPlotResult& res,
                  const RdPlotOptions& opt, double range_l, double range_r);
void fit_global_covs(const SideData& L, const SideData& R, std::size_t dz, RdPlotResult& res,
                     const RdPlotOptions& opt, double range_l, double range_r);
void adjust_bins(const SideData& L, const SideData& R, std::size_t dz, RdPlotResult& res,
                 const RdPlotOptions& opt);

}  // namespace rdplot_detail
}  // namespace rd
}  // namespace attnreg
