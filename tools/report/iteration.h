// What `simulate` prints and writes for one iteration: the summary, the JSON report (its
// keys iteration_time_s, tflops_per_gpu, mfu, devices, oom and memory are a stable
// contract), and with --faults the comparison against the fault-free run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "strategies/report.h"
#include "strategies/simulate.h"

namespace dejavu::report {

void write_summary(std::ostream& out, const strategies::Report& r);
// "tp 2.04 s (39% under compute), dp 830 ms (92% under compute)": each communication
// stream's time per GPU and the share of it compute hid; "" without communication.
std::string communication_line(const std::vector<strategies::StreamCommReport>& streams);
// The summary's calibration lines: each calibrated GPU type's files and step efficiency, or for
// an uncalibrated prediction with a band, what centres it; none for a calibration-free run
// without a band.
std::vector<std::string> calibration_lines(const strategies::Report& r);
void write_fault_summary(std::ostream& out, const strategies::FaultReport& f);
// With `faults`, the JSON has them under "faults".
void write_json(std::ostream& out, const strategies::Report& r, const strategies::FaultReport* faults = nullptr);

}  // namespace dejavu::report
