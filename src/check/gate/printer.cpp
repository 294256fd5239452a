#include "check/gate/printer.h"

#include <algorithm>
#include <cstdio>

namespace tf::check::gate {

namespace {

std::string number(double v) { return format_number("%.2e", v); }

std::string padded(const std::string& s, size_t width) { return s + std::string(width > s.size() ? width - s.size() : 0, ' '); }

std::string columns(const std::string& name, size_t width, const std::string& a, const std::string& b, const std::string& c,
                    const std::string& d, const std::string& e, const std::string& f, const std::string& ratio,
                    const std::string& verdict) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s  %9s %9s   %9s %9s   %9s %9s   %8s  %s", padded(name, width).c_str(), a.c_str(),
                b.c_str(), c.c_str(), d.c_str(), e.c_str(), f.c_str(), ratio.c_str(), verdict.c_str());
  std::string line = buf;
  return line.substr(0, line.find_last_not_of(' ') + 1);
}

std::string same(bool s) { return s ? "identical" : "DIFFERS"; }

std::string ratio(double r) { return format_number("%.3g", r); }

}  // namespace

std::string table_header(size_t name_width) {
  const size_t w = std::max<size_t>(name_width, 4);
  return padded("", w + 2) + padded("ours:", 22) + padded("torch bf16:", 22) + "limit:\n" +
         columns("step", w, "cosine", "worst row", "cosine", "worst row", "cosine", "worst row", "ratio", "") + "\n";
}

std::string step_line(const StepResult& step, size_t name_width) {
  const Verdict& v = step.verdict;
  return columns(step.name, std::max<size_t>(name_width, 4), number(v.ours.cosine_error), number(v.ours.worst_row),
                 v.torch ? number(v.torch->cosine_error) : "-", v.torch ? number(v.torch->worst_row) : "-",
                 number(v.limit_cosine), number(v.limit_row), ratio(v.ratio), v.pass ? "ok" : "FAIL") +
         "\n";
}

std::string whole_line(const std::string& what, const Distance& ours, const std::optional<Distance>& torch) {
  std::string s = "whole " + what + ": ours cosine " + number(ours.cosine_error) + ", worst row " + number(ours.worst_row);
  if (torch) s += "; torch bf16 cosine " + number(torch->cosine_error) + ", worst row " + number(torch->worst_row);
  return s + " (not gated)\n";
}

std::string summary_line(const GateReport& r, const Plant& plant) {
  std::string s = std::string(r.passed() ? "PASS" : "FAIL") + ": " + std::to_string(r.steps.size()) + " steps, ratio to limit mean " +
                  ratio(r.mean_ratio) + " max " + ratio(r.max_ratio) + ", repeat " +
                  same(r.repeat_same) + ", packing " + (r.packing_same ? same(*r.packing_same) : "-");
  for (const Fact& f : r.facts) s += ", " + f.name + " " + f.value;
  if (!plant.none()) s += ", planted " + plant.describe();
  return s + "\n";
}

}  // namespace tf::check::gate
