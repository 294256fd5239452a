// tf-moss-image-encoder: the MOSS-Image prompt encoder's reference gate; each command is its own file here.
#include "common/command.h"

int main(int argc, char** argv) {
  return tf::tools::run_tool(argc, argv, "tf-moss-image-encoder",
                             "MOSS-Image prompt encoder: reference gate against transformers' Qwen3.5");
}
