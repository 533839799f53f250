// attnreg: threads, interrupts and progress, installed by the faces.
//
// Thread count is an option of each call (0 = OpenMP's default); the core never calls
// omp_set_num_threads globally. Results never depend on the thread count: parallel loops split
// independent outputs (queries, query blocks), and reductions run in a fixed order.
//
// Interrupts: R and Python may only be asked "was Ctrl-C pressed?" from the main thread. Long
// loops call InterruptGuard::poll() from every thread; only the master thread calls the face's
// checker, and it raises a shared flag that every thread sees. After the parallel region the
// caller calls rethrow_if_interrupted(), which throws attnreg::Interrupted.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

namespace attnreg {

/// Install a callback that returns true when the user asked to stop. Called only on the thread
/// that entered the core (the face's main thread). Pass nullptr to remove it.
void set_interrupt_checker(std::function<bool()> checker);

/// Ask every running and future core computation, on any thread, to stop (InterruptGuard::poll
/// returns true everywhere) until cancel_all(false). For faces that run the core on their own
/// worker threads (Dask's threaded scheduler), which cannot see Ctrl-C themselves.
void cancel_all(bool on);

/// Install a progress reporter: (done, total, label). Called on the main thread only.
void set_progress_reporter(std::function<void(std::size_t, std::size_t, const std::string&)> fn);

/// Number of threads a call will use for `requested` (0 = OpenMP default, 1 when no OpenMP).
int resolve_threads(int requested);

/// Whether the library was compiled with OpenMP.
bool has_openmp();

/// Cooperative interruption inside (possibly parallel) loops. Create one per long operation.
class InterruptGuard {
 public:
  InterruptGuard() = default;
  /// Cheap; call often. Returns true when work should stop. Only the OpenMP master thread (or
  /// the only thread) actually asks the face.
  bool poll();
  /// Report progress (main thread only; ignored elsewhere).
  void progress(std::size_t done, std::size_t total, const std::string& label);
  /// After the loop: throw Interrupted if the user pressed Ctrl-C.
  void rethrow_if_interrupted() const;
  bool interrupted() const { return flag_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> flag_{false};
};

/// Progress of an outer loop (bootstrap replications, tested columns) that calls inner
/// computations which report their own progress (kernel sums): while a scope is alive on this
/// thread, InterruptGuard::progress is muted and only the scope's own steps are reported, so
/// the face shows one bar for the whole run. Scopes nest: only the outermost reports.
class ProgressScope {
 public:
  ProgressScope(std::size_t total, std::string label);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;
  /// Report `done` of `total` (main thread only; ignored in an inner scope).
  void step(std::size_t done);

 private:
  std::size_t total_;
  std::string label_;
  bool outermost_;
};

}  // namespace attnreg
