#pragma once
// One registration a concern; module.cpp calls them in order.
#include <nanobind/nanobind.h>

namespace tfpy {

void register_encoder(nanobind::module_& m);
void register_vae(nanobind::module_& m);
void register_pipeline(nanobind::module_& m);

}  // namespace tfpy
