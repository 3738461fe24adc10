// HDF5 result files (hdf5.hpp), HDF5 C API through the library loaded on first use
// (hdf5_library.hpp: every HDF5 function and variable is a member of `h5`).
#include "macrostep/output/hdf5.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <type_traits>
#include <utility>

#include "hdf5_library.hpp"
#include "macrostep/output/metadata.hpp"

namespace macrostep::output {

static_assert(std::is_same_v<hid_t, std::int64_t>, "Hdf5File keeps an hid_t as std::int64_t");

using detail::Hdf5Library;

namespace {

// For the message when the library cannot be loaded (detail::hdf5_library).
constexpr std::string_view kOutput = "HDF5 output";
constexpr std::string_view kInput = "HDF5 input";

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
Handle string_type(const Hdf5Library& h5) {
  Handle t(h5.H5Tcopy(h5.H5T_C_S1_g), h5.H5Tclose);
  h5.H5Tset_size(t.get(), H5T_VARIABLE);
  h5.H5Tset_cset(t.get(), H5T_CSET_UTF8);
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
bool write_attribute(const Hdf5Library& h5, hid_t object, const std::string& name, hid_t type,
                     hid_t space, const void* value) {
  if (h5.H5Aexists(object, name.c_str()) > 0 && h5.H5Adelete(object, name.c_str()) < 0) {
    return false;
  }
  Handle a(h5.H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), h5.H5Aclose);
  return a.ok() && h5.H5Awrite(a.get(), type, value) >= 0;
}

bool write_scalar_attribute(const Hdf5Library& h5, hid_t object, const std::string& name,
                            const nlohmann::ordered_json& v) {
  Handle scalar(h5.H5Screate(H5S_SCALAR), h5.H5Sclose);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    const char* p = s.c_str();
    const Handle t = string_type(h5);
    return write_attribute(h5, object, name, t.get(), scalar.get(), &p);
  }
  if (v.is_number_integer() || v.is_boolean()) {
    const std::int64_t x = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<std::int64_t>();
    return write_attribute(h5, object, name, h5.H5T_NATIVE_INT64_g, scalar.get(), &x);
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    return write_attribute(h5, object, name, h5.H5T_NATIVE_DOUBLE_g, scalar.get(), &x);
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
  Table(const Hdf5Library& h5, const std::string& file_path, hid_t file, hid_t dataset,
        std::size_t width)
      : h5_(h5),
        path_(file_path),
        file_(file),
        dataset_(dataset, h5.H5Dclose),
        width_(width),
        row_(width) {}

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
    bool ok = h5_.H5Dset_extent(dataset_.get(), extent) >= 0;
    if (ok) {
      Handle file_space(h5_.H5Dget_space(dataset_.get()), h5_.H5Sclose);
      Handle memory(h5_.H5Screate_simple(2, count, nullptr), h5_.H5Sclose);
      ok = file_space.ok() && memory.ok() &&
           h5_.H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count,
                                   nullptr) >= 0 &&
           h5_.H5Dwrite(dataset_.get(), h5_.H5T_NATIVE_DOUBLE_g, memory.get(), file_space.get(),
                        H5P_DEFAULT, row_.data()) >= 0 &&
           h5_.H5Fflush(file_, H5F_SCOPE_LOCAL) >= 0;
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
  const Hdf5Library& h5_;
  std::string path_;
  hid_t file_;
  Handle dataset_;
  hsize_t width_;
  hsize_t rows_ = 0;
  std::vector<double> row_;
  bool failed_ = false;
};

Hdf5File::Hdf5File(std::string path) : path_(std::move(path)) {
  const Hdf5Library& h5 = detail::hdf5_library(path_, kOutput);
  file_ = h5.H5Fcreate(path_.c_str(), detail::kHdf5Truncate, H5P_DEFAULT, H5P_DEFAULT);
  if (file_ < 0) throw OutputError(fmt::format("{}: cannot create the HDF5 file", path_));
  // Close-on-exec, as the CSV writer's: worker processes started during the run must not hold
  // the result file (nor, through the shared open file, HDF5's lock on it).
  void* handle = nullptr;
  if (h5.H5Fget_vfd_handle(file_, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
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
  const Hdf5Library& h5 = detail::hdf5_library(path_, kOutput);  // loaded: the file is open
  const hsize_t width = columns.size() + 1;
  // About 64 KiB per chunk: a few rows of a wide table, up to 1024 of a narrow one.
  const hsize_t chunk_rows = std::clamp<hsize_t>(65536 / (8 * width), 1, 1024);
  const hsize_t dims[2] = {0, width};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, width};
  const hsize_t chunk[2] = {chunk_rows, width};
  Handle space(h5.H5Screate_simple(2, dims, max_dims), h5.H5Sclose);
  Handle create(h5.H5Pcreate(h5.H5P_CLS_DATASET_CREATE_ID_g), h5.H5Pclose);
  const bool chunked = create.ok() && h5.H5Pset_chunk(create.get(), 2, chunk) >= 0;
  const hid_t dataset = chunked ? h5.H5Dcreate2(file_, name.c_str(), h5.H5T_IEEE_F64LE_g,
                                                space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT)
                                : -1;
  if (dataset < 0) {
    throw OutputError(fmt::format("{}: cannot create the HDF5 dataset /{}", path_, name));
  }
  auto table = std::make_unique<Table>(h5, path_, file_, dataset, width);
  std::vector<const char*> names{key_column.c_str()};
  for (const auto& c : columns) names.push_back(c.c_str());
  std::vector<const char*> unit_names, description_texts;
  for (const auto& u : units) unit_names.push_back(u.c_str());
  for (const auto& d : descriptions) description_texts.push_back(d.c_str());
  const hsize_t n = names.size();
  Handle list(h5.H5Screate_simple(1, &n, nullptr), h5.H5Sclose);
  const Handle t = string_type(h5);
  if (!write_attribute(h5, dataset, "columns", t.get(), list.get(), names.data()) ||
      (!units.empty() &&
       !write_attribute(h5, dataset, "units", t.get(), list.get(), unit_names.data())) ||
      (!descriptions.empty() && !write_attribute(h5, dataset, "descriptions", t.get(), list.get(),
                                                 description_texts.data())) ||
      h5.H5Fflush(file_, H5F_SCOPE_LOCAL) < 0) {
    throw OutputError(fmt::format("{}: cannot write the columns of /{}", path_, name));
  }
  tables_.push_back(std::move(table));
  return *tables_.back();
}

void Hdf5File::write_metadata(const nlohmann::ordered_json& document,
                              const nlohmann::ordered_json& scalars) {
  if (file_ < 0) throw OutputError(fmt::format("{}: metadata written after close", path_));
  const Hdf5Library& h5 = detail::hdf5_library(path_, kOutput);  // loaded: the file is open
  for (const auto& t : tables_) {
    if (t->failed()) {
      throw OutputError(fmt::format(
          "{}: the metadata attributes are not written: a write to the file failed before", path_));
    }
  }
  const std::string text = document.dump(1);
  Handle root(h5.H5Gopen2(file_, "/", H5P_DEFAULT), h5.H5Gclose);
  bool ok = root.ok() && write_scalar_attribute(h5, root.get(), "metadata_json", text);
  for (auto it = scalars.begin(); ok && it != scalars.end(); ++it) {
    ok = write_scalar_attribute(h5, root.get(), it.key(), it.value());
  }
  if (!ok || h5.H5Fflush(file_, H5F_SCOPE_LOCAL) < 0) {
    throw OutputError(fmt::format("{}: cannot write the metadata attributes", path_));
  }
}

void Hdf5File::close() {
  if (file_ < 0) return;
  const Hdf5Library& h5 = detail::hdf5_library(path_, kOutput);  // loaded: the file is open
  tables_.clear();  // the datasets first: the file closes only once nothing is open in it
  if (h5.H5Fclose(std::exchange(file_, -1)) < 0) {
    throw OutputError(fmt::format("{}: closing the HDF5 file failed", path_));
  }
}

namespace {

// The string-list attribute `attribute` ("columns", "units") of a dataset.
std::vector<std::string> read_string_list(const Hdf5Library& h5, const std::string& path,
                                          hid_t dataset, const char* attribute) {
  const auto fail = [&path, attribute](const char* what) {
    return OutputError(fmt::format("{}: attribute '{}' {}", path, attribute, what));
  };
  if (h5.H5Aexists(dataset, attribute) <= 0) throw fail("is missing from the dataset");
  Handle a(h5.H5Aopen(dataset, attribute, H5P_DEFAULT), h5.H5Aclose);
  Handle space(h5.H5Aget_space(a.get()), h5.H5Sclose);
  Handle type(h5.H5Aget_type(a.get()), h5.H5Tclose);
  if (!a.ok() || !space.ok() || h5.H5Tget_class(type.get()) != H5T_STRING ||
      h5.H5Tis_variable_str(type.get()) <= 0 || h5.H5Sget_simple_extent_ndims(space.get()) != 1) {
    throw fail("is not a list of strings");
  }
  hsize_t n = 0;
  h5.H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  std::vector<char*> raw(n, nullptr);
  const Handle t = string_type(h5);
  if (h5.H5Aread(a.get(), t.get(), raw.data()) < 0) throw fail("cannot be read");
  std::vector<std::string> names;
  for (char* p : raw) names.emplace_back(p != nullptr ? p : "");
  h5.H5Dvlen_reclaim(t.get(), space.get(), H5P_DEFAULT, raw.data());
  return names;
}

}  // namespace

CsvTable read_hdf5_table(const std::string& path, const std::string& name,
                         const std::string& key_column) {
  const Hdf5Library& h5 = detail::hdf5_library(path, kInput);
  const auto fail = [&path](const std::string& what) {
    return OutputError(fmt::format("{}: {}", path, what));
  };
  if (h5.H5Fis_hdf5(path.c_str()) <= 0) {
    throw fail("cannot open: not a readable HDF5 file");
  }
  Handle file(h5.H5Fopen(path.c_str(), detail::kHdf5ReadOnly, H5P_DEFAULT), h5.H5Fclose);
  if (!file.ok()) throw fail("cannot open the HDF5 file");
  if (h5.H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0) {
    throw fail(fmt::format("no dataset /{}", name));
  }
  Handle dataset(h5.H5Dopen2(file.get(), name.c_str(), H5P_DEFAULT), h5.H5Dclose);
  Handle space(h5.H5Dget_space(dataset.get()), h5.H5Sclose);
  hsize_t dims[2] = {0, 0};
  if (!dataset.ok() || h5.H5Sget_simple_extent_ndims(space.get()) != 2 ||
      h5.H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0) {
    throw fail(fmt::format("/{} is not a 2-D dataset", name));
  }
  const std::vector<std::string> names = read_string_list(h5, path, dataset.get(), "columns");
  if (names.size() != dims[1] || names.empty()) {
    throw fail(fmt::format("/{} has {} columns but {} column names", name, dims[1], names.size()));
  }
  if (names.front() != key_column) {
    throw fail(fmt::format("the first column must be '{}' (got '{}')", key_column, names.front()));
  }
  std::vector<double> data(dims[0] * dims[1]);
  if (!data.empty() && h5.H5Dread(dataset.get(), h5.H5T_NATIVE_DOUBLE_g, H5S_ALL, H5S_ALL,
                                  H5P_DEFAULT, data.data()) < 0) {
    throw fail(fmt::format("cannot read /{}", name));
  }
  CsvTable table;
  table.columns.assign(names.begin() + 1, names.end());
  if (h5.H5Aexists(dataset.get(), "units") > 0) {
    const std::vector<std::string> units = read_string_list(h5, path, dataset.get(), "units");
    if (units.size() == names.size()) table.units.assign(units.begin() + 1, units.end());
  }
  if (h5.H5Aexists(dataset.get(), "descriptions") > 0) {
    const auto texts = read_string_list(h5, path, dataset.get(), "descriptions");
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
