//go:build heedcgo

package bench

// OpenBLAS (cblas_sdot, cblas_sgemv, cblas_sgemm) and SLEEF (expf/tanhf u10
// and tanhf u35, AVX2 and AVX-512) through cgo, from Debian's libopenblas-dev
// and libsleef-dev: `make bench-cgo` (or go run -tags heedcgo ./cmd/report).
// OpenBLAS runs single-threaded (OPENBLAS_NUM_THREADS=1, and
// openblas_set_num_threads(1) before each measurement); the report and the
// benchmarks run it on the core that matches the CPU (openblas.go). Debian's
// SLEEF 3.5.1 has no u35 expf, so the u35 entries do Tanh only. Softmax and AdditiveScore
// on SLEEF are the natural C loops around its vector exp and tanh, below.
// Every call crosses cgo once per slice or matrix (tens of ns), which small
// sizes show.

/*
#cgo LDFLAGS: -lopenblas -lsleef -lm
#cgo CFLAGS: -O2
#include <string.h>
#include <immintrin.h>
#include <cblas.h>
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f")
#include <sleef.h>
#pragma GCC pop_options

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx2,fma,avx512f")))

// Element-wise map of a SLEEF vector function over n floats; the tail goes
// through a zero-padded buffer so nothing outside x or dst is touched.
#define MAP(name, attr, vec, W, load, store, f) \
attr static void name(float *dst, const float *x, long n) { \
	long i = 0; \
	for (; i + W <= n; i += W) store(dst + i, f(load(x + i))); \
	if (i < n) { \
		float b[W] = {0}; \
		memcpy(b, x + i, (n - i) * sizeof(float)); \
		store(b, f(load(b))); \
		memcpy(dst + i, b, (n - i) * sizeof(float)); \
	} \
}
MAP(exp_u10_avx2, AVX2, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_expf8_u10avx2)
MAP(tanh_u10_avx2, AVX2, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_tanhf8_u10avx2)
MAP(tanh_u35_avx2, AVX2, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, Sleef_tanhf8_u35avx2)
MAP(exp_u10_avx512, AVX512, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, Sleef_expf16_u10avx512f)
MAP(tanh_u10_avx512, AVX512, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, Sleef_tanhf16_u10avx512f)
MAP(tanh_u35_avx512, AVX512, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, Sleef_tanhf16_u35avx512f)

// Softmax: max, exp(x − max) with SLEEF u10, sum, scale.
AVX2 static void softmax_avx2(float *dst, const float *x, long n) {
	float m = -__builtin_inff();
	for (long i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
	__m256 vm = _mm256_set1_ps(m), acc = _mm256_setzero_ps();
	long i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
		_mm256_storeu_ps(dst + i, e);
		acc = _mm256_add_ps(acc, e);
	}
	float b[8], s = 0;
	_mm256_storeu_ps(b, acc);
	for (int j = 0; j < 8; j++) s += b[j];
	if (i < n) {
		for (int j = 0; j < 8; j++) b[j] = i + j < n ? x[i + j] - m : -__builtin_inff();
		_mm256_storeu_ps(b, Sleef_expf8_u10avx2(_mm256_loadu_ps(b)));
		for (long j = 0; i + j < n; j++) { dst[i + j] = b[j]; s += b[j]; }
	}
	__m256 inv = _mm256_set1_ps(1 / s);
	for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_loadu_ps(dst + i), inv));
	for (; i < n; i++) dst[i] *= 1 / s;
}

AVX512 static void softmax_avx512(float *dst, const float *x, long n) {
	float m = -__builtin_inff();
	for (long i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
	__m512 vm = _mm512_set1_ps(m), acc = _mm512_setzero_ps();
	long i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
		_mm512_storeu_ps(dst + i, e);
		acc = _mm512_add_ps(acc, e);
	}
	float s = _mm512_reduce_add_ps(acc), b[16];
	if (i < n) {
		for (int j = 0; j < 16; j++) b[j] = i + j < n ? x[i + j] - m : -__builtin_inff();
		_mm512_storeu_ps(b, Sleef_expf16_u10avx512f(_mm512_loadu_ps(b)));
		for (long j = 0; i + j < n; j++) { dst[i + j] = b[j]; s += b[j]; }
	}
	__m512 inv = _mm512_set1_ps(1 / s);
	for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_mul_ps(_mm512_loadu_ps(dst + i), inv));
	for (; i < n; i++) dst[i] *= 1 / s;
}

// AdditiveScore: dst[s] = Σ v·tanh(q + K[s]) with SLEEF tanh u10, fused per row.
AVX2 static void additive_avx2(float *dst, const float *k, long stride, const float *q, const float *v, long rows, long cols) {
	for (long s = 0; s < rows; s++) {
		const float *ks = k + s * stride;
		__m256 acc = _mm256_setzero_ps();
		long i = 0;
		for (; i + 8 <= cols; i += 8) {
			__m256 t = Sleef_tanhf8_u10avx2(_mm256_add_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(ks + i)));
			acc = _mm256_fmadd_ps(_mm256_loadu_ps(v + i), t, acc);
		}
		float b[8], r = 0;
		_mm256_storeu_ps(b, acc);
		for (int j = 0; j < 8; j++) r += b[j];
		if (i < cols) {
			for (int j = 0; j < 8; j++) b[j] = i + j < cols ? q[i + j] + ks[i + j] : 0;
			_mm256_storeu_ps(b, Sleef_tanhf8_u10avx2(_mm256_loadu_ps(b)));
			for (long j = 0; i + j < cols; j++) r += v[i + j] * b[j];
		}
		dst[s] = r;
	}
}

AVX512 static void additive_avx512(float *dst, const float *k, long stride, const float *q, const float *v, long rows, long cols) {
	for (long s = 0; s < rows; s++) {
		const float *ks = k + s * stride;
		__m512 acc = _mm512_setzero_ps();
		long i = 0;
		for (; i + 16 <= cols; i += 16) {
			__m512 t = Sleef_tanhf16_u10avx512f(_mm512_add_ps(_mm512_loadu_ps(q + i), _mm512_loadu_ps(ks + i)));
			acc = _mm512_fmadd_ps(_mm512_loadu_ps(v + i), t, acc);
		}
		float r = _mm512_reduce_add_ps(acc), b[16];
		if (i < cols) {
			for (int j = 0; j < 16; j++) b[j] = i + j < cols ? q[i + j] + ks[i + j] : 0;
			_mm512_storeu_ps(b, Sleef_tanhf16_u10avx512f(_mm512_loadu_ps(b)));
			for (long j = 0; i + j < cols; j++) r += v[i + j] * b[j];
		}
		dst[s] = r;
	}
}

typedef void (*mapfn)(float *, const float *, long);
static void call_map(int which, float *dst, const float *x, long n) {
	static const mapfn fs[] = {exp_u10_avx2, tanh_u10_avx2, tanh_u35_avx2, exp_u10_avx512, tanh_u10_avx512, tanh_u35_avx512, softmax_avx2, softmax_avx512};
	fs[which](dst, x, n);
}
static void call_additive(int avx512, float *dst, const float *k, long stride, const float *q, const float *v, long rows, long cols) {
	(avx512 ? additive_avx512 : additive_avx2)(dst, k, stride, q, v, rows, cols);
}
*/
import "C"

import (
	"slices"
	"unsafe"

	"github.com/heedml/heed/kernels"
)

func fp(x []float32) *C.float { return (*C.float)(unsafe.Pointer(unsafe.SliceData(x))) }

func init() {
	openblasInfo = func() (config, core string) {
		return C.GoString(C.openblas_get_config()), C.GoString(C.openblas_get_corename())
	}
	oneThread := func() { C.openblas_set_num_threads(1) }
	oneThread()
	register(500, &Impl{
		Name:  "openblas",
		CGo:   true,
		Enter: oneThread,
		Note: map[Kernel]string{
			MatTVec:     "cblas_sgemv(RowMajor, Trans, …, β=1)",
			MatVecBatch: "cblas_sgemm(RowMajor, NoTrans, Trans): D = X·Aᵀ",
		},
		Dot: func(x, y []float32) float32 {
			return float32(C.cblas_sdot(C.blasint(len(x)), fp(x), 1, fp(y), 1))
		},
		MatVec: func(dst []float32, a kernels.Matrix, x []float32) {
			C.cblas_sgemv(C.CblasRowMajor, C.CblasNoTrans, C.blasint(a.Rows), C.blasint(a.Cols), 1, fp(a.Data), C.blasint(max(a.Stride, 1)), fp(x), 1, 0, fp(dst), 1)
		},
		MatTVec: func(dst []float32, a kernels.Matrix, x []float32) {
			C.cblas_sgemv(C.CblasRowMajor, C.CblasTrans, C.blasint(a.Rows), C.blasint(a.Cols), 1, fp(a.Data), C.blasint(max(a.Stride, 1)), fp(x), 1, 1, fp(dst), 1)
		},
		MatVecBatch: func(dst, a, x kernels.Matrix) {
			C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, C.CblasTrans, C.blasint(x.Rows), C.blasint(a.Rows), C.blasint(a.Cols), 1,
				fp(x.Data), C.blasint(max(x.Stride, 1)), fp(a.Data), C.blasint(max(a.Stride, 1)), 0, fp(dst.Data), C.blasint(max(dst.Stride, 1)))
		},
	})

	isas := kernels.Supported()
	mapf := func(which C.int) func(dst, x []float32) {
		return func(dst, x []float32) { C.call_map(which, fp(dst), fp(x), C.long(len(x))) }
	}
	additive := func(avx512 C.int) func(dst []float32, k kernels.Matrix, q, v []float32) {
		return func(dst []float32, k kernels.Matrix, q, v []float32) {
			C.call_additive(avx512, fp(dst), fp(k.Data), C.long(k.Stride), fp(q), fp(v), C.long(k.Rows), C.long(k.Cols))
		}
	}
	note := map[Kernel]string{Softmax: "C loop: max, SLEEF expf u10 of x−max, sum, scale", Additive: "C loop per row: SLEEF tanhf u10 of q+K[s], FMA with v, sum"}
	if slices.Contains(isas, kernels.AVX2) {
		register(600, &Impl{Name: "sleef-u10/avx2", CGo: true, Note: note, Exp: mapf(0), Tanh: mapf(1), Softmax: mapf(6), Additive: additive(0)})
		register(602, &Impl{Name: "sleef-u35/avx2", CGo: true, Tanh: mapf(2), Tol: map[Kernel]float64{Tanh: 3.5 / (1 << 23)}})
	}
	if slices.Contains(isas, kernels.AVX512) {
		register(601, &Impl{Name: "sleef-u10/avx512", CGo: true, Note: note, Exp: mapf(3), Tanh: mapf(4), Softmax: mapf(7), Additive: additive(1)})
		register(603, &Impl{Name: "sleef-u35/avx512", CGo: true, Tanh: mapf(5), Tol: map[Kernel]float64{Tanh: 3.5 / (1 << 23)}})
	}
}
