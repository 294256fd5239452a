#pragma once
// The engine's errors as Python exceptions (ValueError for bad input, MemoryError for a refused or
// failed allocation, RuntimeError otherwise), its work run with the GIL released, and Ctrl-C
// honoured between a family's steps.
#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

#include "core/error.h"
#include "families/common/progress.h"

namespace tfpy {

namespace nb = nanobind;

// Bad input: an argument the bindings refuse, or a folder a loader refuses. Raised as ValueError.
struct BadInput : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A signal arrived in a progress callback; its Python exception is already set on this thread.
struct Interrupted {};

void register_errors(nb::module_& m);

// f() with the GIL released; an Interrupted re-raised as the pending Python exception once the GIL
// is held again (the release scope ends before the handler runs).
template <class F>
auto released(F&& f) {
  try {
    nb::gil_scoped_release unlocked;
    return f();
  } catch (const Interrupted&) {
    throw nb::python_error();
  }
}

// A loader's tf::Error as BadInput: the folder, its JSON and its tensors are the caller's input.
template <class F>
auto loading(F&& f) {
  try {
    return f();
  } catch (const tf::OutOfMemory&) {
    throw;
  } catch (const tf::Error& e) {
    throw BadInput(e.what());
  }
}

// A memory estimate's refusal (tf::Error from require_memory*) as tf::OutOfMemory: a MemoryError.
template <class F>
void memory_refusal(F&& f) {
  try {
    f();
  } catch (const tf::OutOfMemory&) {
    throw;
  } catch (const tf::Error& e) {
    throw tf::OutOfMemory(e.what());
  }
}

// Progress that checks for signals after each step: takes the GIL briefly, calls
// PyErr_CheckSignals, and throws Interrupted when a handler raised (KeyboardInterrupt on Ctrl-C).
tf::Progress signal_checks();

}  // namespace tfpy
