// tf-moss-image: MOSS-Image's prompt encoder, its tokenizer and the components' reference gate; each command is its own file here.
#include "common/command.h"

int main(int argc, char** argv) {
  return tf::tools::run_tool(argc, argv, "tf-moss-image", "MOSS-Image prompt encoder (Qwen3.5 text model), tokenizer and reference gate");
}
