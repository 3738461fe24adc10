// Small dense linear algebra for the stability analysis (METHODS.md §7.1, D-37): a row-major
// matrix, LU solves, the matrix exponential and the eigenvalues of a real matrix. The project
// links neither Eigen nor LAPACK; the matrices here have a few dozen rows at most.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace macrostep::analysis {

class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols) : rows_(rows), cols_(cols), a_(rows * cols, 0.0) {}
  static Matrix identity(std::size_t n);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  double& operator()(std::size_t i, std::size_t j) { return a_[i * cols_ + j]; }
  double operator()(std::size_t i, std::size_t j) const { return a_[i * cols_ + j]; }

  // Max row sum of absolute values (the ∞-norm).
  double norm_inf() const;

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<double> a_;
};

Matrix operator*(const Matrix& a, const Matrix& b);
Matrix operator+(const Matrix& a, const Matrix& b);
Matrix operator-(const Matrix& a, const Matrix& b);
Matrix operator*(double s, const Matrix& a);

// X = A⁻¹ B by LU with partial pivoting. Throws std::runtime_error if A is singular.
Matrix solve(const Matrix& a, const Matrix& b);

// e^A by scaling and squaring with the degree-13 Padé approximant (Higham 2005).
Matrix expm(const Matrix& a);

// All eigenvalues of a square real matrix: reduction to Hessenberg form by Gaussian elimination
// with pivoting, then the shifted QR iteration of EISPACK's hqr. Throws std::runtime_error if
// the iteration does not converge.
std::vector<std::complex<double>> eigenvalues(const Matrix& a);

// max |eig A|.
double spectral_radius(const Matrix& a);

}  // namespace macrostep::analysis
