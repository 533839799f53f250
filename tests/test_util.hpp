// Small helpers shared by the GoogleTest suites.
#pragma once

#include "attnreg/base/arma.hpp"
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnreg_test {

/// Read a numeric CSV with one header line into a matrix (rows as in the file).
inline arma::mat read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  std::getline(in, line);  // header
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<double> row;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  arma::mat m(rows.size(), rows.empty() ? 0 : rows[0].size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j];
  return m;
}

/// Log relative error as NIST uses it: -log10(|est - cert| / |cert|), capped at 15.
inline double lre(double est, double cert) {
  const double err = std::fabs(est - cert);
  if (err == 0.0) return 15.0;
  const double l = cert != 0.0 ? -std::log10(err / std::fabs(cert)) : -std::log10(err);
  return std::min(l, 15.0);
}

}  // namespace attnreg_test
