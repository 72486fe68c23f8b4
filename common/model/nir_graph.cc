#include "common/model/nir_graph.h"

#include <hdf5.h>

#include <cstring>
#include <set>

namespace snn {
namespace {

// Datasets larger than this are refused rather than read: a model's weights, not a data set.
constexpr uint64_t kMaxValues = uint64_t{1} << 24;
constexpr int kMaxDepth = 16;  // nested subgraphs
constexpr uint64_t kMaxNodes = 100'000;

// Closes an HDF5 handle with the right call when it goes out of scope.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  Result<NirGraph> Read();

 private:
  Status Error(const std::string& what) const { return InvalidArgument(path_ + ": " + what); }
  Status Damaged(const std::string& object) const {
    return Error("cannot read " + object + ": the file is damaged or truncated");
  }
  bool IsGroup(hid_t parent, const std::string& name) const;
  bool IsDataset(hid_t parent, const std::string& name) const;
  std::vector<std::string> Children(hid_t group, const std::string& where, Status* status) const;
  Result<std::vector<std::string>> Strings(hid_t dataset, const std::string& where,
                                           std::vector<uint64_t>* dims) const;
  Result<NirArray> Numbers(hid_t dataset, const std::string& where) const;
  Status ReadNode(hid_t group, const std::string& name, const std::string& where,
                  NirNode* node) const;
  Status ReadGraph(hid_t group, const std::string& prefix, const std::string& where, int depth);
  std::string UnknownEnd(const std::string& end) const;

  std::string path_;
  NirGraph graph_;
  // Each subgraph's flattened name, with its Input and Output nodes.
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> ports_;
};

// The kind of object a link leads to, or H5O_TYPE_UNKNOWN.
H5O_type_t ObjectType(hid_t parent, const std::string& name) {
  if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) <= 0) return H5O_TYPE_UNKNOWN;
  H5O_info_t info;
  if (H5Oget_info_by_name2(parent, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
    return H5O_TYPE_UNKNOWN;
  }
  return info.type;
}

bool Reader::IsGroup(hid_t parent, const std::string& name) const {
  return ObjectType(parent, name) == H5O_TYPE_GROUP;
}

bool Reader::IsDataset(hid_t parent, const std::string& name) const {
  return ObjectType(parent, name) == H5O_TYPE_DATASET;
}

std::vector<std::string> Reader::Children(hid_t group, const std::string& where,
                                          Status* status) const {
  std::vector<std::string> names;
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) {
    *status = Damaged(where);
    return names;
  }
  if (info.nlinks > kMaxNodes) {
    *status = Error(where + " has " + std::to_string(info.nlinks) + " entries; at most " +
                    std::to_string(kMaxNodes) + " are read");
    return names;
  }
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t n =
        H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) {
      *status = Damaged(where);
      return {};
    }
    std::string name(static_cast<size_t>(n), '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1,
                       H5P_DEFAULT);
    names.push_back(std::move(name));
  }
  return names;
}

Result<std::vector<std::string>> Reader::Strings(hid_t dataset, const std::string& where,
                                                 std::vector<uint64_t>* dims) const {
  Handle type(H5Dget_type(dataset), H5Tclose), space(H5Dget_space(dataset), H5Sclose);
  if (!type.ok() || !space.ok()) return Damaged(where);
  if (H5Tget_class(type.get()) != H5T_STRING) return Error(where + " is not text");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 8) return Damaged(where);
  std::vector<hsize_t> d(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), d.data(), nullptr);
  uint64_t count = 1;
  for (hsize_t x : d) count *= x;
  if (count > kMaxValues) return Error(where + " holds too many strings");
  if (dims) dims->assign(d.begin(), d.end());
  std::vector<std::string> out;
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // ASCII or UTF-8, as written
    std::vector<char*> raw(count, nullptr);
    if (H5Dread(dataset, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0) {
      return Damaged(where);
    }
    for (char* s : raw) out.emplace_back(s ? s : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, raw.data());
  } else {
    // Fixed-length strings (h5py writes bytes so): read as stored, whatever their padding
    // (null-terminated, null-padded or space-padded), so that no conversion cuts a character.
    const size_t size = H5Tget_size(type.get());
    if (size == 0 || size > 4096) return Damaged(where);
    const bool spaces = H5Tget_strpad(type.get()) == H5T_STR_SPACEPAD;
    Handle mem(H5Tcopy(type.get()), H5Tclose);
    std::vector<char> raw(count * size, '\0');
    if (!mem.ok() || H5Dread(dataset, mem.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()) < 0) {
      return Damaged(where);
    }
    for (uint64_t i = 0; i < count; ++i) {
      const char* s = raw.data() + i * size;
      std::string text(s, strnlen(s, size));
      while (spaces && !text.empty() && text.back() == ' ') text.pop_back();
      out.push_back(std::move(text));
    }
  }
  return out;
}

Result<NirArray> Reader::Numbers(hid_t dataset, const std::string& where) const {
  Handle space(H5Dget_space(dataset), H5Sclose);
  if (!space.ok()) return Damaged(where);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 8) return Damaged(where);
  std::vector<hsize_t> d(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), d.data(), nullptr);
  NirArray a;
  uint64_t count = 1;
  for (hsize_t x : d) {
    count *= x;
    if (count > kMaxValues) {
      return Error(where + " holds more than " + std::to_string(kMaxValues) +
                   " values; a model's weights are read, not data sets");
    }
    a.dims.push_back(x);
  }
  a.values.resize(count);
  if (count > 0 &&
      H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.values.data()) < 0) {
    return Damaged(where);
  }
  return a;
}

Status Reader::ReadNode(hid_t group, const std::string& name, const std::string& where,
                        NirNode* node) const {
  Status status = Status::Ok();
  for (const std::string& child : Children(group, where, &status)) {
    const std::string at = where + "/" + child;
    if (IsGroup(group, child)) {  // e.g. input_type/input in newer files: one level down
      Handle sub(H5Gopen2(group, child.c_str(), H5P_DEFAULT), H5Gclose);
      if (!sub.ok()) return Damaged(at);
      NirNode inner;
      SNN_RETURN_IF_ERROR(ReadNode(sub.get(), name, at, &inner));
      for (auto& [k, v] : inner.numbers) node->numbers[child + "/" + k] = std::move(v);
      continue;
    }
    if (!IsDataset(group, child)) continue;
    Handle dataset(H5Dopen2(group, child.c_str(), H5P_DEFAULT), H5Dclose);
    Handle type(dataset.ok() ? H5Dget_type(dataset.get()) : -1, H5Tclose);
    if (!dataset.ok() || !type.ok()) return Damaged(at);
    const H5T_class_t kind = H5Tget_class(type.get());
    if (kind == H5T_STRING) {
      auto text = Strings(dataset.get(), at, nullptr);
      if (!text.ok()) return text.status();
      if (text->size() == 1) {
        (child == "type" ? node->type : node->strings[child]) = (*text)[0];
      }
    } else if (kind == H5T_INTEGER || kind == H5T_FLOAT) {
      auto numbers = Numbers(dataset.get(), at);
      if (!numbers.ok()) return numbers.status();
      node->numbers[child] = std::move(numbers).value();
    }  // other kinds (booleans as enums, references) carry nothing the board uses
  }
  if (!status.ok()) return status;
  if (node->type.empty()) return Error("node '" + name + "' has no type");
  return Status::Ok();
}

Status Reader::ReadGraph(hid_t group, const std::string& prefix, const std::string& where,
                         int depth) {
  if (depth > kMaxDepth) {
    return Error(where + ": subgraphs nested more than " + std::to_string(kMaxDepth) + " deep");
  }
  if (!IsGroup(group, "nodes")) return Error(where + " has no nodes: not a NIR graph");
  Handle nodes(H5Gopen2(group, "nodes", H5P_DEFAULT), H5Gclose);
  if (!nodes.ok()) return Damaged(where + "/nodes");
  Status status = Status::Ok();
  std::vector<std::string> inputs, outputs;
  for (const std::string& local : Children(nodes.get(), where + "/nodes", &status)) {
    const std::string name = prefix + local, at = where + "/nodes/" + local;
    if (!IsGroup(nodes.get(), local)) continue;
    Handle node_group(H5Gopen2(nodes.get(), local.c_str(), H5P_DEFAULT), H5Gclose);
    if (!node_group.ok()) return Damaged(at);
    if (graph_.nodes.size() >= kMaxNodes) return Error("more than 100000 nodes");
    if (IsGroup(node_group.get(), "nodes")) {  // a nested NIRGraph
      SNN_RETURN_IF_ERROR(ReadGraph(node_group.get(), name + ".", at, depth + 1));
      continue;
    }
    NirNode node;
    node.name = name;
    node.top_level = depth == 0;
    SNN_RETURN_IF_ERROR(ReadNode(node_group.get(), name, at, &node));
    if (node.type == "Input") inputs.push_back(name);
    if (node.type == "Output") outputs.push_back(name);
    graph_.nodes[name] = std::move(node);
  }
  if (!status.ok()) return status;
  if (depth > 0) ports_[prefix.substr(0, prefix.size() - 1)] = {inputs, outputs};
  if (!IsDataset(group, "edges")) return Status::Ok();
  Handle edges(H5Dopen2(group, "edges", H5P_DEFAULT), H5Dclose);
  if (!edges.ok()) return Damaged(where + "/edges");
  std::vector<uint64_t> dims;
  auto names = Strings(edges.get(), where + "/edges", &dims);
  if (!names.ok()) return names.status();
  if (names->empty()) return Status::Ok();
  if (dims.size() != 2 || dims[1] != 2) {
    return Error(where + "/edges is not a list of (source, target) pairs");
  }
  for (size_t i = 0; i + 1 < names->size(); i += 2) {
    graph_.edges.emplace_back(prefix + (*names)[i], prefix + (*names)[i + 1]);
  }
  return Status::Ok();
}

// An edge's end that names nothing: say which graph it is in and the nodes that graph does have,
// those whose own names hold dots included (a subgraph some exporters write flattened, its nodes
// named "lif1.lif", "lif1.w_rec" beside the graph's others, which explains an edge to "lif1").
std::string Reader::UnknownEnd(const std::string& end) const {
  const size_t dot = end.rfind('.');
  const std::string scope = dot == std::string::npos ? "" : end.substr(0, dot + 1);
  const std::string local = end.substr(scope.size());
  std::set<std::string> names, flattened;  // the graph's own nodes and subgraphs, local names
  auto add = [&](const std::string& name) {
    if (name.size() <= scope.size() || name.compare(0, scope.size(), scope) != 0) return;
    // A node inside a nested subgraph is listed by its subgraph's name.
    const size_t next = name.find('.', scope.size());
    if (next != std::string::npos && ports_.count(name.substr(0, next))) return;
    const std::string mine = name.substr(scope.size());
    (mine.rfind(local + ".", 0) == 0 ? flattened : names).insert(mine);
  };
  for (const auto& [name, node] : graph_.nodes) add(name);
  for (const auto& [name, ports] : ports_) add(name);
  auto list = [](const std::set<std::string>& set) {
    std::string out;
    int shown = 0;
    for (const auto& name : set) {
      if (shown++ == 30) return out + ", ...";
      out += (out.empty() ? "" : ", ") + name;
    }
    return out;
  };
  const std::string where =
      scope.empty() ? "the graph" : "subgraph '" + scope.substr(0, scope.size() - 1) + "'";
  std::string said =
      "an edge of " + where + " names '" + local + "', which is not one of its nodes";
  if (!flattened.empty()) {
    said += ": " + where + " has " + list(flattened) + ", a subgraph '" + local +
            "' written flattened (its nodes' names hold dots; NIR keeps a subgraph as a nested "
            "graph): export it nested, or name one of those nodes in the edge";
    return names.empty() ? said : said + " (" + where + " also has: " + list(names) + ")";
  }
  return said + " (" + where + " has: " + (names.empty() ? "none" : list(names)) + ")";
}

Result<NirGraph> Reader::Read() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as values, not on stderr
  const htri_t is_hdf5 = H5Fis_hdf5(path_.c_str());
  if (is_hdf5 <= 0)
    return Error("not a NIR file (NIR files are HDF5; this one is not, or is cut short)");
  Handle file(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return Damaged("the file");
  if (IsDataset(file.get(), "version")) {
    Handle v(H5Dopen2(file.get(), "version", H5P_DEFAULT), H5Dclose);
    if (v.ok()) {
      auto text = Strings(v.get(), "/version", nullptr);
      if (text.ok() && text->size() == 1) graph_.version = (*text)[0];
    }
  }
  if (!IsGroup(file.get(), "node")) return Error("no /node group: an HDF5 file, but not NIR");
  Handle root(H5Gopen2(file.get(), "node", H5P_DEFAULT), H5Gclose);
  if (!root.ok()) return Damaged("/node");
  SNN_RETURN_IF_ERROR(ReadGraph(root.get(), "", "/node", 0));
  // An edge naming a subgraph enters at its Input and leaves at its Output.
  auto resolve = [&](std::string& end, bool as_target) -> Status {
    if (graph_.nodes.count(end)) return Status::Ok();
    auto it = ports_.find(end);
    if (it == ports_.end()) return Error(UnknownEnd(end));
    const auto& ports = as_target ? it->second.first : it->second.second;
    if (ports.size() != 1) {
      return Error("an edge names subgraph '" + end + "', which has " +
                   std::to_string(ports.size()) + (as_target ? " Input" : " Output") +
                   " nodes; name one of them");
    }
    end = ports[0];
    return Status::Ok();
  };
  for (auto& [from, to] : graph_.edges) {
    SNN_RETURN_IF_ERROR(resolve(from, false));
    SNN_RETURN_IF_ERROR(resolve(to, true));
  }
  return std::move(graph_);
}

}  // namespace

Result<NirGraph> ReadNirGraph(const std::string& path) { return Reader(path).Read(); }

}  // namespace snn
