// attnreg: bootstrap significance and specification tests (see specification_tests.hpp).
#include "attnreg/inference/specification_tests.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <sstream>

#include "attnreg/bandwidth/bandwidth_select.hpp"
#include "attnreg/inference/diagnostics.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/base/runtime.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

namespace {


/// Per query: S0 = sum w, S1 = sum w y, D0 = sum w s, D1 = sum w s y with s = k'(u)/k(u) of
/// continuous column `c` (internal index), u = x_t - x_q in bandwidth units. The derivative of
/// the Nadaraya-Watson ratio is then -(D1 - m D0) / (h S0), m = S1 / S0.
class NwDerivativeSink final : public TileSink {
 public:
  NwDerivativeSink(const KernelSpace& space, const arma::mat& Y, const PreparedQueries& Q,
                   std::size_t c, arma::mat& out, std::vector<char>& ok)
      : space_(space), Y_(Y), Q_(Q), c_(c), out_(out), ok_(ok) {
    k_ = Y.n_cols;
    acc_.assign(KernelSpace::kBlock * (2 + 2 * k_), 0.0);
    s_.resize(KernelSpace::kTile);
  }
  void begin_block(const std::size_t* queries, std::size_t count) override {
    qs_ = queries;
    count_ = count;
    std::fill(acc_.begin(), acc_.begin() + count * (2 + 2 * k_), 0.0);
  }
  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    const double* xs = space_.scaled().colptr(c_) + first;
    const double xq = Q_.cont(c_, qs_[slot]);
    const KernelType t = space_.spec().kernel.type;
    double* a = &acc_[slot * (2 + 2 * k_)];
    double s0 = 0, d0 = 0;
    for (std::size_t i = 0; i < len; ++i) {
      const double ws = w[i] > 0 ? w[i] * kernel_dlogk(t, xs[i] - xq) : 0.0;
      s_[i] = ws;
      s0 += w[i];
      d0 += ws;
    }
    a[0] += s0;
    a[1] += d0;
    for (std::size_t o = 0; o < k_; ++o) {
      const double* y = Y_.colptr(o) + first;
      double s1 = 0, d1 = 0;
      for (std::size_t i = 0; i < len; ++i) {
        s1 += w[i] * y[i];
        d1 += s_[i] * y[i];
      }
      a[2 + o] += s1;
      a[2 + k_ + o] += d1;
    }
  }
  void end_block(const double* row_max) override {
    const double h = space_.bandwidth()(space_.continuous_columns()[c_]);
    for (std::size_t s = 0; s < count_; ++s) {
      const std::size_t q = qs_[s];
      const double* a = &acc_[s * (2 + 2 * k_)];
      ok_[q] = row_max[s] > KernelSpace::kTinyWeight && a[0] > 0;
      for (std::size_t o = 0; o < k_; ++o) {
        const double m = a[2 + o] / a[0];
        out_(q, o) = -(a[2 + k_ + o] - m * a[1]) / (h * a[0]);
      }
    }
  }

 private:
  const KernelSpace& space_;
  const arma::mat& Y_;
  const PreparedQueries& Q_;
  std::size_t c_, k_ = 0, count_ = 0;
  const std::size_t* qs_ = nullptr;
  arma::mat& out_;
  std::vector<char>& ok_;
  std::vector<double> acc_, s_;
};

/// Per query i: A_i = sum_{t != i} w_it U_t and C_i = sum_{t != i} w_it^2 U_t^2 (per column).
class SpecSink final : public TileSink {
 public:
  SpecSink(const arma::mat& U, const arma::mat& U2, arma::mat& A, arma::mat& C)
      : U_(U), U2_(U2), A_(A), C_(C) {
    k_ = U.n_cols;
    acc_.assign(KernelSpace::kBlock * 2 * k_, 0.0);
    w2_.resize(KernelSpace::kTile);
  }
  void begin_block(const std::size_t* queries, std::size_t count) override {
    qs_ = queries;
    count_ = count;
    std::fill(acc_.begin(), acc_.begin() + count * 2 * k_, 0.0);
  }
  void tile(std::size_t slot, std::size_t first, std::size_t len, const double* w) override {
    for (std::size_t i = 0; i < len; ++i) w2_[i] = w[i] * w[i];
    double* a = &acc_[slot * 2 * k_];
    for (std::size_t o = 0; o < k_; ++o) {
      const double* u = U_.colptr(o) + first;
      const double* u2 = U2_.colptr(o) + first;
      double sa = 0, sc = 0;
      for (std::size_t i = 0; i < len; ++i) {
        sa += w[i] * u[i];
        sc += w2_[i] * u2[i];
      }
      a[o] += sa;
      a[k_ + o] += sc;
    }
  }
  void end_block(const double*) override {
    for (std::size_t s = 0; s < count_; ++s) {
      const double* a = &acc_[s * 2 * k_];
      for (std::size_t o = 0; o < k_; ++o) {
        A_(qs_[s], o) = a[o];
        C_(qs_[s], o) = a[k_ + o];
      }
    }
  }

 private:
  const arma::mat& U_;
  const arma::mat& U2_;
  arma::mat& A_;
  arma::mat& C_;
  std::size_t k_ = 0, count_ = 0;
  const std::size_t* qs_ = nullptr;
  std::vector<double> acc_, w2_;
};

arma::mat to_internal(const KernelSpace& space, const arma::mat& Y) {
  arma::mat Yi(Y.n_rows, Y.n_cols);
  const auto& order = space.order();
  for (std::size_t k = 0; k < order.size(); ++k) Yi.row(k) = Y.row(order[k]);
  return Yi;
}

void require_ok(const std::vector<QueryStatus>& st, const std::string& what) {
  for (std::size_t i = 0; i < st.size(); ++i) {
    if (st[i] != QueryStatus::ok) {
      std::ostringstream msg;
      msg << "the " << what << " at row " << (i + 1)
          << " is undefined (no kernel weight or a singular local design); use larger "
             "bandwidths or the Gaussian kernel";
      throw NumericalError(msg.str());
    }
  }
}

double bootstrap_p_value(const arma::vec& draws, double stat) {
  const double count = static_cast<double>(arma::accu(draws >= stat));
  return (1 + count) / (static_cast<double>(draws.n_elem) + 1);
}

void check_replications(int B) {
  check::require(B >= 19, "replications", "must be at least 19 (e.g. 399)");
}

}  // namespace

NullBootstrap null_bootstrap_from_name(const std::string& name, const std::string& arg) {
  const std::string s = detail::lower_case(name);
  if (s == "iid") return NullBootstrap::iid;
  if (s == "rademacher" || s == "wild") return NullBootstrap::wild_rademacher;
  if (s == "mammen") return NullBootstrap::wild_mammen;
  throw InvalidArgument(arg + ": unknown bootstrap '" + name +
                        "'; use 'mammen' (wild), 'rademacher' (wild) or 'iid'");
}

const char* null_bootstrap_name(NullBootstrap b) {
  switch (b) {
    case NullBootstrap::iid: return "iid";
    case NullBootstrap::wild_rademacher: return "rademacher";
    case NullBootstrap::wild_mammen: return "mammen";
  }
  return "?";
}

arma::mat null_bootstrap_errors(const arma::vec& e, NullBootstrap type, arma::uword B,
                                std::mt19937_64& rng) {
  const arma::uword n = e.n_elem;
  if (type == NullBootstrap::iid) {
    const arma::vec ec = e - arma::mean(e);
    std::uniform_int_distribution<arma::uword> pick(0, n - 1);
    arma::mat E(n, B);
    for (arma::uword b = 0; b < B; ++b)
      for (arma::uword i = 0; i < n; ++i) E(i, b) = ec(pick(rng));
    return E;
  }
  arma::mat V = wild_multipliers(type == NullBootstrap::wild_mammen, n, B, rng);
  V.each_col() %= e;
  return V;
}

arma::rowvec significance_statistics(const LocalPolynomial& model, std::size_t column,
                                     const arma::mat& Y) {
  const KernelSpace& space = model.space();
  const arma::mat& X = model.training_x();
  const std::size_t n = X.n_rows, k = Y.n_cols;
  check::require(column < X.n_cols, "columns", "names a column the model does not have");
  check::rows_match(Y, n, "Y", "X");
  const arma::mat Yi = to_internal(space, Y);
  const LocalFitOptions& o = model.options();
  const LocalPolySpec spec{o.degree, o.ridge};
  const auto& cont = space.continuous_columns();
  const auto cit = std::find(cont.begin(), cont.end(), column);
  arma::rowvec stat(k, arma::fill::zeros);
  if (cit != cont.end()) {
    const std::size_t c = static_cast<std::size_t>(cit - cont.begin());
    const PreparedQueries Q = space.training_queries();
    arma::mat G(n, k);
    if (o.degree >= 1) {
      LocalEvalRequest req;
      req.fit = false;
      req.gradient = true;
      const LocalEvalResult r = local_polynomial_eval(space, Yi, spec, Q, req, o.kernel.n_threads);
      require_ok(r.status, "slope");
      for (std::size_t j = 0; j < k; ++j) G.col(j) = r.gradient.slice(j).col(column);
    } else {
      std::vector<char> ok(n, 0);
      RunOptions ro;
      ro.n_threads = o.kernel.n_threads;
      ro.label = "significance test";
      space.run(Q, [&] { return std::unique_ptr<TileSink>(new NwDerivativeSink(space, Yi, Q, c, G, ok)); },
                ro);
      for (std::size_t i = 0; i < n; ++i)
        if (!ok[i])
          throw NumericalError("the Nadaraya-Watson derivative at row " + std::to_string(i + 1) +
                               " is undefined (no kernel weight); use larger bandwidths");
    }
    stat = arma::mean(arma::square(G), 0);
  } else {
    // Categorical: predictions with column j set to each level, against the first level.
    const auto& cats = space.categorical_columns();
    const std::size_t c = static_cast<std::size_t>(
        std::find(cats.begin(), cats.end(), column) - cats.begin());
    const std::vector<double>& levels = space.levels(c);
    LocalEvalRequest req;
    arma::mat Xl = X;
    Xl.col(column).fill(levels[0]);
    LocalEvalResult r0 = local_polynomial_eval(space, Yi, spec, space.prepare(Xl, "X"), req,
                                               o.kernel.n_threads);
    require_ok(r0.status, "fit with the tested column at its first level");
    for (std::size_t l = 1; l < levels.size(); ++l) {
      Xl.col(column).fill(levels[l]);
      const LocalEvalResult r = local_polynomial_eval(space, Yi, spec, space.prepare(Xl, "X"),
                                                      req, o.kernel.n_threads);
      require_ok(r.status, "fit with the tested column at another level");
      stat += arma::mean(arma::square(r.fit - r0.fit), 0);
    }
  }
  return stat;
}

SignificanceTest significance_test(const LocalPolynomial& model, const SignificanceOptions& opt,
                                   arma::uword output) {
  check::require(model.is_fitted(), "model", "is not fitted yet (call fit first)");
  model.options().kernel.kernel.require_nonnegative("the significance test");
  check_replications(opt.replications);
  check::require(opt.chunk >= 1, "chunk", "must be >= 1");
  const arma::mat& X = model.training_x();
  const std::size_t n = X.n_rows, d = X.n_cols;
  check::require(output < model.n_outputs(), "output", "is larger than the number of outputs");
  const arma::vec y = model.training_y().col(output);
  const arma::vec& sw = model.sample_weight();
  std::vector<std::size_t> cols = opt.columns;
  if (cols.empty())
    for (std::size_t j = 0; j < d; ++j) cols.push_back(j);
  for (std::size_t j : cols)
    check::require(j < d, "columns",
                   "names column " + std::to_string(j + 1) + " but X has " + std::to_string(d));
  const std::vector<VarType> types =
      parse_var_types(model.options().kernel.var_types, d, "var_types");

  SignificanceTest res;
  res.columns = cols;
  res.replications = opt.replications;
  res.bootstrap = null_bootstrap_name(opt.bootstrap);
  const arma::uword B = static_cast<arma::uword>(opt.replications);
  res.statistic.set_size(cols.size());
  res.p_value.set_size(cols.size());
  res.null_scale.set_size(cols.size());
  res.draws.set_size(B, cols.size());
  std::mt19937_64 rng(opt.seed);
  InterruptGuard guard;
  ProgressScope progress(cols.size() * B, "significance test");
  for (std::size_t jj = 0; jj < cols.size(); ++jj) {
    const std::size_t j = cols[jj];
    res.statistic(jj) = significance_statistics(model, j, arma::mat(y))(0);
    // The null model: y on the other columns with their bandwidths.
    arma::vec m0(n), e0;
    double df0 = static_cast<double>(n) - 1;
    if (d == 1) {
      const double mean = sw.is_empty() ? arma::mean(y) : arma::dot(sw, y) / arma::accu(sw);
      m0.fill(mean);
    } else {
      arma::uvec keep(d - 1);
      std::vector<VarType> t0;
      for (std::size_t c = 0, r = 0; c < d; ++c)
        if (c != j) {
          keep(r++) = c;
          t0.push_back(types[c]);
        }
      LocalFitOptions o0 = model.options();
      o0.kernel.var_types = format_var_types(t0);
      o0.compute_fitted = true;
      const bool any_cont =
          std::any_of(t0.begin(), t0.end(), [](VarType t) { return t == VarType::continuous; });
      if (!any_cont) o0.degree = 0;
      LocalPolynomial null_model(o0);
      try {
        null_model.fit(X.cols(keep), arma::mat(y), arma::vec(model.bandwidth()(keep)), sw);
      } catch (const std::exception& e) {
        throw NumericalError(std::string("the null model without column ") + std::to_string(j + 1) +
                             " cannot be fitted (" + e.what() + ")");
      }
      m0 = null_model.fitted().col(0);
      df0 = global_diagnostics(null_model).residual_df;
    }
    e0 = y - m0;
    const double scale = df0 > 0 ? std::sqrt(static_cast<double>(n) / df0) : 1.0;
    res.null_scale(jj) = scale;
    e0 *= scale;
    for (arma::uword b0 = 0; b0 < B; b0 += static_cast<arma::uword>(opt.chunk)) {
      if (guard.poll()) throw Interrupted();
      const arma::uword nb = std::min<arma::uword>(static_cast<arma::uword>(opt.chunk), B - b0);
      arma::mat Ys = null_bootstrap_errors(e0, opt.bootstrap, nb, rng);
      Ys.each_col() += m0;
      res.draws(arma::span(b0, b0 + nb - 1), jj) = significance_statistics(model, j, Ys).t();
      progress.step(jj * B + b0 + nb);
    }
    res.p_value(jj) = bootstrap_p_value(res.draws.col(jj), res.statistic(jj));
  }
  return res;
}

arma::mat specification_statistics(const KernelSpace& space, const arma::mat& U, int n_threads) {
  const std::size_t n = space.n(), k = U.n_cols;
  check::rows_match(U, n, "U", "X");
  const arma::mat Ui = to_internal(space, U);
  const arma::mat U2 = arma::square(Ui);
  arma::mat A(n, k), C(n, k);
  const PreparedQueries Q = space.training_queries();
  RunOptions ro;
  ro.n_threads = n_threads;
  ro.exclude_self = true;
  ro.label = "specification test";
  space.run(Q, [&] { return std::unique_ptr<TileSink>(new SpecSink(Ui, U2, A, C)); }, ro);
  arma::mat out(3, k);
  const double nn = static_cast<double>(n);
  for (std::size_t o = 0; o < k; ++o) {
    const double s1 = arma::dot(U.col(o), A.col(o));
    const double s2 = arma::dot(arma::square(U.col(o)), C.col(o));
    out(0, o) = s2 > 0 ? std::sqrt(nn / (nn - 1)) * s1 / std::sqrt(2 * s2) : 0.0;
    out(1, o) = s1;
    out(2, o) = s2;
  }
  return out;
}

arma::mat default_design(const arma::mat& X, const std::string& var_types) {
  const std::vector<VarType> t = parse_var_types(var_types, X.n_cols, "var_types");
  std::vector<arma::vec> cols{arma::ones<arma::vec>(X.n_rows)};
  for (std::size_t j = 0; j < X.n_cols; ++j) {
    if (t[j] == VarType::continuous) {
      cols.push_back(X.col(j));
      continue;
    }
    const arma::vec lv = arma::unique(X.col(j));
    for (arma::uword l = 1; l < lv.n_elem; ++l)
      cols.push_back(arma::conv_to<arma::vec>::from(X.col(j) == lv(l)));
  }
  arma::mat Z(X.n_rows, cols.size());
  for (std::size_t c = 0; c < cols.size(); ++c) Z.col(c) = cols[c];
  return Z;
}

namespace {

// OLS of y on Z: sets res.rank, res.coefficients and res.residuals; returns U_r.
arma::mat parametric_fit(const arma::mat& Z, const arma::vec& y, SpecificationTest& res) {
  const std::size_t n = y.n_elem;
  // OLS through the SVD of Z: u = M y with M = I - U_r U_r' (r the numerical rank).
  arma::mat Us, V;
  arma::vec s;
  if (!arma::svd_econ(Us, s, V, Z))
    throw NumericalError("Z: the SVD of the parametric design failed");
  const double tol = std::max(Z.n_rows, Z.n_cols) * s.max() * 2.220446049250313e-16;
  const arma::uvec keep = arma::find(s > tol);
  check::require(keep.n_elem >= 1, "Z", "is zero; give a design with an intercept column");
  res.rank = static_cast<int>(keep.n_elem);
  check::require(static_cast<std::size_t>(res.rank) < n, "Z",
                 "has rank >= n, so OLS fits exactly and there is nothing to test");
  const arma::mat Ur = Us.cols(keep);
  res.coefficients = V.cols(keep) * ((Ur.t() * y) / s(keep));
  res.residuals = y - Ur * (Ur.t() * y);
  return Ur;
}

// The cv_ls search of y on X with the test's kernel options.
BandwidthSelectOptions bandwidth_search_options(const SpecificationOptions& opt) {
  BandwidthSelectOptions bo;
  bo.degree = opt.degree;
  bo.method = BandwidthMethod::cv_ls;
  bo.kernel = opt.kernel;
  return bo;
}

// Kernel bandwidths: given or cv_ls of y on X (res.bandwidth, res.bandwidth_method).
void choose_bandwidths(const arma::mat& X, const arma::vec& y, const SpecificationOptions& opt,
                       const BandwidthSelectOptions& bo, SpecificationTest& res) {
  if (!opt.bandwidth.is_empty()) {
    res.bandwidth = opt.bandwidth;
    res.bandwidth_method = "given";
  } else {
    res.bandwidth = select_bandwidth(X, y, bo).bandwidth;
    res.bandwidth_method = "cv_ls";
    // A selected bandwidth can make the kernel flat over the data (local linear under a
    // linear truth: cv_ls runs to the top of the box). Then K_ij is nearly constant, J_n is a
    // deterministic function of the residuals and the bootstrap comparison is noise.
    const std::vector<VarType> t = parse_var_types(opt.kernel.var_types, X.n_cols, "var_types");
    bool flat = true;
    for (std::size_t j = 0; j < X.n_cols && flat; ++j)
      flat = t[j] == VarType::continuous &&
             res.bandwidth(j) > 5 * (X.col(j).max() - X.col(j).min());
    if (flat) {
      std::ostringstream msg;
      msg << "bandwidth: cv_ls chose bandwidths above 5 times the range of every regressor (h =";
      for (double h : res.bandwidth) msg << ' ' << h;
      msg << "), so the kernel is flat and the test has nothing to detect"
          << (opt.degree >= 1 ? "; a local-linear search does this when the data look linear: "
                                "use degree = 0 (local constant, the default) or give a bandwidth"
                              : "; give a bandwidth");
      throw NumericalError(msg.str());
    }
  }
}

}  // namespace

SpecificationTest specification_test(const arma::mat& Z, const arma::vec& y, const arma::mat& X,
                                     const SpecificationOptions& opt) {
  opt.kernel.kernel.require_nonnegative("the specification test");
  check_replications(opt.replications);
  check::require(opt.chunk >= 1, "chunk", "must be >= 1");
  // One task for the whole run: the bandwidth search and the sample's statistic (muted inner
  // reports) at 0, then the bootstrap replications.
  ProgressScope progress(static_cast<std::size_t>(opt.replications), "specification test");
  const std::size_t n = y.n_elem;
  check::require(n >= 5, "y", "needs at least 5 observations");
  check::all_finite(y, "y");
  check::rows_match(X, n, "X", "y");
  check::all_finite(X, "X");
  check::rows_match(Z, n, "Z", "y");
  check::all_finite(Z, "Z");
  check::require(Z.n_cols >= 1, "Z", "needs at least one column (e.g. an intercept)");
  check::require(X.n_cols >= 1, "X", "needs at least one kernel regressor");

  SpecificationTest res;
  res.replications = opt.replications;
  res.bootstrap = null_bootstrap_name(opt.bootstrap);
  const arma::mat Ur = parametric_fit(Z, y, res);
  const BandwidthSelectOptions bo = bandwidth_search_options(opt);
  choose_bandwidths(X, y, opt, bo, res);
  check::require(opt.reselect >= -1 && opt.reselect <= 1, "reselect",
                 "must be -1 (automatic), 0 (hold the bandwidths fixed) or 1 (select again)");
  res.reselected = opt.bandwidth.is_empty() &&
                   (opt.reselect == 1 || (opt.reselect == -1 && n <= kReselectMaxN));
  const KernelSpace space(X, res.bandwidth, opt.kernel);

  const arma::mat st =
      specification_statistics(space, arma::mat(res.residuals), opt.kernel.n_threads);
  // s2 = sum_i u_i^2 sum_{j != i} K_ij^2 u_j^2 is the variance of the statistic; 0 means no
  // pair of distinct observations has kernel weight (or every residual is 0), so J_n = 0 is
  // not a test result but an empty one.
  if (!(st(2, 0) > 0)) {
    check::require(arma::any(res.residuals != 0), "y",
                   "is fitted exactly by the parametric model Z (every residual is 0); there "
                   "is nothing to test");
    std::ostringstream msg;
    msg << "no pair of distinct observations has kernel weight at h =";
    for (double h : res.bandwidth) msg << ' ' << h;
    msg << " (" << res.bandwidth_method << "), so the statistic is undefined; use larger "
        << "bandwidths";
    check::require(false, "bandwidth", msg.str());
  }
  res.statistic = st(0, 0);
  const double nn = static_cast<double>(n);
  // I_n with the density-scaled kernel of HLR, K_h = prod_c K(u_c) / h_c (the pair engine
  // uses the shapes k(u) = K(u) / c_K; categorical kernels enter as they are).
  double kscale = 1.0;
  for (std::size_t c : space.continuous_columns())
    kscale *= opt.kernel.kernel.constant() / res.bandwidth(c);
  res.I_n = kscale * st(1, 0) / (nn * (nn - 1));
  res.asymptotic_p_value = 0.5 * std::erfc(res.statistic / std::sqrt(2.0));

  const arma::uword B = static_cast<arma::uword>(opt.replications);
  res.draws.set_size(B);
  std::mt19937_64 rng(opt.seed);
  InterruptGuard guard;
  for (arma::uword b0 = 0; b0 < B; b0 += static_cast<arma::uword>(opt.chunk)) {
    if (guard.poll()) throw Interrupted();
    const arma::uword nb = std::min<arma::uword>(static_cast<arma::uword>(opt.chunk), B - b0);
    // y* = Z beta + u v, so its OLS residuals are M (u v) (M Z beta = 0).
    const arma::mat E = null_bootstrap_errors(res.residuals, opt.bootstrap, nb, rng);
    const arma::mat W = E - Ur * (Ur.t() * E);
    if (!res.reselected) {
      res.draws.subvec(b0, b0 + nb - 1) =
          specification_statistics(space, W, opt.kernel.n_threads).row(0).t();
      progress.step(b0 + nb);
      continue;
    }
    // The whole procedure on each bootstrap sample: cv_ls on y* (a local search from the
    // sample's bandwidths, no grid), then J_n with its bandwidths.
    BandwidthSelectOptions rb = bo;
    rb.start = res.bandwidth;
    rb.grid_size = 0;
    rb.n_starts = 1;
    for (arma::uword b = 0; b < nb; ++b) {
      if (guard.poll()) throw Interrupted();
      const arma::vec ystar = (y - res.residuals) + E.col(b);
      arma::vec hb;
      try {
        hb = select_bandwidth(X, ystar, rb).bandwidth;
      } catch (const NumericalError&) {
        hb = res.bandwidth;  // no finite CV on this draw: keep the sample's bandwidths
      }
      const KernelSpace sb(X, hb, opt.kernel);
      res.draws(b0 + b) =
          specification_statistics(sb, arma::mat(W.col(b)), opt.kernel.n_threads)(0, 0);
      progress.step(b0 + b + 1);
    }
  }
  res.p_value = bootstrap_p_value(res.draws, res.statistic);
  return res;
}

}  // namespace attnreg
