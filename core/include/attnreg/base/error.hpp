// attnreg: error types and argument checks shared by the whole core.
//
// The core never prints, exits or aborts. It throws one of the types below; the faces turn them
// into the language's own errors (pybind11: InvalidArgument -> ValueError, NumericalError ->
// ArithmeticError subclass; Rcpp: stop()). Every message names the argument and says how to fix
// it, e.g. "bandwidth: must be > 0 and finite, got -1 (pass a positive number)".
#pragma once

#include "attnreg/base/arma.hpp"
#include <stdexcept>
#include <string>

namespace attnreg {

/// Bad input from the caller: wrong shape, NaN/Inf, out-of-range option. Maps to ValueError.
class InvalidArgument : public std::invalid_argument {
 public:
  explicit InvalidArgument(const std::string& what) : std::invalid_argument(what) {}
};

/// The data are valid but the computation cannot produce a trustworthy number (singular local
/// design, all kernel weights underflow, rank deficiency where it is not allowed).
class NumericalError : public std::runtime_error {
 public:
  explicit NumericalError(const std::string& what) : std::runtime_error(what) {}
};

/// Thrown when the face's interrupt checker reports a user interrupt (Ctrl-C).
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("computation interrupted by the user") {}
};

namespace check {

/// Throw InvalidArgument("<arg>: <msg>") when cond is false.
inline void require(bool cond, const std::string& arg, const std::string& msg) {
  if (!cond) throw InvalidArgument(arg + ": " + msg);
}

/// Every element finite; otherwise names the first bad (row, column), 1-based as users count.
void all_finite(const arma::mat& a, const std::string& arg);
void all_finite(const arma::vec& a, const std::string& arg);

/// a.n_rows == n.
void rows_match(const arma::mat& a, arma::uword n, const std::string& arg,
                const std::string& other);

}  // namespace check
}  // namespace attnreg
