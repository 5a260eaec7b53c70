#include "worker/runner/outcome.h"

#include <gtest/gtest.h>

namespace paradnn::runner {
namespace {

TEST(OutcomeTest, AllocationFailuresAreOom) {
  EXPECT_EQ(ClassifyModelError("DefaultCPUAllocator: not enough memory: you tried to allocate "
                               "1099511627776 bytes."),
            v1::OOM);
  EXPECT_EQ(ClassifyModelError("std::bad_alloc"), v1::OOM);
  EXPECT_EQ(ClassifyModelError("CUDA out of memory. Tried to allocate 2.00 GiB"), v1::OOM);
  EXPECT_EQ(ClassifyModelError("DefaultCPUAllocator: can't allocate memory: you tried to allocate"),
            v1::OOM);
}

TEST(OutcomeTest, MissingKernelsAreUnsupported) {
  EXPECT_EQ(ClassifyModelError("\"addmm_impl_cpu_\" not implemented for 'Half'"), v1::UNSUPPORTED);
  EXPECT_EQ(ClassifyModelError("Could not run 'aten::empty_strided' with arguments from the 'CUDA' "
                               "backend."),
            v1::UNSUPPORTED);
  EXPECT_EQ(ClassifyModelError("Currently, AutocastCPU only support Bfloat16 as the "
                               "autocast_cpu_dtype"),
            v1::UNSUPPORTED);
}

TEST(OutcomeTest, EverythingElseIsError) {
  EXPECT_EQ(ClassifyModelError("mat1 and mat2 shapes cannot be multiplied (8x3 and 4x5)"),
            v1::ERROR);
  EXPECT_EQ(ClassifyModelError(""), v1::ERROR);
}

TEST(OutcomeTest, FirstErrorLineDropsTheTrace) {
  EXPECT_EQ(FirstErrorLine("boom\nException raised from foo at bar.cpp:1"), "boom");
  EXPECT_EQ(FirstErrorLine("  shapes differ Exception raised from x"), "shapes differ");
  EXPECT_EQ(FirstErrorLine("plain"), "plain");
}

}  // namespace
}  // namespace paradnn::runner
