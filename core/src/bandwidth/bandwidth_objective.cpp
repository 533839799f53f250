// attnreg: the bandwidth objective (bandwidth_select.hpp): input checks, the tie groups and the
// sorted data of the fast-sum path (prepared once), and one evaluation with its gradient (the
// pass is bandwidth_gradient.cpp's, the derivation is written there).
#include "attnreg/detail/bandwidth_select_internal.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <sstream>

#include "attnreg/bandwidth/criteria.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/base/names.hpp"

namespace attnreg {

using namespace bandwidth_detail;  // bandwidth_select_internal.hpp

namespace {

// ------------------------------------------------------------------ construction
// Observation weights (see "Weights" in bandwidth_select.hpp): rows of weight 0 take no part in
// any fit nor in the criterion, so they are dropped; the rest are divided by their maximum
// (every criterion is invariant to a common factor).
void take_weights(const arma::mat& X_in, const arma::vec& y_in, const arma::vec& weights,
                  arma::mat& X, arma::vec& y, arma::vec& w) {
  check::require(weights.n_elem == X_in.n_rows, "weights",
                 "must have one value per row of X (got " + std::to_string(weights.n_elem) +
                     " weights for " + std::to_string(X_in.n_rows) + " rows)");
  check::require(weights.is_finite() && arma::all(weights >= 0.0), "weights",
                 "must be finite and >= 0");
  check::require(arma::any(weights > 0.0), "weights",
                 "are all zero; give at least one positive weight");
  const arma::uvec keep = arma::find(weights > 0.0);
  if (keep.n_elem < X_in.n_rows) {
    X = X_in.rows(keep);
    if (y_in.n_elem == X_in.n_rows) y = y_in.elem(keep);
  }
  w = weights.elem(keep);
  w /= w.max();
}

void check_inputs(const arma::mat& X, const arma::vec& y, const BandwidthSelectOptions& opt) {
  check::require(opt.degree == 0 || opt.degree == 1, "estimator",
                 "must be local constant (lc, degree 0) or local linear (ll, degree 1)");
  check::require(opt.method == BandwidthMethod::cv_ls || opt.method == BandwidthMethod::aic ||
                     opt.method == BandwidthMethod::gcv,
                 "method", "the objective exists for cv_ls, aic and gcv only");
  check::require(std::isfinite(opt.ridge) && opt.ridge >= 0.0, "ridge", "must be >= 0 and finite");
  check::require(X.n_cols >= 1, "X", "needs at least one column");
  check::require(X.n_cols <= 64, "X", "bandwidth selection handles at most 64 columns");
  check::require(X.n_rows == y.n_elem, "y",
                 "must have one value per row of X (got " + std::to_string(y.n_elem) +
                     " values for " + std::to_string(X.n_rows) + " rows)");
  check::require(X.n_rows >= 5, "X",
                 "bandwidth selection needs at least 5 rows (got " + std::to_string(X.n_rows) +
                     "); pass a bandwidth by hand");
  check::all_finite(X, "X");
  check::all_finite(y, "y");
}

// Rows of X grouped by identical values (see "Ties" in bandwidth_gradient.cpp).
struct TieGroups {
  arma::mat Xu;
  arma::vec rows, unit, count, ybar, ss;
  double weight_sum = 0.0;
};

// Group identical rows (see "Ties"; distinct_rows.hpp); with weights, rows identical in X and
// in their weight (see "Weights").
TieGroups group_ties(const arma::mat& X, const arma::vec& y, const arma::vec& w) {
  TieGroups t;
  const std::size_t n = X.n_rows;
  DistinctRows groups = distinct_rows(w.is_empty() ? X : arma::mat(arma::join_rows(X, w)));
  const std::size_t G = groups.X.n_rows;
  t.rows = std::move(groups.count);
  if (w.is_empty()) {
    t.Xu = std::move(groups.X);
    t.unit.ones(G);
  } else {
    t.Xu = groups.X.cols(0, X.n_cols - 1);
    t.unit = groups.X.col(X.n_cols);
  }
  t.count = t.rows % t.unit;
  t.weight_sum = arma::accu(t.count);
  t.ybar.zeros(G);
  t.ss.zeros(G);
  for (std::size_t i = 0; i < n; ++i) t.ybar(groups.group_of[i]) += y(i);
  t.ybar /= t.rows;
  for (std::size_t i = 0; i < n; ++i) {  // two-pass: no cancellation in SS
    const std::size_t g = groups.group_of[i];
    const double e = y(i) - t.ybar(g);
    t.ss(g) += e * e;
  }
  return t;
}

// The fast-sum path's data: the distinct rows sorted by their value, with their weights
// (empty when all equal) and per-group numbers in sorted order.
struct FastSorted {
  double center = 0.0;
  arma::vec x, w, y, rows, unit, ss;
  std::vector<std::int64_t> self;
};

FastSorted sort_distinct(const arma::vec& xu, const arma::vec& ow, const arma::vec& ybar,
                         const arma::vec& rows, const arma::vec& unit, const arma::vec& ss) {
  FastSorted f;
  const std::size_t G = xu.n_elem;
  f.center = arma::mean(xu);
  std::vector<std::size_t> perm(G);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::stable_sort(perm.begin(), perm.end(),
                   [&](std::size_t a, std::size_t b) { return xu(a) < xu(b); });
  f.x.set_size(G);
  f.y.set_size(G);
  f.rows.set_size(G);
  f.unit.set_size(G);
  f.ss.set_size(G);
  if (!ow.is_empty()) f.w.set_size(G);
  f.self.resize(G);
  for (std::size_t k = 0; k < G; ++k) {
    f.x(k) = xu(perm[k]);
    f.y(k) = ybar(perm[k]);
    f.rows(k) = rows(perm[k]);
    f.unit(k) = unit(perm[k]);
    f.ss(k) = ss(perm[k]);
    if (!ow.is_empty()) f.w(k) = ow(perm[k]);
    f.self[k] = static_cast<std::int64_t>(k);
  }
  return f;
}

// ------------------------------------------------------------------ evaluation
void check_fast_bandwidth(double h) {
  if (!(std::isfinite(h) && h > 0.0)) {
    std::ostringstream msg;
    msg << "bandwidth: must be > 0 and finite for continuous column 1, got " << h
        << " (pass a positive number, e.g. a rule-of-thumb 1.06 sd n^(-1/5))";
    throw InvalidArgument(msg.str());
  }
}

// Categorical columns kc of the space: their codes in internal and original order (kept alive
// in codes_int / codes_q), kernels and lambdas.
void set_categorical(Shared& sh, const KernelSpace* space, const std::vector<std::size_t>& kc,
                     const arma::mat& Xu, const std::vector<VarType>& types,
                     const BandwidthSelectOptions& opt, const arma::vec& bandwidth, bool grad,
                     std::vector<arma::vec>& codes_int, std::vector<arma::vec>& codes_q) {
  codes_int.resize(kc.size());
  codes_q.resize(kc.size());
  for (std::size_t c = 0; c < kc.size(); ++c) {
    const std::size_t j = kc[c];
    codes_q[c] = Xu.col(j);
    codes_int[c] = codes_q[c].elem(arma::conv_to<arma::uvec>::from(space->order()));
    sh.cat_codes_int.push_back(codes_int[c].memptr());
    sh.cat_codes_q.push_back(codes_q[c].memptr());
    sh.cat_kern.push_back(types[j] == VarType::ordered ? opt.kernel.ordered_kernel
                                                       : opt.kernel.unordered_kernel);
    sh.cat_lambda.push_back(bandwidth(j));
    if (grad)
      check::require(bandwidth(j) > 0.0 &&
                         !(bandwidth(j) >= 1.0 &&
                           sh.cat_kern.back().type == CategoricalKernelType::wang_van_ryzin),
                     "bandwidth",
                     "categorical lambdas must lie strictly inside the kernel's range (above 0; "
                     "below 1 for wang_van_ryzin) for a gradient");
  }
}

// Parameters in column order (with a gradient), and the per-query outputs for n queries.
void set_parameters(Shared& sh, std::size_t d, std::size_t n, const std::vector<std::size_t>& cc,
                    const std::vector<std::size_t>& kc, bool grad) {
  if (grad) {
    sh.n_par = d;
    sh.par_cont.assign(d, -1);
    sh.par_cat.assign(d, -1);
    for (std::size_t a = 0; a < cc.size(); ++a) sh.par_cont[cc[a]] = static_cast<int>(a);
    for (std::size_t c = 0; c < kc.size(); ++c) sh.par_cat[kc[c]] = static_cast<int>(c);
  }
  sh.resid.assign(n, 0.0);
  sh.lev.assign(n, 0.0);
  sh.dm.assign(n * sh.n_par, 0.0);
  sh.dlev.assign(n * sh.n_par, 0.0);
  sh.b.assign(n, 0.0);
  sh.db.assign(n * sh.n_par, 0.0);
  sh.ok.assign(n, 0);
}

// 1-D compact kernel: exact fast sums over sorted windows (fast_sums.hpp); the one parameter's
// weights a (-u k'(u)) = w psi(u) come from the same sums. Training points and queries (the
// distinct rows, each at its own value) in sorted order.
void run_fast_sums(const Shared& sh, PreparedQueries& Q, const arma::vec& x, double center,
                   const arma::vec& w, const arma::vec& y, const std::vector<std::int64_t>& self,
                   double h, const BandwidthSelectOptions& opt) {
  const std::size_t n = x.n_elem;
  arma::vec xs(n);
  for (std::size_t k = 0; k < n; ++k) xs(k) = (x(k) - center) / h;
  Q.m = n;
  Q.cont = xs.t();
  Q.self = self;
  FastMomentsProblem fp;
  fp.kernel = opt.kernel.kernel.type;
  fp.n = n;
  fp.x = xs.memptr();
  fp.a = w.is_empty() ? nullptr : w.memptr();
  fp.Y = y.memptr();
  fp.k = 1;
  fp.m = Q.m;
  fp.t = Q.cont.memptr();
  fp.self = Q.self.data();
  fp.max_power = opt.degree == 1 ? 2 : 0;
  fp.derivative = sh.n_par > 0;
  fp.n_threads = opt.kernel.n_threads;
  fast_window_moments(fp, [&]() { return make_fast_gradient_feeder(sh, Q, opt.degree); });
}

// Queries whose fit did not exist at recent evaluations (hint) run first, and the run stops at
// the first fit that does not exist: false then, with its query in `failed` (the objective is
// +inf). Every query's numbers, and the sums over them, are those of one full pass.
bool run_kernel_space(const KernelSpace& space, const PreparedQueries& Q, Shared& sh,
                      std::size_t nc, const std::vector<std::size_t>& hint, const RunOptions& ro,
                      std::size_t& failed) {
  sh.stop_at_undefined = true;
  auto sinks = [&](const PreparedQueries& QQ, const std::size_t* orig) {
    return [&sh, &QQ, orig]() { return make_gradient_sink(sh, QQ, orig); };
  };
  try {
    if (!hint.empty()) {
      PreparedQueries P;
      P.m = hint.size();
      P.cont.set_size(Q.cont.n_rows, P.m);
      P.codes.resize(nc * P.m);
      P.self.resize(P.m);
      for (std::size_t t = 0; t < P.m; ++t) {
        const std::size_t i = hint[t];
        if (Q.cont.n_rows > 0) P.cont.col(t) = Q.cont.col(i);
        for (std::size_t c = 0; c < nc; ++c) P.codes[t * nc + c] = Q.codes[i * nc + c];
        P.self[t] = Q.self[i];
      }
      space.run(P, sinks(P, hint.data()), ro);
    }
    space.run(Q, sinks(Q, nullptr), ro);
  } catch (const UndefinedFit& u) {
    failed = u.query;
    return false;
  }
  return true;
}

// The per-query data of the reduction: the distinct rows in their own order, or sorted on the
// fast-sum path.
struct QueryData {
  const arma::vec& rows;
  const arma::vec& unit;
  const arma::vec& ybar;
  const arma::vec& ss;
};

struct Sums {
  double rss = 0.0, tr = 0.0;
  arma::vec drss, dtr;
};

// Reductions in query order (independent of threads).
Sums reduce_queries(const Shared& sh, const QueryData& q, std::size_t n) {
  Sums s;
  double& rss = s.rss;
  double& tr = s.tr;
  s.drss.zeros(sh.n_par);
  s.dtr.zeros(sh.n_par);
  arma::vec& drss = s.drss;
  arma::vec& dtr = s.dtr;
  for (std::size_t i = 0; i < n; ++i) {
    // Group g: rows_ rows of weight unit_ each (1 without weights).
    const double e = sh.resid[i], cg = q.rows(i), ss = q.ss(i), wg = q.unit(i);
    if (sh.full) {  // RSS_g = SS_g + c_g (ybar_g - m_g)^2
      rss += wg * (ss + cg * e * e);
      tr += sh.lev[i];
      for (std::size_t p = 0; p < sh.n_par; ++p) {
        drss(p) -= 2.0 * wg * cg * e * sh.dm[i * sh.n_par + p];
        dtr(p) += sh.dlev[i * sh.n_par + p];
      }
    } else {  // eq. (4): (1 + b)^2 SS_g + c_g r_g^2
      // Without ties (ss = 0) the (1 + b)^2 SS_g term is absent: b = w1 c_0 can overflow
      // where the leave-one-out weights are near the underflow limit (0 * inf).
      const double ob = ss > 0.0 ? 1.0 + sh.b[i] : 0.0;
      rss += wg * (ob * ob * ss + cg * e * e);
      for (std::size_t p = 0; p < sh.n_par; ++p) {
        const double db = cg > 1.0 ? sh.db[i * sh.n_par + p] : 0.0;
        const double dr = -sh.dm[i * sh.n_par + p] - db * (cg - 1.0) * q.ybar(i);
        drss(p) += wg * (2.0 * ob * db * ss + 2.0 * cg * e * dr);
      }
    }
  }
  return s;
}

}  // namespace

struct BandwidthObjective::UndefinedHint {
  static constexpr std::size_t kMax = 16;  // at most one block of KernelSpace::run
  std::mutex mutex;
  std::vector<std::size_t> queries;  // most recent first, distinct

  std::vector<std::size_t> get() {
    std::lock_guard<std::mutex> lock(mutex);
    return queries;
  }
  void add(std::size_t q) {
    std::lock_guard<std::mutex> lock(mutex);
    queries.erase(std::remove(queries.begin(), queries.end(), q), queries.end());
    queries.insert(queries.begin(), q);
    if (queries.size() > kMax) queries.resize(kMax);
  }
};

BandwidthMethod bandwidth_method_from_name(const std::string& name, const std::string& arg) {
  const std::string s = detail::lower_case(name);
  if (s == "cv_ls" || s == "cv.ls" || s == "cvls") return BandwidthMethod::cv_ls;
  if (s == "aic" || s == "cv.aic" || s == "cv_aic" || s == "aicc") return BandwidthMethod::aic;
  if (s == "gcv") return BandwidthMethod::gcv;
  if (s == "rot" || s == "normal_reference" || s == "normal-reference") return BandwidthMethod::rot;
  if (s == "dpi") return BandwidthMethod::dpi;
  throw InvalidArgument(arg + ": unknown bandwidth selector '" + name +
                        "'; choose one of cv_ls (cv.ls), aic (cv.aic), gcv, rot, dpi");
}

const char* bandwidth_method_name(BandwidthMethod m) {
  switch (m) {
    case BandwidthMethod::cv_ls: return "cv_ls";
    case BandwidthMethod::aic: return "aic";
    case BandwidthMethod::gcv: return "gcv";
    case BandwidthMethod::rot: return "rot";
    case BandwidthMethod::dpi: return "dpi";
  }
  return "?";
}

BandwidthObjective::BandwidthObjective(const arma::mat& X_in, const arma::vec& y_in,
                                       const BandwidthSelectOptions& opt)
    : X_(X_in), y_(y_in), opt_(opt), hint_(std::make_shared<UndefinedHint>()) {
  if (!opt.weights.is_empty()) take_weights(X_in, y_in, opt.weights, X_, y_, w_);
  check_inputs(X_, y_, opt);
  types_ = parse_var_types(opt.kernel.var_types, X_.n_cols);
  search_box(X_, types_, opt, lower_, upper_, levels_);
  TieGroups t = group_ties(X_, y_, w_);
  const std::size_t G = t.Xu.n_rows;
  Xu_ = std::move(t.Xu);
  rows_ = std::move(t.rows);
  unit_ = std::move(t.unit);
  count_ = std::move(t.count);
  weight_sum_ = t.weight_sum;
  ybar_ = std::move(t.ybar);
  ss_ = std::move(t.ss);
  // Fast sums (fast_sums_eligible's conditions, decided here once): the sort of the distinct
  // values does not depend on the bandwidth, so it is done once for every evaluation, and no
  // KernelSpace (with its neighbour index) is built per evaluation. Each query's numbers are
  // those of the KernelSpace path: the same centre (the mean of the distinct values), the same
  // scaling (x - centre) / h, the same weights count / max(count); the queries run in sorted
  // order (sequential memory access), and so does the objective's sum over them.
  const bool ties = Xu_.n_rows < X_.n_rows || !w_.is_empty();
  arma::vec ow;
  if (ties && count_.min() != count_.max()) ow = count_ / count_.max();
  bool tiny = false;
  for (double a : ow) tiny = tiny || (a > 0.0 && a < 1e-200);
  fast_ = X_.n_cols == 1 && types_[0] == VarType::continuous &&
          fast_sums_supported(opt.kernel.kernel.type) && (opt.degree == 0 || opt.degree == 1) &&
          opt.kernel.algorithm == PairAlgorithm::automatic && G >= kFastSumsMinRows && !tiny;
  if (fast_) {
    FastSorted f = sort_distinct(Xu_.col(0), ow, ybar_, rows_, unit_, ss_);
    fast_center_ = f.center;
    fast_x_ = std::move(f.x);
    fast_w_ = std::move(f.w);
    fast_y_ = std::move(f.y);
    fast_rows_ = std::move(f.rows);
    fast_unit_ = std::move(f.unit);
    fast_ss_ = std::move(f.ss);
    fast_self_ = std::move(f.self);
  }
}

double BandwidthObjective::operator()(const arma::vec& bandwidth, arma::vec* grad) const {
  const std::size_t d = X_.n_cols, n = Xu_.n_rows;  // n: distinct rows (queries)
  const double n_obs = static_cast<double>(X_.n_rows);
  check::require(bandwidth.n_elem == d, "bandwidth", "needs one value per column of X");
  const bool ties = Xu_.n_rows < X_.n_rows || !w_.is_empty();
  // The fast-sum path needs no KernelSpace: its sorted data were prepared once (constructor).
  std::unique_ptr<KernelSpace> space_ptr;
  PreparedQueries Q;
  arma::vec y_int;
  if (fast_) {
    check_fast_bandwidth(bandwidth(0));
  } else {
    space_ptr.reset(new KernelSpace(Xu_, bandwidth, opt_.kernel, ties ? count_ : arma::vec()));
    Q = space_ptr->training_queries();
    y_int = ybar_.elem(arma::conv_to<arma::uvec>::from(space_ptr->order()));
  }

  Shared sh;
  sh.space = space_ptr.get();
  sh.fast_w = fast_ ? &fast_w_ : nullptr;
  sh.y_int = fast_ ? &fast_y_ : &y_int;
  // Per-query data: the distinct rows in their own order, or sorted on the fast-sum path.
  const QueryData q{fast_ ? fast_rows_ : rows_, fast_ ? fast_unit_ : unit_,
                    fast_ ? fast_y_ : ybar_, fast_ ? fast_ss_ : ss_};
  sh.y = &q.ybar;
  sh.count = &q.rows;
  sh.ss = &q.ss;
  sh.degree = opt_.degree;
  sh.ridge = opt_.degree == 1 ? opt_.ridge : 0.0;
  sh.full = opt_.method != BandwidthMethod::cv_ls;
  const std::vector<std::size_t> fast_cc{0}, fast_kc;
  const auto& cc = fast_ ? fast_cc : space_ptr->continuous_columns();
  const auto& kc = fast_ ? fast_kc : space_ptr->categorical_columns();
  if (opt_.degree == 1)
    for (std::size_t c : cc) sh.pen.push_back(1.0 / (bandwidth(c) * bandwidth(c)));
  std::vector<arma::vec> codes_int, codes_q;
  set_categorical(sh, space_ptr.get(), kc, Xu_, types_, opt_, bandwidth, grad != nullptr,
                  codes_int, codes_q);
  set_parameters(sh, d, n, cc, kc, grad != nullptr);

  RunOptions ro;
  ro.n_threads = opt_.kernel.n_threads;
  ro.exclude_self = true;
  ro.label = "bandwidth objective";
  if (fast_) {
    run_fast_sums(sh, Q, fast_x_, fast_center_, fast_w_, fast_y_, fast_self_, bandwidth(0), opt_);
  } else {
    std::size_t failed = 0;
    if (!run_kernel_space(*space_ptr, Q, sh, kc.size(), hint_->get(), ro, failed)) {
      hint_->add(failed);
      if (grad != nullptr) grad->zeros(d);
      return kInf;
    }
  }

  if (grad != nullptr) grad->zeros(d);
  for (std::size_t i = 0; i < n; ++i)
    if (!sh.ok[i]) return kInf;
  const Sums s = reduce_queries(sh, q, n);
  last_rss_ = s.rss;
  last_trace_ = s.tr;
  // rss is the weighted sum sum_i w_i e_i^2 (w_i = 1 without weights), W = sum_i w_i (= n
  // without weights): the mean squared error is rss / W, and n (the rows) stays the sample
  // size in the AICc and GCV penalties.
  const criteria::FitSums sums{s.rss, weight_sum_, static_cast<double>(n_obs), s.tr};
  double f = kInf;
  arma::vec g(sh.n_par, arma::fill::zeros);
  switch (opt_.method) {
    case BandwidthMethod::cv_ls: f = criteria::cv_ls(s.rss, weight_sum_, s.drss, g); break;
    case BandwidthMethod::aic: f = criteria::aicc(sums, s.drss, s.dtr, g); break;
    case BandwidthMethod::gcv: f = criteria::gcv(sums, s.drss, s.dtr, g); break;
    default: break;
  }
  // aic and gcv do not exist here (criteria.hpp): no gradient.
  if (f == kInf && opt_.method != BandwidthMethod::cv_ls) return kInf;
  if (grad != nullptr) *grad = g;
  return f;
}

}  // namespace attnreg
