// attnreg: regression discontinuity designs -- local polynomial RD point estimators with robust
// bias-corrected inference and their MSE/CER-optimal bandwidths.
//
// Estimator (Calonico, Cattaneo and Titiunik 2014, Econometrica 82(6), sections 2-3): on each
// side of the cutoff c a kernel-weighted polynomial of order p in (x - c) with bandwidth h; the
// conventional estimate is nu! times the difference of the two nu-th coefficients (nu = deriv:
// 0 sharp/fuzzy RD, 1 kink RD). The bias of order h^(p+1-nu) is estimated from a polynomial of
// order q at bandwidth b, and the robust standard error accounts for that estimate (their
// Theorem 1; Calonico, Cattaneo and Farrell 2018, JASA 113(522), on coverage). Covariates enter
// linearly with one coefficient on both sides (Calonico, Cattaneo, Farrell and Titiunik 2019,
// REStat 101(3), eq. 4); fuzzy designs are the ratio of the outcome and treatment jumps with
// the delta-method variance.
//
// Every estimate is linear in the outcome: tau = sum_i a_i y_i with the equivalent-kernel
// weights a_i (nonzero only inside the windows); `attention_weights` returns a over the input
// rows. The variances are sums over rows of (a_i e_i)^2 (heteroskedasticity-robust: nearest-
// neighbour or HC residuals e_i) or over clusters of (sum_g a_i e_i)^2: CR1 with rdrobust's
// small-sample factor, or CR2 / CR3 with e_g replaced by (I - H_gg)^{-1/2} e_g (Bell and
// McCaffrey 2002, Survey Methodology 28(2)) / (I - H_gg)^{-1} e_g, H the weighted hat matrix of
// the fit whose residuals they are (core/src/rd/rd_local.cpp, cluster_adjust; docs/rd.md).
//
// Bandwidths (Calonico, Cattaneo and Titiunik 2014, section 4 and its supplement S.2; CCF 2020,
// Econometrics Journal 23(2) for the CER rules): the three-step plug-in (pilot d for the
// (q+1)-th derivative, then b, then h) of the rdpackages software, with its regularisation term,
// its pilot bandwidth C_K * min(sd, IQR/1.349) * N^(-1/5), its range restriction and its
// mass-point check. docs/rd.md lists the conventions and where rdrobust 2.1.1 differs.
//
// Rows are processed sorted by x; every fit visits only the rows of its window once, and the
// nearest-neighbour residuals are found by a linear scan of the tie groups, so a call costs
// O(n log n) (the sort) plus O(n) per fit.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attnreg {
namespace rd {

enum class RdKernel { triangular, epanechnikov, uniform };
enum class RdVce { nn, hc0, hc1, hc2, hc3, cr1, cr2, cr3 };
enum class MassPoints { off, check, adjust };

/// The ten bandwidth selectors, in rdbwselect's order.
const std::vector<std::string>& selector_names();

struct RdOptions {
  double c = 0.0;
  int p = 1;
  int q = -1;        ///< -1: p + 1
  int deriv = 0;
  RdKernel kernel = RdKernel::triangular;
  RdVce vce = RdVce::nn;  ///< with clusters nn/hc0/hc1 mean cr1, hc2 cr2, hc3 cr3 (rdrobust's map);
                          ///< cr1/cr2/cr3 without clusters are refused
  int nnmatch = 3;
  MassPoints masspoints = MassPoints::adjust;
  int bwcheck = 0;   ///< 0: none
  bool bwrestrict = true;
  double scaleregul = 1.0;
  bool stdvars = true;
  std::string bwselect = "mserd";
  // Fixed bandwidths (NaN: selected). h_left/h_right given alone set b = h (or h / rho).
  double h_left = std::numeric_limits<double>::quiet_NaN();
  double h_right = std::numeric_limits<double>::quiet_NaN();
  double b_left = std::numeric_limits<double>::quiet_NaN();
  double b_right = std::numeric_limits<double>::quiet_NaN();
  double rho = std::numeric_limits<double>::quiet_NaN();
  double level = 0.95;     ///< a fraction
  bool sharpbw = false;    ///< fuzzy: select bandwidths as for the sharp design
};

/// Data: n rows. t (fuzzy treatment), z (covariates, column-major n x dz), weights and cluster
/// are optional (empty). Rows with a NaN in y, x, t, z, weights, or a negative cluster code are
/// dropped and counted. Cluster codes are 0..G-1 (negative: missing).
struct RdData {
  std::vector<double> y, x, t, z, weights;
  std::size_t dz = 0;
  std::vector<std::int64_t> cluster;
};

/// A read-only view of n values (no copy): what the bindings pass when the caller's arrays are
/// already contiguous doubles (or 64-bit integers), so the core adds no copy of the input.
template <class T>
struct RdSpan {
  const T* p = nullptr;
  std::size_t n = 0;
  RdSpan() = default;
  RdSpan(const T* data, std::size_t size) : p(data), n(size) {}
  RdSpan(const std::vector<T>& v) : p(v.data()), n(v.size()) {}  // NOLINT: implicit by design
  std::size_t size() const { return n; }
  bool empty() const { return n == 0; }
  const T* data() const { return p; }
  const T& operator[](std::size_t i) const { return p[i]; }
};

/// RdData as views of the caller's arrays (the same layout and rules as RdData).
struct RdDataView {
  RdSpan<double> y, x, t, z, weights;
  std::size_t dz = 0;
  RdSpan<std::int64_t> cluster;
  RdDataView() = default;
  RdDataView(const RdData& d)  // NOLINT: implicit by design
      : y(d.y), x(d.x), t(d.t), z(d.z), weights(d.weights), dz(d.dz), cluster(d.cluster) {}
};

struct RdBandwidths {
  double h_left = 0, h_right = 0, b_left = 0, b_right = 0;
};

struct RdBwResult {
  std::vector<std::string> selectors;     ///< the rows of bws
  std::vector<RdBandwidths> bws;
  std::size_t n_left = 0, n_right = 0, n_dropped = 0;
  std::size_t m_left = 0, m_right = 0;    ///< distinct x per side
  bool mass_points = false;                ///< >= 20% repeated x on a side
  int bwcheck_used = 0;
  std::vector<std::size_t> covs_dropped;  ///< collinear covariates (column indices)
  std::string vce;  ///< the variance used: nn, hc0..hc3, or with clusters cr1, cr2, cr3
};

struct RdInference {
  double coef[3] = {0, 0, 0};   ///< conventional, bias-corrected, robust (= bias-corrected)
  double se[3] = {0, 0, 0};     ///< conventional, conventional, robust
  // Normal-theory inference on each row (Calonico, Cattaneo and Titiunik 2014, Econometrica
  // 82(6), Theorem 1): z = coef / se, two-sided p-value, interval coef -+ z_{(1+level)/2} se.
  double z[3] = {0, 0, 0};
  double p_value[3] = {0, 0, 0};
  double ci_low[3] = {0, 0, 0};
  double ci_high[3] = {0, 0, 0};
};

struct RdResult {
  RdInference est;              ///< the RD estimate (the ratio for fuzzy designs)
  bool fuzzy = false;
  RdInference first_stage;      ///< fuzzy: the treatment jump
  RdBandwidths bw;
  std::string bwselect;         ///< the selector used, or "Manual"
  std::string vce;              ///< the variance used: nn, hc0..hc3, or with clusters cr1..cr3
  std::size_t n_left = 0, n_right = 0, n_dropped = 0;
  std::size_t nh_left = 0, nh_right = 0, nb_left = 0, nb_right = 0;
  std::size_t m_left = 0, m_right = 0;
  std::size_t clusters_left = 0, clusters_right = 0, clusters = 0;
  bool mass_points = false;
  double tau_cl_left = 0, tau_cl_right = 0, tau_bc_left = 0, tau_bc_right = 0;
  double bias_left = 0, bias_right = 0;
  std::vector<double> beta_p_left, beta_p_right;  ///< outcome column, coefficients of (x - c)^j
  std::vector<double> gamma;                       ///< covariate coefficients (kept ones), outcome
  std::vector<std::size_t> covs_kept, covs_dropped;
  /// Attention weights over the input rows (0 for dropped rows and outside the windows): the
  /// conventional (reduced-form) estimate is sum_i weights[i] y[i]; for fuzzy designs the first
  /// stage is sum_i weights[i] t[i] with the same vector.
  std::vector<double> weights;
};

/// rdbwselect: bandwidths of one selector (all = false) or of all ten.
RdBwResult rdbwselect(const RdDataView& data, const RdOptions& opt, bool all = false);

/// rdrobust: estimate and inference. The data are read in place (RdData converts to a view);
/// at most 4,294,967,295 rows.
RdResult rdrobust(const RdDataView& data, const RdOptions& opt);

}  // namespace rd
}  // namespace attnreg
