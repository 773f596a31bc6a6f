//go:build heedcgo

package bench

// SLEEF compositions for the decoder-step kernels: sigmoid as
// 1/(1 + expf(−x)) with Sleef_expf8_u10avx2 (the composition a C user would
// write, SLEEF having no sigmoid), and Sleef_logf8_u10avx2 / …16_u10avx512f.

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lsleef -lm
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f")
#include <sleef.h>
#pragma GCC pop_options

__attribute__((target("avx2,fma"))) static void sig_avx2(float *d, const float *x, long n) {
	const __m256 one = _mm256_set1_ps(1.0f), z = _mm256_setzero_ps();
	long i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(z, _mm256_loadu_ps(x + i)));
		_mm256_storeu_ps(d + i, _mm256_div_ps(one, _mm256_add_ps(one, e)));
	}
	for (; i < n; i++) d[i] = 1.0f / (1.0f + Sleef_expf_u10(-x[i]));
}
__attribute__((target("avx2,fma,avx512f"))) static void sig_avx512(float *d, const float *x, long n) {
	const __m512 one = _mm512_set1_ps(1.0f), z = _mm512_setzero_ps();
	long i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(z, _mm512_loadu_ps(x + i)));
		_mm512_storeu_ps(d + i, _mm512_div_ps(one, _mm512_add_ps(one, e)));
	}
	for (; i < n; i++) d[i] = 1.0f / (1.0f + Sleef_expf_u10(-x[i]));
}
__attribute__((target("avx2,fma"))) static void log_avx2(float *d, const float *x, long n) {
	long i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, Sleef_logf8_u10avx2(_mm256_loadu_ps(x + i)));
	for (; i < n; i++) d[i] = Sleef_logf_u10(x[i]);
}
__attribute__((target("avx2,fma,avx512f"))) static void log_avx512(float *d, const float *x, long n) {
	long i = 0;
	for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, Sleef_logf16_u10avx512f(_mm512_loadu_ps(x + i)));
	for (; i < n; i++) d[i] = Sleef_logf_u10(x[i]);
}
*/
import "C"

import "unsafe"

func sleefCall(f func(d, x *C.float, n C.long)) func(dst, x []float32) {
	return func(dst, x []float32) {
		if len(x) == 0 {
			return
		}
		f((*C.float)(unsafe.Pointer(&dst[0])), (*C.float)(unsafe.Pointer(&x[0])), C.long(len(x)))
	}
}

// sleefDecoderPeers are the SLEEF peers of Sigmoid and Log.
var sleefDecoderPeers = map[string]map[string]func(dst, x []float32){
	"Sigmoid": {
		"sleef-u10/avx2":   sleefCall(func(d, x *C.float, n C.long) { C.sig_avx2(d, x, n) }),
		"sleef-u10/avx512": sleefCall(func(d, x *C.float, n C.long) { C.sig_avx512(d, x, n) }),
	},
	"Log": {
		"sleef-u10/avx2":   sleefCall(func(d, x *C.float, n C.long) { C.log_avx2(d, x, n) }),
		"sleef-u10/avx512": sleefCall(func(d, x *C.float, n C.long) { C.log_avx512(d, x, n) }),
	},
}
