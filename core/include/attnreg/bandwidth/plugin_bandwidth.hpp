// attnreg: the Ruppert-Sheather-Wand direct plug-in bandwidth for 1-D local-linear regression
// with the Gaussian kernel (Ruppert, Sheather and Wand 1995, JASA 90, 1257-1270), computed as
// R's KernSmooth::dpill does so that the two agree on its binning grid.
//
// The plug-in rule (RSW eq. 3.1 with K Gaussian, R(K) = 1/(2 sqrt(pi)), mu2(K) = 1):
//   h = [ sigma^2 (b - a) / (2 sqrt(pi) theta_22 n) ]^{1/5},   theta_22 = E[m''(X)^2]
// where sigma^2 and theta_22 are estimated in stages:
//  1. blocked quartic fits: the sorted (trimmed) data are cut into N equal blocks, N chosen by
//     Mallows' Cp over 1..Nmax; from them sigma^2_Q and theta_24,Q = mean m''(x) m''''(x);
//  2. pilot gamma = [C(K) sigma^2_Q (b - a) / (|theta_24,Q| n)]^{1/7} (C = 3/(8 sqrt(pi)) when
//     theta_24 < 0, 15/(16 sqrt(pi)) when > 0) for a local-cubic estimate of m'' and with it
//     theta_22 = (1/n) sum_g m''(g)^2 c_g over the middle 90% of the grid (c_g bin counts);
//  3. pilot lambda = C3(K) [sigma^4_Q (b - a) / (theta_22 n)^2]^{1/9} for a local-linear fit
//     whose residual sum of squares over its degrees of freedom n - 2 tr S + tr S'S gives sigma^2.
// Binned estimates use linear binning onto `gridsize` equally spaced points over the range of
// the trimmed data and Gaussian weights truncated at 4 bandwidths (as KernSmooth's locpoly).
#pragma once

#include "attnreg/base/arma.hpp"

namespace attnreg {

struct DpiOptions {
  int blockmax = 5;        ///< largest number of blocks for the quartic pilot
  int divisor = 20;        ///< at least `divisor` points per block
  double trim = 0.01;      ///< fraction trimmed from each end of the sorted x
  double proptrun = 0.05;  ///< fraction of the grid at each end left out of theta_22
  int gridsize = 401;      ///< binning grid
  bool binned = true;      ///< false: the pilot functionals from exact (unbinned) local fits at
                           ///< the data points, Gaussian weights to 1e-16 of their peak
};

struct DpiResult {
  double bandwidth = 0;    ///< the plug-in bandwidth h
  double sigma2 = 0;       ///< final error-variance estimate
  double theta22 = 0;      ///< estimated E[m''(X)^2]
  double sigma2_blocks = 0;  ///< stage-1 sigma^2 from blocked quartics
  double theta24_blocks = 0; ///< stage-1 theta_24
  int n_blocks = 0;        ///< N chosen by Mallows' Cp
  double gamma = 0;        ///< pilot bandwidth for m''
  double lambda = 0;       ///< pilot bandwidth for sigma^2
  arma::uword n_used = 0;  ///< observations after trimming
};

/// Direct plug-in bandwidth for local-linear regression of y on x (Gaussian kernel, h is the
/// kernel's standard deviation). Throws InvalidArgument for NaN/Inf, length mismatch, fewer
/// than 10 points or fewer than 6 distinct x; NumericalError when a pilot fit is singular
/// (too few occupied bins within a pilot bandwidth) or the curvature estimate is zero.
DpiResult dpi_local_linear(const arma::vec& x, const arma::vec& y, const DpiOptions& opt = {});

/// Binned local polynomial of degree `degree` estimating the `drv`-th derivative on the grid of
/// `gridsize` points over [a, b] (Gaussian kernel, bandwidth h, truncated at 4h). xcounts and
/// ycounts are linear-binned counts and response sums. Returns one value per grid point.
arma::vec binned_local_poly(const arma::vec& xcounts, const arma::vec& ycounts, double a,
                            double b, double h, int degree, int drv);

/// Linear binning of (x, y) onto `m` equally spaced points over [a, b]; points outside are
/// dropped. Returns (xcounts, ycounts) as the two columns of an m x 2 matrix.
arma::mat linear_bin(const arma::vec& x, const arma::vec& y, double a, double b, arma::uword m);

}  // namespace attnreg
