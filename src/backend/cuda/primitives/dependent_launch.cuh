#pragma once
// Programmatic dependent launch, device side. A kernel launched as a dependent may start while the
// kernel before it still runs; it must wait before it reads what that kernel writes, or writes
// what it reads. Both instructions are no-ops when no dependent launch is involved.
namespace tf::cuda {

// Lets a dependent launched after this kernel start now (it still waits for this kernel's end).
__device__ __forceinline__ void allow_dependent_launch() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

// Waits until the kernel this one depends on has finished and its writes are visible.
__device__ __forceinline__ void wait_for_prerequisite_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

}  // namespace tf::cuda
