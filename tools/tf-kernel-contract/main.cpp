#include "common/command.h"

int main(int argc, char** argv) {
  return tf::tools::run_tool(argc, argv, "tf-kernel-contract",
                             "The kernel contract: every kernel against float64 at its own rounding points, with planted "
                             "faults that must go red");
}
