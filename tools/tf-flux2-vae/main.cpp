#include "common/command.h"

int main(int argc, char** argv) {
  return tf::tools::run_tool(argc, argv, "tf-flux2-vae", "FLUX.2 VAE: Idol's feature2 encoder, the picture decoder and their reference gate");
}
