#include "nodeagent/tasks/mapping_file.h"

#include <fstream>
#include <string>

namespace snn {
namespace {

std::string PointsJson(const google::protobuf::RepeatedPtrField<v1::CoreXY>& points) {
  std::string s = "[";
  for (const auto& p : points) {
    s += (s.size() > 1 ? "," : "") + std::string("[") + std::to_string(p.x()) + "," +
         std::to_string(p.y()) + "]";
  }
  return s + "]";
}

}  // namespace

Status WriteMappingFile(const v1::TaskMapping& m, const v1::BoardInfo& board) {
  std::ofstream out(m.mapping_file());
  out << "{\n  \"board_type\": \"" << board.type() << "\",\n  \"mesh\": [" << board.width() << ","
      << board.height() << "],\n  \"io_port\": [" << board.io_port().x() << ","
      << board.io_port().y() << "],\n  \"rect\": {\"x\": " << m.rect().x()
      << ", \"y\": " << m.rect().y() << ", \"width\": " << m.rect().width()
      << ", \"height\": " << m.rect().height() << "},\n  \"cores\": [\n";
  for (int i = 0; i < m.cores_size(); ++i) {
    out << "    {\"logical\": " << i << ", \"x\": " << m.cores(i).x()
        << ", \"y\": " << m.cores(i).y() << ", \"config_path\": " << PointsJson(m.paths(i).config())
        << ", \"spike_path\": " << PointsJson(m.paths(i).spike()) << "}"
        << (i + 1 < m.cores_size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  out.close();
  if (!out) return Internal("cannot write the mapping file " + m.mapping_file());
  return Status::Ok();
}

}  // namespace snn
