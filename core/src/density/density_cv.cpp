// The density cross-validation objective's set-up (distinct rows, x and y groups, search box)
// and the bandwidth search (density.hpp). The objectives themselves: density_cv_rows.cpp,
// density_cv_conditional.cpp, density_cv_distribution.cpp (notation in density_cv_impl.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>

#include "attnreg/density/density.hpp"
#include "attnreg/detail/pow2_scale.hpp"
#include "attnreg/detail/density_cv_impl.hpp"
#include "attnreg/kernels/distinct_rows.hpp"
#include "attnreg/base/error.hpp"
#include "attnreg/base/runtime.hpp"

namespace attnreg {

using density_detail::Column;

namespace {

double spread(const arma::vec& x) {
  arma::vec s = arma::sort(x);
  const double n = static_cast<double>(s.n_elem);
  auto quant = [&](double p) {
    const double pos = p * (n - 1.0);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min<std::size_t>(lo + 1, s.n_elem - 1);
    return s(lo) + (pos - lo) * (s(hi) - s(lo));
  };
  const double sd = arma::stddev(s), iqr = quant(0.75) - quant(0.25);
  double v = iqr > 0.0 ? std::min(sd, iqr / 1.349) : sd;
  if (!(v > 0.0)) v = s.max() - s.min();
  return v;
}
}  // namespace

namespace {

// The search box of each column: [1e-3 spread, 100 range] for a continuous column,
// [0, the kernel's largest lambda) for a categorical one.
void search_box(const DensityData& data, const std::vector<Column>& cols, arma::vec& lower,
                arma::vec& upper) {
  const std::size_t dx = data.X().n_cols, d = cols.size();
  lower.set_size(d);
  upper.set_size(d);
  for (std::size_t j = 0; j < d; ++j) {
    const Column& col = cols[j];
    if (col.continuous()) {
      const arma::vec v = j < dx ? arma::vec(data.X().col(j)) : arma::vec(data.Y().col(j - dx));
      const double sp = spread(v);
      if (!(sp > 0.0)) {
        std::ostringstream msg;
        msg << (j < dx ? "X" : "y") << ": continuous column " << ((j < dx ? j : j - dx) + 1)
            << " is constant: no bandwidth can be selected (drop the column)";
        throw InvalidArgument(msg.str());
      }
      lower(j) = 1e-3 * sp;
      upper(j) = 100.0 * (v.max() - v.min());
    } else {
      if (col.n_levels() < 2) {
        std::ostringstream msg;
        msg << (j < dx ? "X" : "y") << ": categorical column "
            << ((j < dx ? j : j - dx) + 1)
            << " has a single level: drop it (it cannot change the estimate)";
        throw InvalidArgument(msg.str());
      }
      lower(j) = 0.0;
      upper(j) = col.ck.max_bandwidth(col.n_levels()) * (1.0 - 1e-6);
    }
  }
}

}  // namespace

// The distinct x values of the rows, each row's group and each group's rows and count.
void DensityObjective::Impl::group_x() {
  const std::size_t R = Zu.n_rows;
  DistinctRows gx = distinct_rows(arma::mat(Zu.cols(0, dx - 1)));
  Xg = std::move(gx.X);
  gx_of = gx.group_of;
  members.assign(Xg.n_rows, {});
  ng.zeros(Xg.n_rows);
  for (std::size_t r = 0; r < R; ++r) {
    members[gx_of[r]].push_back(r);
    ng(gx_of[r]) += c(r);
  }
}

// The distinct y values and their counts; with one continuous y, also sorted (dist_ls1).
void DensityObjective::Impl::group_y() {
  const std::size_t R = Zu.n_rows;
  DistinctRows gy = distinct_rows(arma::mat(Zu.cols(dx, d - 1)));
  Yv = std::move(gy.X);
  ty_of = gy.group_of;
  mt.zeros(Yv.n_rows);
  for (std::size_t r = 0; r < R; ++r) mt(ty_of[r]) += c(r);
  if (dy == 1 && cols[dx].continuous()) {
    dist1 = true;
    const arma::uvec ord = arma::sort_index(Yv.col(0));
    std::vector<std::size_t> rank(ord.n_elem);
    for (std::size_t t = 0; t < ord.n_elem; ++t) rank[ord(t)] = t;
    ys = arma::vec(Yv.col(0)).elem(ord);
    ms = mt.elem(ord);
    ts_of.resize(R);
    for (std::size_t r = 0; r < R; ++r) ts_of[r] = rank[ty_of[r]];
  }
}

DensityObjective::DensityObjective(const DensityData& data, DensityMethod method)
    : data_(&data), method_(method), impl_(std::make_shared<Impl>()) {
  check::require(method != DensityMethod::normal_reference, "method",
                 "normal_reference has no objective; use cv_ml or cv_ls");
  check::require(!(method == DensityMethod::cv_ml &&
                   data.kind() == DensityKind::conditional_distribution),
                 "bandwidth",
                 "a conditional distribution has no likelihood: use cv_ls or normal_reference "
                 "(as np's npcdistbw)");
  check::require(data.n() >= 3, "X", "cross-validation needs at least 3 rows (got " +
                                         std::to_string(data.n()) + "); pass the bandwidths");
  Impl& I = *impl_;
  I.kind = data.kind();
  I.method = method;
  I.cols = density_detail::make_columns(data);
  I.K = data.options().kernel;
  I.dx = data.X().n_cols;
  I.dy = data.Y().n_cols;
  I.d = I.dx + I.dy;
  I.threads = resolve_threads(data.options().n_threads);
  const arma::mat Z = I.kind == DensityKind::density ? data.X()
                                                     : arma::mat(arma::join_rows(data.X(), data.Y()));
  DistinctRows g = distinct_rows(density_detail::encode_training(I.cols, Z));
  I.Zu = std::move(g.X);
  I.c = std::move(g.count);
  I.n = static_cast<double>(data.n());
  const std::size_t R = I.Zu.n_rows;
  if (static_cast<double>(R) * R < 4e4) I.threads = 1;
  const bool triple = method == DensityMethod::cv_ls && I.kind != DensityKind::density;
  if (triple) {
    I.group_x();
    if (I.kind == DensityKind::conditional_density) {
      check::require(R <= 4000, "bandwidth",
                     "cv_ls for a conditional density keeps (distinct rows)^2 kernel values; "
                     "with " + std::to_string(R) + " distinct rows (more than 4000) use cv_ml");
    } else {
      I.group_y();
      check::require(static_cast<double>(R) * I.Yv.n_rows <= 2.5e7, "bandwidth",
                     "cv_ls for a conditional distribution keeps (distinct rows) x (distinct y) "
                     "values; this sample has too many (more than 2.5e7): use normal_reference "
                     "or a subsample");
    }
  }
  search_box(data, I.cols, lower_, upper_);
}

std::size_t DensityObjective::n_unique() const { return impl_->Zu.n_rows; }

double DensityObjective::operator()(const arma::vec& bandwidth, arma::vec* grad) const {
  data_->check_bandwidth(bandwidth, "bandwidth");
  const Impl& I = *impl_;
  if (I.kind != DensityKind::density && method_ == DensityMethod::cv_ls) {
    if (I.kind == DensityKind::conditional_density) return I.cond_ls(bandwidth, grad);
    if (!I.dist1) return I.dist_ls(bandwidth, grad);
    std::unique_lock<std::mutex> lock(I.work_mutex, std::try_to_lock);
    if (lock.owns_lock()) return I.dist_ls1(bandwidth, grad, I.work);
    Impl::DistWork own;
    return I.dist_ls1(bandwidth, grad, own);
  }
  return I.rows(bandwidth, grad);
}

namespace {

// A continuous column spread beyond 2^+-200 (densities ~ 1 / spread over- or underflow, as do
// their squares in cv_ls) is searched on data scaled by a power of two (exact), its bandwidth
// scaled back: the search is invariant under x -> c x (log-bandwidths shift, the objective
// shifts (cv_ml) or scales (cv_ls); optimize.hpp). The density's own unit is that of its
// continuous columns (density: all of them; conditional density: y's; conditional
// distribution: none). False (res untouched) when no column needs it.
bool select_on_scaled_data(const DensityData& data, DensityMethod method,
                           DensityBandwidthResult& res) {
  const std::vector<VarType>& t = data.types();
  const std::size_t dx = data.X().n_cols;
  std::vector<int> e(t.size(), 0);
  bool any = false;
  for (std::size_t j = 0; j < t.size(); ++j) {
    if (t[j] != VarType::continuous) continue;
    const arma::vec v = j < dx ? arma::vec(data.X().col(j)) : arma::vec(data.Y().col(j - dx));
    e[j] = detail::extreme_scale_exponent(v.max() - v.min(), 200);
    any = any || e[j] != 0;
  }
  if (!any) return false;
  arma::mat Xs = data.X(), Ys = data.Y();
  std::string tx, ty;
  int units = 0;
  for (std::size_t j = 0; j < t.size(); ++j) {
    (j < dx ? tx : ty).push_back(static_cast<char>(t[j]));
    if (e[j] == 0) continue;
    if (j < dx) Xs.col(j) *= std::ldexp(1.0, -e[j]);
    else Ys.col(j - dx) *= std::ldexp(1.0, -e[j]);
    if (data.kind() == DensityKind::density ||
        (data.kind() == DensityKind::conditional_density && j >= dx))
      units += e[j];
  }
  const DensityData scaled(data.kind(), Xs, tx, Ys, ty, data.options());
  DensityBandwidthResult r = select_density_bandwidth(scaled, method);
  for (std::size_t j = 0; j < t.size(); ++j) {
    if (e[j] == 0) continue;
    r.bandwidth(j) = std::ldexp(r.bandwidth(j), e[j]);
    if (j < r.lower.n_elem) r.lower(j) = std::ldexp(r.lower(j), e[j]);
    if (j < r.upper.n_elem) r.upper(j) = std::ldexp(r.upper(j), e[j]);
  }
  // Densities in data units are 2^-units times those of the scaled data.
  if (std::isfinite(r.objective) && units != 0)
    r.objective = method == DensityMethod::cv_ml
                      ? r.objective + static_cast<double>(data.n()) * units * std::log(2.0)
                      : std::ldexp(r.objective, -units);
  res = std::move(r);
  return true;
}

}  // namespace

DensityBandwidthResult select_density_bandwidth(const DensityData& data, DensityMethod method) {
  DensityBandwidthResult res;
  res.method = density_method_name(method);
  if (method == DensityMethod::normal_reference) {
    res.bandwidth = density_normal_reference(data);
    res.objective = std::numeric_limits<double>::quiet_NaN();
    res.converged = true;
    res.message = "normal-reference rule";
    return res;
  }
  if (select_on_scaled_data(data, method, res)) return res;
  const DensityObjective obj(data, method);
  const std::size_t d = data.n_bandwidths();
  const std::vector<VarType>& types = data.types();
  res.lower = obj.lower();
  res.upper = obj.upper();
  arma::vec lo(d), hi(d), base(d);
  for (std::size_t j = 0; j < d; ++j) {
    const bool cont = types[j] == VarType::continuous;
    lo(j) = cont ? std::log(obj.lower()(j)) : obj.lower()(j);
    hi(j) = cont ? std::log(obj.upper()(j)) : obj.upper()(j);
  }
  // Normal-reference start for continuous columns (all-categorical data: the box's middle).
  bool any_cont = false;
  for (VarType t : types) any_cont = any_cont || t == VarType::continuous;
  const arma::vec nr = any_cont ? density_normal_reference(data) : arma::vec(d, arma::fill::zeros);
  for (std::size_t j = 0; j < d; ++j)
    base(j) = types[j] == VarType::continuous
                  ? std::min(std::max(std::log(nr(j)), lo(j)), hi(j))
                  : 0.5 * (lo(j) + hi(j));
  const DensityOptions& opt = data.options();
  std::vector<bool> log_scale(d);
  for (std::size_t j = 0; j < d; ++j) log_scale[j] = types[j] == VarType::continuous;
  const arma::mat starts = search_starts(base, lo, hi, log_scale, opt.n_starts, opt.seed);
  int evals = 0;
  auto to_bw = [&](const arma::vec& t) {
    arma::vec b(d);
    for (std::size_t j = 0; j < d; ++j) b(j) = types[j] == VarType::continuous ? std::exp(t(j)) : t(j);
    return b;
  };
  const Objective f = [&](const arma::vec& t, arma::vec& g) {
    ++evals;
    return obj(to_bw(t), &g);
  };
  MinimizeResult best;
  best.f = kInf;
  const bool have = minimize_from_starts(f, starts, lo, hi, log_scale, opt.minimize, best);
  if (!have || !std::isfinite(best.f))
    throw NumericalError(
        "bandwidth: the cross-validation objective is undefined (+inf) everywhere the search "
        "went: some leave-one-out estimate is zero (isolated points with a compact kernel); "
        "use the Gaussian kernel or normal_reference");
  res.bandwidth = to_bw(best.x);
  res.objective = best.f;
  res.n_evals = evals;
  res.converged = best.converged;
  res.message = best.message;
  // A continuous bandwidth on an end of its (artificial) box is not an optimum: the criterion
  // still falls beyond it. At the lower end this is typically tied data, where the
  // leave-one-out density at a tied point grows without bound as h -> 0 (both cv_ml and cv_ls;
  // Li and Racine 2007, sec. 1.3.3). Say so, and never call it converged. (lambda = 0 or its
  // maximum for a categorical column is the end of the parameter space itself, not of a box.)
  res.at_bound.assign(d, 0);
  for (std::size_t j = 0; j < d; ++j) {
    if (types[j] != VarType::continuous) continue;
    const bool at_lo = res.bandwidth(j) <= res.lower(j) * (1.0 + 1e-6);
    const bool at_hi = res.bandwidth(j) >= res.upper(j) * (1.0 - 1e-6);
    if (!at_lo && !at_hi) continue;
    res.at_bound[j] = at_lo ? -1 : 1;
    res.converged = false;
    std::ostringstream m;
    m << "; column " << (j + 1) << " is at the " << (at_lo ? "lower" : "upper")
      << " end of the search box"
      << (at_lo ? " (the criterion falls without bound as h -> 0, as on tied values)"
                : " (the column is smoothed out)");
    res.message += m.str();
  }
  return res;
}

}  // namespace attnreg
