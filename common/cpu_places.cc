#include "common/cpu_places.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/cpu_list.h"

namespace paradnn::common {
namespace {

std::string ReadSmallFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A topology number of `cpu`; -1 when the file is missing or not a number.
int TopologyNumber(const std::string& root, int cpu, const char* name) {
  int value = -1;
  const std::string text = ReadSmallFile(absl::StrCat(root, "/cpu/cpu", cpu, "/topology/", name));
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &value)) return -1;
  return value;
}

// CPU -> node from node/nodeK/cpulist.
std::map<int, int> NodeOfCpus(const std::string& root) {
  std::map<int, int> node_of;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/node", error)) {
    const std::string name = entry.path().filename().string();
    int node = 0;
    if (name.rfind("node", 0) != 0 || !absl::SimpleAtoi(name.substr(4), &node)) continue;
    const std::string list = ReadSmallFile(entry.path() / "cpulist");
    if (absl::StripAsciiWhitespace(list).empty()) continue;  // a memory-only node
    absl::StatusOr<std::vector<int>> cpus = ParseCpuList(list, entry.path().string());
    if (!cpus.ok()) continue;
    for (int cpu : *cpus) node_of.emplace(cpu, node);
  }
  return node_of;
}

std::vector<int> CpusOf(const std::vector<CpuPlace>& places, int node) {
  std::vector<int> cpus;
  for (const CpuPlace& p : places) {
    if (p.node == node) cpus.push_back(p.cpu);
  }
  return cpus;
}

}  // namespace

std::vector<CpuPlace> ReadCpuPlaces(const std::vector<int>& cpus, const std::string& root) {
  const std::map<int, int> node_of = NodeOfCpus(root);
  std::vector<CpuPlace> places;
  for (int cpu : cpus) {
    CpuPlace place;
    place.cpu = cpu;
    const int package = TopologyNumber(root, cpu, "physical_package_id");
    const int core = TopologyNumber(root, cpu, "core_id");
    // Unknown topology: the CPU is a core of its own (core ids are then the
    // CPU numbers, which no known core id of package 0 can collide with
    // because package and core are both unknown together or not at all).
    const bool known = package >= 0 && core >= 0;
    place.topology_known = known;
    place.package = known ? package : 0;
    place.core = known ? core : -1 - cpu;
    const auto node = node_of.find(cpu);
    place.node = node == node_of.end() ? 0 : node->second;
    places.push_back(place);
  }
  return places;
}

std::vector<int> PhysicalCoreCpus(const std::vector<CpuPlace>& places) {
  std::map<std::pair<int, int>, int> first_of_core;
  for (const CpuPlace& p : places) {
    auto [it, inserted] = first_of_core.emplace(std::make_pair(p.package, p.core), p.cpu);
    if (!inserted && p.cpu < it->second) it->second = p.cpu;
  }
  std::set<int> cpus;
  for (const auto& [core, cpu] : first_of_core) cpus.insert(cpu);
  return {cpus.begin(), cpus.end()};
}

std::vector<int> NodesOf(const std::vector<CpuPlace>& places) {
  std::set<int> nodes;
  for (const CpuPlace& p : places) nodes.insert(p.node);
  return {nodes.begin(), nodes.end()};
}

std::string DescribeNodes(const std::vector<CpuPlace>& places) {
  std::vector<std::string> parts;
  for (int node : NodesOf(places)) {
    parts.push_back(absl::StrCat("node ", node, ": CPUs ", FormatCpuList(CpusOf(places, node))));
  }
  return absl::StrJoin(parts, ", ");
}

std::vector<std::vector<int>> SplitCpus(const std::vector<int>& cpus, int parts) {
  std::vector<std::vector<int>> shares;
  if (parts < 1 || cpus.size() < static_cast<size_t>(parts)) return shares;
  const size_t base = cpus.size() / parts, larger = cpus.size() % parts;
  size_t next = 0;
  for (size_t r = 0; r < static_cast<size_t>(parts); ++r) {
    const size_t size = base + (r < larger ? 1 : 0);
    shares.emplace_back(cpus.begin() + next, cpus.begin() + next + size);
    next += size;
  }
  return shares;
}

absl::StatusOr<std::vector<NodeShare>> SplitCpusByNode(const std::vector<CpuPlace>& places,
                                                       int replicas, const std::string& field) {
  const std::vector<int> nodes = NodesOf(places);
  if (nodes.empty() || replicas < 1) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": no CPUs to place replicas on"));
  }
  const int count = static_cast<int>(nodes.size());
  if (replicas % count != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: replicas=%d with numa=on, but the job's CPUs span %d NUMA nodes (%s); allowed: a "
        "multiple of %d, so that every node runs as many replicas",
        field, replicas, count, DescribeNodes(places), count));
  }
  const int per_node = replicas / count;
  std::vector<NodeShare> shares;
  for (int node : nodes) {
    const std::vector<int> cpus = CpusOf(places, node);
    if (cpus.size() < static_cast<size_t>(per_node)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: replicas=%d with numa=on puts %d on NUMA node %d, which the job may use only %d "
          "CPUs of (%s); each replica needs one of its own",
          field, replicas, per_node, node, cpus.size(), FormatCpuList(cpus)));
    }
    for (std::vector<int>& share : SplitCpus(cpus, per_node)) {
      shares.push_back({std::move(share), node});
    }
  }
  return shares;
}

}  // namespace paradnn::common
