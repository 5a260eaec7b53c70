// Every kind of analysis the proto declares (AnalyzeRequest's `analysis`
// oneof) has its case in AnalyzeResponse's oneof, a row in the
// coordinator's table (server/analysis/analysis_kinds.h) and one in the
// CLI's (client/analysis_kinds.h), walked through the descriptors as
// auth_test walks the RPCs: a kind added to the proto alone fails here,
// naming the kind and the table that lacks it (docs/extending.md "Add an
// analysis kind").
#include "client/analysis_kinds.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "client/analyze_flags.h"
#include "paradnn/v1/analysis.pb.h"
#include "server/analysis/analysis_kinds.h"

namespace paradnn {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::OneofDescriptor;

const OneofDescriptor* AnalysisOneof(const google::protobuf::Descriptor* message) {
  const OneofDescriptor* oneof = message->FindOneofByName("analysis");
  EXPECT_NE(oneof, nullptr) << message->full_name() << " has no oneof analysis";
  return oneof;
}

// The kinds the proto declares, by name.
std::vector<const FieldDescriptor*> DeclaredKinds() {
  std::vector<const FieldDescriptor*> kinds;
  const OneofDescriptor* oneof = AnalysisOneof(v1::AnalyzeRequest::descriptor());
  for (int i = 0; oneof != nullptr && i < oneof->field_count(); ++i) {
    kinds.push_back(oneof->field(i));
  }
  return kinds;
}

TEST(AnalysisKindsTest, EveryRequestKindHasItsResponseCase) {
  const OneofDescriptor* responses = AnalysisOneof(v1::AnalyzeResponse::descriptor());
  ASSERT_NE(responses, nullptr);
  ASSERT_FALSE(DeclaredKinds().empty());
  for (const FieldDescriptor* kind : DeclaredKinds()) {
    const FieldDescriptor* response =
        v1::AnalyzeResponse::descriptor()->FindFieldByName(kind->name());
    ASSERT_NE(response, nullptr) << "kind " << kind->name() << ": AnalyzeResponse has no field "
                                 << kind->name();
    EXPECT_EQ(response->containing_oneof(), responses)
        << "kind " << kind->name() << ": AnalyzeResponse." << kind->name()
        << " is not in its oneof analysis";
    EXPECT_EQ(response->number(), kind->number())
        << "kind " << kind->name() << ": numbered " << kind->number() << " in AnalyzeRequest but "
        << response->number() << " in AnalyzeResponse";
  }
  EXPECT_EQ(responses->field_count(), static_cast<int>(DeclaredKinds().size()))
      << "AnalyzeResponse's oneof has a case AnalyzeRequest's lacks";
}

TEST(AnalysisKindsTest, TheCoordinatorComputesEveryKind) {
  std::set<std::string> in_table;
  for (const server::analysis::AnalysisKind& kind : server::analysis::AnalysisKinds()) {
    EXPECT_TRUE(in_table.insert(kind.name).second) << "kind " << kind.name << ": two rows";
    EXPECT_NE(kind.compute, nullptr) << "kind " << kind.name << ": no compute function";
  }
  for (const FieldDescriptor* kind : DeclaredKinds()) {
    const server::analysis::AnalysisKind* row = nullptr;
    for (const server::analysis::AnalysisKind& candidate : server::analysis::AnalysisKinds()) {
      if (kind->name() == candidate.name) row = &candidate;
    }
    ASSERT_NE(row, nullptr) << "kind " << kind->name()
                            << ": no row in the coordinator's table of kinds "
                               "(server/analysis/analyzer.cc kAnalysisKinds)";
    EXPECT_EQ(static_cast<int>(row->request_case), kind->number())
        << "kind " << kind->name() << ": its row dispatches another case of AnalyzeRequest";
  }
  EXPECT_EQ(in_table.size(), DeclaredKinds().size())
      << "the coordinator's table has a kind the proto lacks";
}

TEST(AnalysisKindsTest, TheCliShowsEveryKindAndFillsItsOwnCase) {
  std::set<std::string> in_table;
  for (const client::AnalysisKind& kind : client::AnalysisKinds()) {
    EXPECT_TRUE(in_table.insert(kind.name).second) << "kind " << kind.name << ": two rows";
  }
  for (const FieldDescriptor* kind : DeclaredKinds()) {
    const client::AnalysisKind* row = client::FindAnalysisKind(kind->name());
    ASSERT_NE(row, nullptr) << "kind " << kind->name()
                            << ": no row in the CLI's table of kinds "
                               "(client/analysis_kinds.cc kAnalysisKinds)";
    EXPECT_NE(row->table, nullptr) << "kind " << kind->name() << ": no table text";
    EXPECT_NE(row->csv, nullptr) << "kind " << kind->name() << ": no CSV";
    // A subcommand of `analyze` has all three of help, options and fill,
    // and fills the case it is named after.
    const bool subcommand = row->description != nullptr;
    EXPECT_EQ(row->add_options != nullptr, subcommand) << "kind " << kind->name();
    EXPECT_EQ(row->fill != nullptr, subcommand) << "kind " << kind->name();
    if (row->fill != nullptr) {
      v1::AnalyzeRequest request;
      row->fill(client::AnalyzeFlags{}, &request);
      EXPECT_EQ(static_cast<int>(request.analysis_case()), kind->number())
          << "kind " << kind->name() << ": `paradnn analyze " << kind->name()
          << "` fills another case";
    }
  }
  EXPECT_EQ(in_table.size(), DeclaredKinds().size())
      << "the CLI's table has a kind the proto lacks";
}

TEST(AnalysisKindsTest, TheCliFindsTheKindAResponseHolds) {
  for (const FieldDescriptor* kind : DeclaredKinds()) {
    v1::AnalyzeResponse response;
    const FieldDescriptor* field = v1::AnalyzeResponse::descriptor()->FindFieldByName(kind->name());
    ASSERT_NE(field, nullptr) << kind->name();
    response.GetReflection()->MutableMessage(&response, field);  // sets the case
    const client::AnalysisKind* found = client::KindOf(response);
    ASSERT_NE(found, nullptr) << "kind " << kind->name();
    EXPECT_EQ(found->name, kind->name());
  }
  EXPECT_EQ(client::KindOf(v1::AnalyzeResponse()), nullptr);
}

}  // namespace
}  // namespace paradnn
