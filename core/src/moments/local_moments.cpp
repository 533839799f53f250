#include "attnreg/moments/local_moments.hpp"

#include <limits>

#include "attnreg/base/error.hpp"

namespace attnreg {
namespace moments {

LocalMoments LocalMoments::empty(std::int64_t rows, const MomentLayout& layout, bool track_peak) {
  LocalMoments m;
  m.layout = layout;
  const auto n = static_cast<std::size_t>(rows);
  m.max.assign(n, -std::numeric_limits<double>::infinity());
  if (track_peak) m.peak.assign(n, 0.0);
  m.stats.assign(n * static_cast<std::size_t>(layout.n_stats()), 0.0);
  return m;
}

bool LocalMoments::same_shape(const LocalMoments& other) const {
  return layout == other.layout && max.size() == other.max.size() &&
         peak.size() == other.peak.size() && stats.size() == other.stats.size() &&
         stats.size() == max.size() * static_cast<std::size_t>(layout.n_stats()) &&
         (peak.empty() || peak.size() == max.size());
}

void LocalMoments::merge(const LocalMoments& other) {
  check::require(same_shape(other), "other",
                 "holds moments of a different shape (merge moments of the same queries, "
                 "design columns, value columns and derivatives)");
  const long long n = layout.n_stats();
  const bool with_peak = !peak.empty();
  for (std::int64_t i = 0; i < rows(); ++i)
    merge_running(max[i], row(i), other.max[i], other.row(i), n,
                  with_peak ? &peak[i] : nullptr, with_peak ? other.peak[i] : 0.0);
}

}  // namespace moments
}  // namespace attnreg
