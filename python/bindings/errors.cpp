#include "errors.h"

#include <Python.h>

namespace tfpy {

void register_errors(nb::module_& m) {
  (void)m;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const BadInput& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const tf::OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const tf::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
}

tf::Progress signal_checks() {
  return [](const tf::ProgressEvent&) {
    nb::gil_scoped_acquire held;
    if (PyErr_CheckSignals() != 0) throw Interrupted{};
  };
}

}  // namespace tfpy
