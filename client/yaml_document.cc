#include "client/yaml_document.h"

#include <yaml-cpp/eventhandler.h>

#include <cstddef>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace paradnn::client::internal {
namespace {

// Records where each document of a YAML stream starts (its first token)
// and where its content starts (its first node), building nothing.
class DocumentStarts final : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    YAML::Mark content;
  };
  const std::vector<Document>& documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    documents_.push_back({mark, YAML::Mark::null_mark()});
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (!documents_.empty() && documents_.back().content.is_null()) {
      documents_.back().content = mark;
    }
  }
  std::vector<Document> documents_;
};

// "SOURCE:LINE: YAML does not parse (column C): what".
absl::Status SyntaxError(absl::string_view source, const YAML::Mark& mark, absl::string_view what) {
  if (mark.is_null()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": YAML does not parse: ", what));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ":", mark.line + 1, ": YAML does not parse (column ", mark.column + 1, "): ", what));
}

}  // namespace

// The one document of `text`. yaml-cpp 0.7's LoadAll never returns on some
// malformed streams (a stray ',' yields an empty document that consumes
// nothing, forever: jbeder/yaml-cpp#1040), so the documents are first
// counted with a bounded number of parser calls: a document that starts
// where the previous one did is that bug, and a syntax error here.
absl::StatusOr<YAML::Node> LoadOneDocument(const std::string& text, absl::string_view source) {
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts stream;
    const std::vector<DocumentStarts::Document>& documents = stream.documents();
    for (int i = 0; i < 3 && parser.HandleNextDocument(stream); ++i) {
      const size_t n = documents.size();
      if (n >= 2 && documents[n - 1].start.pos == documents[n - 2].start.pos) {
        return SyntaxError(source, documents.back().start, "unexpected character");
      }
    }
    if (documents.size() > 1) {
      const YAML::Mark& mark =
          documents[1].content.is_null() ? documents[1].start : documents[1].content;
      return absl::InvalidArgumentError(
          absl::StrCat(source, ":", mark.line + 1,
                       ": a second YAML document (---); a sweep file holds exactly one"));
    }
    if (documents.empty()) return YAML::Node();
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return SyntaxError(source, e.mark, e.msg);
  }
}

}  // namespace paradnn::client::internal
