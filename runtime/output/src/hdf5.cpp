// HDF5 result files (hdf5.hpp), HDF5 C API.
#include "macrostep/output/hdf5.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>

#include "macrostep/output/metadata.hpp"

namespace macrostep::output {

static_assert(std::is_same_v<hid_t, std::int64_t>, "Hdf5File keeps an hid_t as std::int64_t");

namespace {

// Before the first other HDF5 call: HDF5 prints its error stack to stderr unless told not to
// (our errors are the messages), and it closes every file it still knows at exit. A file whose
// close failed (a full disk) stays known half-closed, and closing it again at exit crashes the
// library: every Hdf5File closes its file itself, so the exit handler is not installed.
void silence_hdf5() {
  static const bool done = [] {
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

// The system's reason for the last failed write, for messages ("" when it left none).
std::string os_reason(int error) {
  return error != 0 ? fmt::format(": {}", std::strerror(error)) : std::string();
}

// One HDF5 identifier, closed by `close_fn` when it goes.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close_fn)(hid_t)) : id_(id), close_(close_fn) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle& operator=(Handle&&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// A variable-length UTF-8 string type (h5py reads it as str).
Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

void check_names(const std::string& key, const std::vector<std::string>& columns) {
  std::set<std::string_view> seen{key};
  for (const auto& c : columns) {
    if (c.empty() || !seen.insert(c).second) {
      throw std::invalid_argument(fmt::format("invalid or duplicate HDF5 column name '{}'", c));
    }
  }
}

// Replaces attribute `name` of `object` with `value` of `type` in `space`.
bool write_attribute(hid_t object, const std::string& name, hid_t type, hid_t space,
                     const void* value) {
  if (H5Aexists(object, name.c_str()) > 0 && H5Adelete(object, name.c_str()) < 0) return false;
  Handle a(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return a.ok() && H5Awrite(a.get(), type, value) >= 0;
}

bool write_scalar_attribute(hid_t object, const std::string& name,
                            const nlohmann::ordered_json& v) {
  Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const char* p = s.c_str();
    const Handle t = string_type();
    return write_attribute(object, name, t.get(), scalar.get(), &p);
  }
  if (v.is_number_integer() || v.is_boolean()) {
    const std::int64_t x = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<std::int64_t>();
    return write_attribute(object, name, H5T_NATIVE_INT64, scalar.get(), &x);
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    return write_attribute(object, name, H5T_NATIVE_DOUBLE, scalar.get(), &x);
  }
  return true;  // null, arrays, objects: in metadata_json only
}

}  // namespace

bool is_hdf5_path(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto ends = [&lower](std::string_view e) {
    return lower.size() > e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0;
  };
  return ends(".h5") || ends(".hdf5");
}

// One extendible 2-D dataset (rows × width), appended row by row.
class Hdf5File::Table final : public TableWriter {
 public:
  Table(const std::string& file_path, hid_t file, hid_t dataset, std::size_t width)
      : path_(file_path), file_(file), dataset_(dataset, H5Dclose), width_(width), row_(width) {}

  void write_row(double key, std::span<const double> values) override {
    if (values.size() + 1 != width_) {
      throw std::invalid_argument(
          fmt::format("{}: row has {} values for {} columns", path_, values.size(), width_ - 1));
    }
    row_[0] = key;
    std::copy(values.begin(), values.end(), row_.begin() + 1);
    const hsize_t extent[2] = {rows_ + 1, width_};
    const hsize_t start[2] = {rows_, 0};
    const hsize_t count[2] = {1, width_};
    if (failed_) {
      throw OutputError(fmt::format("{}: not written after an earlier write failed", path_));
    }
    errno = 0;
    bool ok = H5Dset_extent(dataset_.get(), extent) >= 0;
    if (ok) {
      Handle file_space(H5Dget_space(dataset_.get()), H5Sclose);
      Handle memory(H5Screate_simple(2, count, nullptr), H5Sclose);
      ok = file_space.ok() && memory.ok() &&
           H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >=
               0 &&
           H5Dwrite(dataset_.get(), H5T_NATIVE_DOUBLE, memory.get(), file_space.get(), H5P_DEFAULT,
                    row_.data()) >= 0 &&
           H5Fflush(file_, H5F_SCOPE_LOCAL) >= 0;
    }
    if (!ok) {
      // A failed flush leaves HDF5's own structures of the file in an unknown state: nothing
      // more is written to it, and the message says that the file is partial.
      failed_ = true;
      throw OutputError(fmt::format(
          "{}: HDF5 write failed{} after {} complete rows; the file is partial and HDF5 tools "
          "may not open it",
          path_, os_reason(errno), rows_));
    }
    ++rows_;
  }
  std::size_t rows() const override { return rows_; }
  const std::string& path() const override { return path_; }
  bool failed() const { return failed_; }

 private:
  std::string path_;
  hid_t file_;
  Handle dataset_;
  hsize_t width_;
  hsize_t rows_ = 0;
  std::vector<double> row_;
  bool failed_ = false;
};

Hdf5File::Hdf5File(std::string path) : path_(std::move(path)) {
  silence_hdf5();
  file_ = H5Fcreate(path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) throw OutputError(fmt::format("{}: cannot create the HDF5 file", path_));
  // Close-on-exec, as the CSV writer's: worker processes started during the run must not hold
  // the result file (nor, through the shared open file, HDF5's lock on it).
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file_, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
    const int fd = *static_cast<int*>(handle);
    ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
  }
}

Hdf5File::~Hdf5File() {
  try {
    close();
  } catch (const OutputError&) {
    // Documented: call close() to see the error.
  }
}

TableWriter& Hdf5File::add_table(const std::string& name, const std::string& key_column,
                                 const std::vector<std::string>& columns,
                                 const std::vector<std::string>& units,
                                 const std::vector<std::string>& descriptions) {
  check_names(key_column, columns);
  if (!units.empty() && units.size() != columns.size() + 1) {
    throw std::invalid_argument("Hdf5File::add_table: one unit per column, the key's first");
  }
  if (!descriptions.empty() && descriptions.size() != columns.size() + 1) {
    throw std::invalid_argument("Hdf5File::add_table: one description per column, the key's first");
  }
  if (file_ < 0) throw OutputError(fmt::format("{}: table added after close", path_));
  const hsize_t width = columns.size() + 1;
  // About 64 KiB per chunk: a few rows of a wide table, up to 1024 of a narrow one.
  const hsize_t chunk_rows = std::clamp<hsize_t>(65536 / (8 * width), 1, 1024);
  const hsize_t dims[2] = {0, width};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, width};
  const hsize_t chunk[2] = {chunk_rows, width};
  Handle space(H5Screate_simple(2, dims, max_dims), H5Sclose);
  Handle create(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  const bool chunked = create.ok() && H5Pset_chunk(create.get(), 2, chunk) >= 0;
  const hid_t dataset = chunked ? H5Dcreate2(file_, name.c_str(), H5T_IEEE_F64LE, space.get(),
                                             H5P_DEFAULT, create.get(), H5P_DEFAULT)
                                : -1;
  if (dataset < 0) {
    throw OutputError(fmt::format("{}: cannot create the HDF5 dataset /{}", path_, name));
  }
  auto table = std::make_unique<Table>(path_, file_, dataset, width);
  std::vector<const char*> names{key_column.c_str()};
  for (const auto& c : columns) names.push_back(c.c_str());
  std::vector<const char*> unit_names, description_texts;
  for (const auto& u : units) unit_names.push_back(u.c_str());
  for (const auto& d : descriptions) description_texts.push_back(d.c_str());
  const hsize_t n = names.size();
  Handle list(H5Screate_simple(1, &n, nullptr), H5Sclose);
  const Handle t = string_type();
  if (!write_attribute(dataset, "columns", t.get(), list.get(), names.data()) ||
      (!units.empty() &&
       !write_attribute(dataset, "units", t.get(), list.get(), unit_names.data())) ||
      (!descriptions.empty() &&
       !write_attribute(dataset, "descriptions", t.get(), list.get(), description_texts.data())) ||
      H5Fflush(file_, H5F_SCOPE_LOCAL) < 0) {
    throw OutputError(fmt::format("{}: cannot write the columns of /{}", path_, name));
  }
  tables_.push_back(std::move(table));
  return *tables_.back();
}

void Hdf5File::write_metadata(const nlohmann::ordered_json& document,
                              const nlohmann::ordered_json& scalars) {
  if (file_ < 0) throw OutputError(fmt::format("{}: metadata written after close", path_));
  for (const auto& t : tables_) {
    if (t->failed()) {
      throw OutputError(fmt::format(
          "{}: the metadata attributes are not written: a write to the file failed before", path_));
    }
  }
  const std::string text = document.dump(1);
  Handle root(H5Gopen2(file_, "/", H5P_DEFAULT), H5Gclose);
  bool ok = root.ok() && write_scalar_attribute(root.get(), "metadata_json", text);
  for (auto it = scalars.begin(); ok && it != scalars.end(); ++it) {
    ok = write_scalar_attribute(root.get(), it.key(), it.value());
  }
  if (!ok || H5Fflush(file_, H5F_SCOPE_LOCAL) < 0) {
    throw OutputError(fmt::format("{}: cannot write the metadata attributes", path_));
  }
}

void Hdf5File::close() {
  if (file_ < 0) return;
  tables_.clear();  // the datasets first: the file closes only once nothing is open in it
  if (H5Fclose(std::exchange(file_, -1)) < 0) {
    throw OutputError(fmt::format("{}: closing the HDF5 file failed", path_));
  }
}

namespace {

// The string-list attribute `attribute` ("columns", "units") of a dataset.
std::vector<std::string> read_string_list(const std::string& path, hid_t dataset,
                                          const char* attribute) {
  const auto fail = [&path, attribute](const char* what) {
    return OutputError(fmt::format("{}: attribute '{}' {}", path, attribute, what));
  };
  if (H5Aexists(dataset, attribute) <= 0) throw fail("is missing from the dataset");
  Handle a(H5Aopen(dataset, attribute, H5P_DEFAULT), H5Aclose);
  Handle space(H5Aget_space(a.get()), H5Sclose);
  Handle type(H5Aget_type(a.get()), H5Tclose);
  if (!a.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_STRING ||
      H5Tis_variable_str(type.get()) <= 0 || H5Sget_simple_extent_ndims(space.get()) != 1) {
    throw fail("is not a list of strings");
  }
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  std::vector<char*> raw(n, nullptr);
  const Handle t = string_type();
  if (H5Aread(a.get(), t.get(), raw.data()) < 0) throw fail("cannot be read");
  std::vector<std::string> names;
  for (char* p : raw) names.emplace_back(p != nullptr ? p : "");
  H5Dvlen_reclaim(t.get(), space.get(), H5P_DEFAULT, raw.data());
  return names;
}

}  // namespace

CsvTable read_hdf5_table(const std::string& path, const std::string& name,
                         const std::string& key_column) {
  silence_hdf5();
  const auto fail = [&path](const std::string& what) {
    return OutputError(fmt::format("{}: {}", path, what));
  };
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    throw fail("cannot open: not a readable HDF5 file");
  }
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) throw fail("cannot open the HDF5 file");
  if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0) {
    throw fail(fmt::format("no dataset /{}", name));
  }
  Handle dataset(H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  hsize_t dims[2] = {0, 0};
  if (!dataset.ok() || H5Sget_simple_extent_ndims(space.get()) != 2 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    throw fail(fmt::format("/{} is not a 2-D dataset", name));
  }
  const std::vector<std::string> names = read_string_list(path, dataset.get(), "columns");
  if (names.size() != dims[1] || names.empty()) {
    throw fail(fmt::format("/{} has {} columns but {} column names", name, dims[1], names.size()));
  }
  if (names.front() != key_column) {
    throw fail(fmt::format("the first column must be '{}' (got '{}')", key_column, names.front()));
  }
  std::vector<double> data(dims[0] * dims[1]);
  if (!data.empty() &&
      H5Dread(dataset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0) {
    throw fail(fmt::format("cannot read /{}", name));
  }
  CsvTable table;
  table.columns.assign(names.begin() + 1, names.end());
  if (H5Aexists(dataset.get(), "units") > 0) {
    const std::vector<std::string> units = read_string_list(path, dataset.get(), "units");
    if (units.size() == names.size()) table.units.assign(units.begin() + 1, units.end());
  }
  if (H5Aexists(dataset.get(), "descriptions") > 0) {
    const auto texts = read_string_list(path, dataset.get(), "descriptions");
    if (texts.size() == names.size()) table.descriptions.assign(texts.begin() + 1, texts.end());
  }
  table.values.assign(table.columns.size(), std::vector<double>(dims[0]));
  table.time.resize(dims[0]);
  for (hsize_t r = 0; r < dims[0]; ++r) {
    table.time[r] = data[r * dims[1]];
    for (hsize_t c = 1; c < dims[1]; ++c) table.values[c - 1][r] = data[r * dims[1] + c];
  }
  return table;
}

CsvTable read_result_table(const std::string& path) {
  if (is_hdf5_path(path)) return read_hdf5_table(path);
  CsvTable table = read_csv(path);
  table.units = recorded_labels(path, table.columns, "unit");
  table.descriptions = recorded_labels(path, table.columns, "description");
  return table;
}

}  // namespace macrostep::output
