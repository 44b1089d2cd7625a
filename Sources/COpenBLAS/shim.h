#ifndef KB_COPENBLAS_SHIM_H
#define KB_COPENBLAS_SHIM_H
// OpenBLAS's CBLAS interface (Debian: libopenblas-dev), plus its thread control.
#include <cblas.h>
#endif
