// attnreg: fast-sum moments (fast_sums.hpp; 1-D, compact kernel) delivered to a tile sink in
// blocks of KernelSpace::kBlock queries, as the all-pairs path delivers tiles. Shared by the
// local fit (MomentSink) and the bandwidth objective (GradientSink): a derived feeder writes one
// query's moments into next_row() (a row of the sink's layout) and calls commit().
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "attnreg/kernels/fast_sums.hpp"
#include "attnreg/kernels/kernel_pairs.hpp"
#include "attnreg/moments/local_moments.hpp"

namespace attnreg {
namespace detail {

template <class Sink>
class BlockedMomentFeeder : public FastMomentsConsumer {
 public:
  void finish() override {
    if (qs_.empty()) return;
    sink_.begin_block(qs_.data(), qs_.size());
    for (std::size_t s = 0; s < qs_.size(); ++s)
      sink_.set_moments(s, block_.row(static_cast<std::int64_t>(s)));
    sink_.end_block(rmax_);
    qs_.clear();
  }

 protected:
  template <class... Args>
  explicit BlockedMomentFeeder(Args&&... args) : sink_(std::forward<Args>(args)...) {
    block_ = moments::LocalMoments::empty(KernelSpace::kBlock, sink_.layout(), false);
  }
  /// The row the next query's moments go to (the sink's layout).
  double* next_row() { return block_.row(static_cast<std::int64_t>(qs_.size())); }
  /// Takes the query whose moments next_row() now holds; a full block goes to the sink.
  void commit(const FastMomentsQuery& fq) {
    // Every positive weight in a window is >= kTinyWeight (fast_sums_eligible).
    rmax_[qs_.size()] = fq.positive > 0 ? 1.0 : 0.0;
    qs_.push_back(fq.query);
    if (qs_.size() == KernelSpace::kBlock) finish();
  }
  std::size_t row_size() const { return static_cast<std::size_t>(block_.layout.n_block()); }

  Sink sink_;

 private:
  std::vector<std::size_t> qs_;
  moments::LocalMoments block_;
  double rmax_[KernelSpace::kBlock];
};

}  // namespace detail
}  // namespace attnreg
