// attnreg Python face: numpy <-> Armadillo conversion, shared by every binding file.
//
// Layout: the core takes one observation per row in column-major arma::mat. A numpy array is
// requested as a Fortran-ordered float64 view (py::array::f_style | forcecast): a Fortran-
// ordered float64 input is used in place; anything else (C order, int, float32) is copied
// exactly once by numpy. Results are copied into new numpy arrays that own their memory; the
// core's memory is never lent to Python.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "attnreg/base/arma.hpp"
#include <cstring>
#include <string>

namespace attnreg_py {

namespace py = pybind11;
using farray = py::array_t<double, py::array::f_style | py::array::forcecast>;

/// A read-only view of a 1-D or 2-D float64 array as an n x p matrix (1-D -> n x 1).
inline arma::mat as_mat(const farray& a, const char* name) {
  if (a.ndim() == 1) {
    return arma::mat(const_cast<double*>(a.data()), static_cast<arma::uword>(a.shape(0)), 1,
                     /*copy_aux_mem=*/false, /*strict=*/true);
  }
  if (a.ndim() != 2) {
    throw py::value_error(std::string(name) + ": expected a 1-D or 2-D array, got " +
                          std::to_string(a.ndim()) + " dimensions");
  }
  return arma::mat(const_cast<double*>(a.data()), static_cast<arma::uword>(a.shape(0)),
                   static_cast<arma::uword>(a.shape(1)), false, true);
}

/// Copy an Armadillo matrix into a new Fortran-ordered numpy array.
inline py::array_t<double> to_numpy(const arma::mat& m) {
  py::array_t<double, py::array::f_style> out(
      {static_cast<py::ssize_t>(m.n_rows), static_cast<py::ssize_t>(m.n_cols)});
  if (m.n_elem) std::memcpy(out.mutable_data(), m.memptr(), m.n_elem * sizeof(double));
  return out;
}

inline py::array_t<double> to_numpy(const arma::vec& v) {
  py::array_t<double> out(static_cast<py::ssize_t>(v.n_elem));
  if (v.n_elem) std::memcpy(out.mutable_data(), v.memptr(), v.n_elem * sizeof(double));
  return out;
}

inline py::array_t<double> to_numpy(const arma::rowvec& v) {
  py::array_t<double> out(static_cast<py::ssize_t>(v.n_elem));
  if (v.n_elem) std::memcpy(out.mutable_data(), v.memptr(), v.n_elem * sizeof(double));
  return out;
}

/// Copy an m x d x k cube into a new Fortran-ordered (m, d, k) numpy array.
inline py::array_t<double> to_numpy(const arma::cube& c) {
  py::array_t<double, py::array::f_style> out({static_cast<py::ssize_t>(c.n_rows),
                                               static_cast<py::ssize_t>(c.n_cols),
                                               static_cast<py::ssize_t>(c.n_slices)});
  if (c.n_elem) std::memcpy(out.mutable_data(), c.memptr(), c.n_elem * sizeof(double));
  return out;
}

/// A 1-D float64 array (or an (n, 1) / (1, n) one) as a column vector; `name` for the error.
inline arma::vec as_vec(const farray& a, const char* name) {
  const arma::mat m = as_mat(a, name);
  if (m.n_cols != 1 && m.n_rows != 1 && m.n_elem > 0)
    throw py::value_error(std::string(name) + ": expected a 1-D array");
  return arma::vec(m.memptr(), m.n_elem);
}

/// Methods that take an X and return a matrix, with the GIL released during the core call.
template <typename F>
py::array_t<double> with_x(const farray& X, F&& f) {
  const arma::mat x = as_mat(X, "X");
  arma::mat out;
  {
    py::gil_scoped_release nogil;
    out = f(x);
  }
  return to_numpy(out);
}

// Attention weights written by the core straight into a new Fortran-ordered numpy array (the
// m x n result is the one large object; no second copy of it is made).
template <typename M>
py::array_t<double> attention_into_numpy(const M& model, const farray& X) {
  const arma::mat x = as_mat(X, "X");
  py::array_t<double, py::array::f_style> out(
      {static_cast<py::ssize_t>(x.n_rows), static_cast<py::ssize_t>(model.n_obs())});
  arma::mat A(out.mutable_data(), x.n_rows, model.n_obs(), /*copy_aux_mem=*/false, /*strict=*/true);
  {
    py::gil_scoped_release nogil;
    model.attention_weights(x, A);
  }
  return out;
}

using iarray = py::array_t<long long, py::array::f_style | py::array::forcecast>;

// Level codes (0-based, one column per factor) from a 1-D or 2-D integer array.
inline arma::umat as_codes(const iarray& a, const char* name) {
  if (a.ndim() != 1 && a.ndim() != 2) {
    throw py::value_error(std::string(name) + ": expected a 1-D or 2-D array of level codes");
  }
  const arma::uword n = static_cast<arma::uword>(a.shape(0));
  const arma::uword k = a.ndim() == 2 ? static_cast<arma::uword>(a.shape(1)) : 1;
  arma::umat out(n, k);
  const long long* p = a.data();
  for (arma::uword i = 0; i < n * k; ++i) {
    if (p[i] < 0) throw py::value_error(std::string(name) + ": level codes must be >= 0");
    out(i) = static_cast<arma::uword>(p[i]);
  }
  return out;
}

}  // namespace attnreg_py
