#pragma once
#include <cuda_runtime.h>
#include <gtest/gtest.h>

inline bool braid_has_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// GPU tests skip cleanly on machines without a CUDA device (CI, the developers' machines).
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!braid_has_gpu()) GTEST_SKIP() << "no CUDA device present";
  }
};
