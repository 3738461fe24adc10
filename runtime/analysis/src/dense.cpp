// Dense linear algebra for the stability analysis (dense.hpp).
#include "macrostep/analysis/dense.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

namespace macrostep::analysis {

namespace {

void require_same_shape(const Matrix& a, const Matrix& b, const char* op) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    throw std::invalid_argument(std::string("Matrix ") + op + ": shapes differ");
  }
}

double norm1(const Matrix& a) {
  double best = 0.0;
  for (std::size_t j = 0; j < a.cols(); ++j) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.rows(); ++i) s += std::abs(a(i, j));
    best = std::max(best, s);
  }
  return best;
}

// Balancing by powers of 2 (Parlett–Reinsch, as EISPACK's balanc): the same eigenvalues with
// rows and columns of comparable norms, so that the QR iteration keeps them accurate.
void balance(Matrix& a) {
  const std::size_t n = a.rows();
  constexpr double kRadix = 2.0;
  bool done = false;
  while (!done) {
    done = true;
    for (std::size_t i = 0; i < n; ++i) {
      double c = 0.0, r = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        c += std::abs(a(j, i));
        r += std::abs(a(i, j));
      }
      if (c == 0.0 || r == 0.0) continue;
      double g = r / kRadix, f = 1.0;
      const double s = c + r;
      while (c < g) {
        f *= kRadix;
        c *= kRadix * kRadix;
      }
      g = r * kRadix;
      while (c > g) {
        f /= kRadix;
        c /= kRadix * kRadix;
      }
      if ((c + r) / f < 0.95 * s) {
        done = false;
        for (std::size_t j = 0; j < n; ++j) a(i, j) /= f;
        for (std::size_t j = 0; j < n; ++j) a(j, i) *= f;
      }
    }
  }
}

// Reduction to upper Hessenberg form by stabilised elementary similarity transformations
// (EISPACK elmhes); the entries below the subdiagonal are set to zero.
void hessenberg(Matrix& a) {
  const std::size_t n = a.rows();
  for (std::size_t m = 1; m + 1 < n; ++m) {
    double x = 0.0;
    std::size_t piv = m;
    for (std::size_t j = m; j < n; ++j) {
      if (std::abs(a(j, m - 1)) > std::abs(x)) {
        x = a(j, m - 1);
        piv = j;
      }
    }
    if (piv != m) {
      for (std::size_t j = m - 1; j < n; ++j) std::swap(a(piv, j), a(m, j));
      for (std::size_t j = 0; j < n; ++j) std::swap(a(j, piv), a(j, m));
    }
    if (x == 0.0) continue;
    for (std::size_t i = m + 1; i < n; ++i) {
      double y = a(i, m - 1);
      if (y == 0.0) continue;
      y /= x;
      a(i, m - 1) = 0.0;
      for (std::size_t j = m; j < n; ++j) a(i, j) -= y * a(m, j);
      for (std::size_t j = 0; j < n; ++j) a(j, m) += y * a(j, i);
    }
  }
}

double sign_of(double a, double b) {
  return b >= 0.0 ? std::abs(a) : -std::abs(a);
}

// One Francis double-shift QR sweep on rows/columns l..nn of the Hessenberg matrix h (1-based
// helpers as in EISPACK hqr), with the shift data x, y, w.
void francis_sweep(const std::function<double&(int, int)>& h, int l, int nn, double x, double y,
                   double w) {
  int m = nn - 2;
  double p = 0.0, q = 0.0, r = 0.0, z = 0.0;
  for (; m >= l; --m) {
    z = h(m, m);
    r = x - z;
    const double s0 = y - z;
    p = (r * s0 - w) / h(m + 1, m) + h(m, m + 1);
    q = h(m + 1, m + 1) - z - r - s0;
    r = h(m + 2, m + 1);
    const double s = std::abs(p) + std::abs(q) + std::abs(r);
    p /= s;
    q /= s;
    r /= s;
    if (m == l) break;
    const double u = std::abs(h(m, m - 1)) * (std::abs(q) + std::abs(r));
    const double v =
        std::abs(p) * (std::abs(h(m - 1, m - 1)) + std::abs(z) + std::abs(h(m + 1, m + 1)));
    if (u + v == v) break;
  }
  for (int i = m + 2; i <= nn; ++i) {
    h(i, i - 2) = 0.0;
    if (i != m + 2) h(i, i - 3) = 0.0;
  }
  for (int k = m; k <= nn - 1; ++k) {
    if (k != m) {
      p = h(k, k - 1);
      q = h(k + 1, k - 1);
      r = k != nn - 1 ? h(k + 2, k - 1) : 0.0;
      x = std::abs(p) + std::abs(q) + std::abs(r);
      if (x != 0.0) {
        p /= x;
        q /= x;
        r /= x;
      }
    }
    const double s = sign_of(std::sqrt(p * p + q * q + r * r), p);
    if (s == 0.0) continue;
    if (k == m) {
      if (l != m) h(k, k - 1) = -h(k, k - 1);
    } else {
      h(k, k - 1) = -s * x;
    }
    p += s;
    x = p / s;
    y = q / s;
    z = r / s;
    q /= p;
    r /= p;
    for (int j = k; j <= nn; ++j) {
      p = h(k, j) + q * h(k + 1, j);
      if (k != nn - 1) {
        p += r * h(k + 2, j);
        h(k + 2, j) -= p * z;
      }
      h(k + 1, j) -= p * y;
      h(k, j) -= p * x;
    }
    const int mmin = std::min(nn, k + 3);
    for (int i = l; i <= mmin; ++i) {
      p = x * h(i, k) + y * h(i, k + 1);
      if (k != nn - 1) {
        p += z * h(i, k + 2);
        h(i, k + 2) -= p * r;
      }
      h(i, k + 1) -= p * q;
      h(i, k) -= p;
    }
  }
}

}  // namespace

Matrix Matrix::identity(std::size_t n) {
  Matrix m(n, n);
  for (std::size_t i = 0; i < n; ++i) m(i, i) = 1.0;
  return m;
}

double Matrix::norm_inf() const {
  double best = 0.0;
  for (std::size_t i = 0; i < rows_; ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < cols_; ++j) s += std::abs((*this)(i, j));
    best = std::max(best, s);
  }
  return best;
}

Matrix operator*(const Matrix& a, const Matrix& b) {
  if (a.cols() != b.rows()) throw std::invalid_argument("Matrix *: inner dimensions differ");
  Matrix c(a.rows(), b.cols());
  for (std::size_t i = 0; i < a.rows(); ++i) {
    for (std::size_t k = 0; k < a.cols(); ++k) {
      const double aik = a(i, k);
      if (aik == 0.0) continue;
      for (std::size_t j = 0; j < b.cols(); ++j) c(i, j) += aik * b(k, j);
    }
  }
  return c;
}

Matrix operator+(const Matrix& a, const Matrix& b) {
  require_same_shape(a, b, "+");
  Matrix c = a;
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) c(i, j) += b(i, j);
  return c;
}

Matrix operator-(const Matrix& a, const Matrix& b) {
  return a + (-1.0) * b;
}

Matrix operator*(double s, const Matrix& a) {
  Matrix c = a;
  for (std::size_t i = 0; i < a.rows(); ++i)
    for (std::size_t j = 0; j < a.cols(); ++j) c(i, j) *= s;
  return c;
}

Matrix solve(const Matrix& a, const Matrix& b) {
  const std::size_t n = a.rows();
  if (a.cols() != n || b.rows() != n) throw std::invalid_argument("solve: shapes");
  Matrix lu = a, x = b;
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t piv = k;
    for (std::size_t i = k + 1; i < n; ++i)
      if (std::abs(lu(i, k)) > std::abs(lu(piv, k))) piv = i;
    if (lu(piv, k) == 0.0) throw std::runtime_error("solve: singular matrix");
    if (piv != k) {
      for (std::size_t j = 0; j < n; ++j) std::swap(lu(k, j), lu(piv, j));
      for (std::size_t j = 0; j < x.cols(); ++j) std::swap(x(k, j), x(piv, j));
    }
    for (std::size_t i = k + 1; i < n; ++i) {
      const double f = lu(i, k) / lu(k, k);
      if (f == 0.0) continue;
      for (std::size_t j = k; j < n; ++j) lu(i, j) -= f * lu(k, j);
      for (std::size_t j = 0; j < x.cols(); ++j) x(i, j) -= f * x(k, j);
    }
  }
  for (std::size_t k = n; k-- > 0;) {
    for (std::size_t j = 0; j < x.cols(); ++j) {
      double s = x(k, j);
      for (std::size_t i = k + 1; i < n; ++i) s -= lu(k, i) * x(i, j);
      x(k, j) = s / lu(k, k);
    }
  }
  return x;
}

Matrix expm(const Matrix& a) {
  const std::size_t n = a.rows();
  if (a.cols() != n) throw std::invalid_argument("expm: matrix not square");
  static constexpr double b[] = {64764752532480000.0,
                                 32382376266240000.0,
                                 7771770303897600.0,
                                 1187353796428800.0,
                                 129060195264000.0,
                                 10559470521600.0,
                                 670442572800.0,
                                 33522128640.0,
                                 1323241920.0,
                                 40840800.0,
                                 960960.0,
                                 16380.0,
                                 182.0,
                                 1.0};
  constexpr double kTheta13 = 5.371920351148152;
  const double norm = norm1(a);
  int s = 0;
  if (norm > kTheta13) s = static_cast<int>(std::ceil(std::log2(norm / kTheta13)));
  const Matrix as = std::ldexp(1.0, -s) * a;
  const Matrix id = Matrix::identity(n);
  const Matrix a2 = as * as, a4 = a2 * a2, a6 = a4 * a2;
  const Matrix u = as * (a6 * (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 +
                         b[3] * a2 + b[1] * id);
  const Matrix v =
      a6 * (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * id;
  Matrix r = solve(v - u, v + u);
  for (int i = 0; i < s; ++i) r = r * r;
  return r;
}

namespace {

// The eigenvalues by balancing, Hessenberg reduction and EISPACK's hqr; false if the QR
// iteration does not converge.
bool hqr_eigenvalues(const Matrix& input, std::vector<std::complex<double>>& ev) {
  const int n = static_cast<int>(input.rows());
  Matrix a = input;
  balance(a);
  hessenberg(a);
  const std::function<double&(int, int)> h = [&a](int i, int j) -> double& {
    return a(static_cast<std::size_t>(i - 1), static_cast<std::size_t>(j - 1));
  };
  ev.assign(static_cast<std::size_t>(n), {});
  const auto put = [&ev](int i, double re, double im) {
    ev[static_cast<std::size_t>(i - 1)] = {re, im};
  };
  double anorm = 0.0;
  for (int i = 1; i <= n; ++i)
    for (int j = std::max(i - 1, 1); j <= n; ++j) anorm += std::abs(h(i, j));
  int nn = n;
  double t = 0.0;
  while (nn >= 1) {
    int its = 0, l = 0;
    do {
      for (l = nn; l >= 2; --l) {  // a small subdiagonal element splits the matrix
        double s = std::abs(h(l - 1, l - 1)) + std::abs(h(l, l));
        if (s == 0.0) s = anorm;
        if (std::abs(h(l, l - 1)) + s == s) {
          h(l, l - 1) = 0.0;
          break;
        }
      }
      double x = h(nn, nn);
      if (l == nn) {  // one root
        put(nn--, x + t, 0.0);
        continue;
      }
      double y = h(nn - 1, nn - 1);
      double w = h(nn, nn - 1) * h(nn - 1, nn);
      if (l == nn - 1) {  // two roots
        const double p = 0.5 * (y - x);
        const double q = p * p + w;
        double z = std::sqrt(std::abs(q));
        x += t;
        if (q >= 0.0) {
          z = p + sign_of(z, p);
          put(nn - 1, x + z, 0.0);
          put(nn, z != 0.0 ? x - w / z : x + z, 0.0);
        } else {
          put(nn - 1, x + p, -z);
          put(nn, x + p, z);
        }
        nn -= 2;
        continue;
      }
      if (its == 60) return false;
      if (its == 10 || its == 20 || its == 40) {  // exceptional shift
        t += x;
        for (int i = 1; i <= nn; ++i) h(i, i) -= x;
        const double s = std::abs(h(nn, nn - 1)) + std::abs(h(nn - 1, nn - 2));
        y = x = 0.75 * s;
        w = -0.4375 * s * s;
      }
      ++its;
      francis_sweep(h, l, nn, x, y, w);
    } while (l < nn - 1);
  }
  return true;
}

}  // namespace

std::vector<std::complex<double>> eigenvalues(const Matrix& a) {
  if (a.cols() != a.rows()) throw std::invalid_argument("eigenvalues: matrix not square");
  std::vector<std::complex<double>> ev;
  if (hqr_eigenvalues(a, ev)) return ev;
  // hqr's shifts can cycle on matrices of exactly repeated structure (two identical
  // subsystems, copied history rows). The same eigenvalues of T⁻¹AT, T = I + εL with a fixed
  // pseudo-random strictly lower L, break that structure.
  const std::size_t n = a.rows();
  for (int attempt = 1; attempt <= 3; ++attempt) {
    Matrix t = Matrix::identity(n);
    std::uint64_t state = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(attempt);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        t(i, j) = 0.1 * (static_cast<double>(state >> 11) * 0x1.0p-53 - 0.5);
      }
    }
    if (hqr_eigenvalues(solve(t, a * t), ev)) return ev;
  }
  throw std::runtime_error("eigenvalues: QR iteration did not converge");
}

double spectral_radius(const Matrix& a) {
  double rho = 0.0;
  for (const auto& e : eigenvalues(a)) rho = std::max(rho, std::abs(e));
  return rho;
}

}  // namespace macrostep::analysis
