// `protoc --decode_raw` output as a tree, so tests can ask "packet 3's field
// 60's field 3's field 1" of a file our hand-written encoder produced.
#ifndef SPOOR_TESTS_EXPORT_DECODED_PROTO_H
#define SPOOR_TESTS_EXPORT_DECODED_PROTO_H

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "consumer.h"

namespace spoor::test {

struct ProtoNode {
  int field = 0;
  std::string value;  // a scalar's text as protoc prints it (strings quoted); "" for a message
  std::vector<ProtoNode> children;

  std::vector<const ProtoNode*> all(int f) const {
    std::vector<const ProtoNode*> out;
    for (const ProtoNode& c : children)
      if (c.field == f) out.push_back(&c);
    return out;
  }
  const ProtoNode* first(int f) const {
    for (const ProtoNode& c : children)
      if (c.field == f) return &c;
    return nullptr;
  }
  std::string scalar(int f) const {
    const ProtoNode* n = first(f);
    return n == nullptr ? "<none>" : n->value;
  }
};

// Lines "N {", "N: value", "}". Returns the root (field 0).
inline ProtoNode parse_decode_raw(const std::string& text) {
  ProtoNode root;
  std::vector<ProtoNode*> path = {&root};
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t start = line.find_first_not_of(' ');
    if (start == std::string::npos) continue;
    line = line.substr(start);
    if (line == "}") {
      path.pop_back();
      continue;
    }
    ProtoNode node;
    node.field = std::stoi(line);
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {  // "N {"
      path.back()->children.push_back(node);
      path.push_back(&path.back()->children.back());
    } else {
      node.value = line.substr(colon + 2);
      path.back()->children.push_back(node);
    }
  }
  return root;
}

// Runs protoc --decode_raw on `bytes`; "" with `error` set when it fails.
inline ProtoNode decode_raw(const std::string& bytes, std::string& error) {
  const std::string path = temp_path("decode-raw.bin");
  write_file(path, bytes);
  const Process p = run("protoc --decode_raw < " + path);
  std::remove(path.c_str());
  if (p.status != 0) error = "protoc --decode_raw failed: " + p.err;
  return parse_decode_raw(p.out);
}

}  // namespace spoor::test

#endif  // SPOOR_TESTS_EXPORT_DECODED_PROTO_H
