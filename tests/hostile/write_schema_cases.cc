// Writes the schema cases as model files (fuzz seeds): write_schema_cases DIR
// The committed seeds in regressions/model/schema_*.onnx were written by it.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "tests/hostile/schema_cases.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_schema_cases DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::string scratch = dir + "/.scratch";
  mkdir(scratch.c_str(), 0755);
  int written = 0;
  for (const auto& c : onnxflow::hostile::SchemaCases()) {
    if (c.name.rfind("external_data_", 0) == 0) continue;  // they need files beside them
    std::ofstream(dir + "/schema_" + c.name + ".onnx", std::ios::binary) << c.make(scratch);
    ++written;
  }
  std::printf("%d seeds in %s\n", written, dir.c_str());
  return 0;
}
