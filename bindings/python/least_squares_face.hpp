// What the least-squares bindings share (defined in py_ols.cpp): the covariance options a face's
// cov_type / maxlags / hac_adjust / groups name, and the coefficient table as the face reads it.
// py_fe.cpp (absorbed fits) and py_iv.cpp (instrumental variables) use them, so every fit parses
// cluster codes and reports its inference one way.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "attnreg/least_squares/least_squares.hpp"

attnreg::CovOptions py_cov_options(const std::string& cov_type, int maxlags, bool hac_adjust,
                                   const pybind11::object& groups);
pybind11::dict py_inference_dict(const attnreg::Inference& inf);
