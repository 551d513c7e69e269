// Issue 23's hostile classes (tests/hostile/schema_cases.cc): each case is refused with its
// expected Status code and a one-line message naming the node and the attribute or input.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <set>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tests/hostile/schema_cases.h"

namespace onnxflow::hostile {

// gtest names a failing case by this, not by a dump of its bytes. Beside SchemaCase's namespace,
// not in the unnamed one: argument-dependent lookup, which gtest relies on, does not look there.
void PrintTo(const SchemaCase& c, std::ostream* os) { *os << c.name; }

namespace {

std::string TmpRoot() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

class Schema : public testing::TestWithParam<SchemaCase> {};

TEST_P(Schema, RefusedWithTheExpectedMessage) {
  const SchemaCase& c = GetParam();
  const std::string dir = TmpRoot() + "/schema_" + c.name;
  mkdir(dir.c_str(), 0755);
  const std::string path = dir + "/model.onnx";
  std::ofstream(path, std::ios::binary) << c.make(dir);
  auto session = Session::Load(path);
  Status status = session.status();
  if (c.at_run) {
    ASSERT_TRUE(session.ok()) << c.name << ": " << session.status().ToString();
    std::vector<NamedValue> inputs;
    for (const ValueInfo& info : session->inputs()) {
      auto t = FillTensor(info.dtype, Shape(info.shape.begin(), info.shape.end()));
      ASSERT_TRUE(t.ok());
      inputs.push_back({info.name, std::move(t).value()});
    }
    status = session->Run(inputs).status();
  }
  ASSERT_FALSE(status.ok()) << c.name << " (" << c.reason << ") was accepted";
  EXPECT_EQ(status.code(), c.code) << status.ToString();
  for (const std::string& fragment : c.fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos) << c.name << ": '" << fragment << "' not in "
                                                                   << status.ToString();
  }
  EXPECT_EQ(status.message().find('\n'), std::string::npos) << status.ToString();
}

TEST(SchemaCases, AtLeastAHundredWithUniqueNames) {
  std::set<std::string> names;
  for (const SchemaCase& c : SchemaCases()) EXPECT_TRUE(names.insert(c.name).second) << c.name;
  EXPECT_GE(names.size(), 100u);
}

INSTANTIATE_TEST_SUITE_P(All, Schema, testing::ValuesIn(SchemaCases()),
                         [](const testing::TestParamInfo<SchemaCase>& info) { return info.param.name; });

}  // namespace
}  // namespace onnxflow::hostile
