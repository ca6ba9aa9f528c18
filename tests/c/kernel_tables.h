/* The kernel tables the C tests run the kernels and drivers with: this build's (qw_kernels()), the
 * scalar baseline when the build is not scalar, and a table whose layouts neither build uses (GEMM
 * mr 3, nr 16, kr 8; depthwise cr 8; float GEMM 2x16), made of scalar kernels for those tiles.
 * With the third table every driver runs on a second layout: a size a driver took from a constant
 * instead of its config shows up as a wrong result or an AddressSanitizer report. */
#ifndef QWASM_TEST_KERNEL_TABLES_H
#define QWASM_TEST_KERNEL_TABLES_H

#include "config.h"

struct kernel_table {
  const char* name;
  const struct qw_kernels* kernels;
};

static const struct qw_kernels* other_layout_kernels(void) {
  static struct qw_kernels table;
  table = qw_scalar_kernels;
  table.isa = "other-layout";
  table.gemm = (struct qw_gemm_config){
      .mr = 3,
      .nr = 16,
      .kr = 8,
      .packing = QW_GEMM_PACKING_X16_C2,
      .a_element_size = 2,
      .w_element_size = 2,
      .gemm = {qw_qs16_gemm_ukernel_4x16c2__scalar, qw_qs16_gemm_ukernel_4x16c2__scalar,
               qw_qs16_gemm_ukernel_4x16c2__scalar},
      .pack_a = {qw_qu8_gemm_pack_a_ukernel__scalar, qw_qs8_gemm_pack_a_ukernel__scalar},
      .pack_w = qw_pack_x16c2_gemm_weights,
  };
  table.dwconv = (struct qw_dwconv_config){
      .cr = 8,
      .packing = QW_DWCONV_PACKING_X16_ROW_PAIRS,
      .taps = 2,
      .ukernel = qw_qs16_dwconv_ukernel_c8__scalar,
      .tap_row = {qw_qu8_dwconv_pair_row_ukernel_c8__scalar, qw_qs8_dwconv_pair_row_ukernel_c8__scalar},
      .pack = qw_pack_x16_row_pairs_dwconv_weights,
  };
  table.f32_gemm = (struct qw_f32_gemm_config){
      .mr = 2,
      .nr = 16,
      .gemm = {qw_f32_gemm_ukernel_2x16__scalar, qw_f32_gemm_ukernel_2x16__scalar},
      .pack = qw_pack_f32_gemm_weights,
      .packx = qw_x32_packx_ukernel__scalar,
  };
  return &table;
}

#define KERNEL_TABLES_MAX 5

/* Fills tables[0..n) and returns n (at most KERNEL_TABLES_MAX): with the relaxed-SIMD tables (their dot product
 * emulated per semantics) where the build has them. */
static size_t kernel_tables(struct kernel_table tables[KERNEL_TABLES_MAX]) {
  size_t n = 0;
  tables[n++] = (struct kernel_table){qw_kernels()->isa, qw_kernels()};
  if (qw_kernels() != &qw_scalar_kernels) {
    tables[n++] = (struct kernel_table){"scalar", &qw_scalar_kernels};
  }
  tables[n++] = (struct kernel_table){"other-layout", other_layout_kernels()};
#if QW_SIMD && QW_RELAXED
  tables[n++] = (struct kernel_table){"relaxed-usdot", qw_relaxed_kernels(QW_RELAXED_USDOT)};
  tables[n++] = (struct kernel_table){"relaxed-sdot", qw_relaxed_kernels(QW_RELAXED_SDOT)};
#endif
  return n;
}

#endif /* QWASM_TEST_KERNEL_TABLES_H */
