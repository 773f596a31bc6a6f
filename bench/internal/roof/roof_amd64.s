#include "textflag.h"

// Read-only streaming and FMA-throughput loops that bound the kernels. Written
// by hand (they are not kernels; asmgen does not generate them).

// func StreamAVX512(x []float32) float32
// Sums x (len a multiple of 128) reading its two halves as two concurrent
// streams (as Dot and MatVec read two or more), eight accumulators in all.
TEXT ·StreamAVX512(SB), NOSPLIT, $0-28
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	LEAQ   (SI)(CX*2), DI
	SHRQ   $7, CX
	JZ     s512done

s512loop:
	VADDPS 0(SI), Z0, Z0
	VADDPS 0(DI), Z1, Z1
	VADDPS 64(SI), Z2, Z2
	VADDPS 64(DI), Z3, Z3
	VADDPS 128(SI), Z4, Z4
	VADDPS 128(DI), Z5, Z5
	VADDPS 192(SI), Z6, Z6
	VADDPS 192(DI), Z7, Z7
	ADDQ   $256, SI
	ADDQ   $256, DI
	DECQ   CX
	JNZ    s512loop

s512done:
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z5, Z4, Z4
	VADDPS        Z7, Z6, Z6
	VADDPS        Z2, Z0, Z0
	VADDPS        Z6, Z4, Z4
	VADDPS        Z4, Z0, Z0
	VEXTRACTF32X8 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VMOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func StreamAVX2(x []float32) float32
// Sums x (len a multiple of 64) reading its two halves as two concurrent
// streams, eight accumulators in all.
TEXT ·StreamAVX2(SB), NOSPLIT, $0-28
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ   (SI)(CX*2), DI
	SHRQ   $6, CX
	JZ     s256done

s256loop:
	VADDPS 0(SI), Y0, Y0
	VADDPS 0(DI), Y1, Y1
	VADDPS 32(SI), Y2, Y2
	VADDPS 32(DI), Y3, Y3
	VADDPS 64(SI), Y4, Y4
	VADDPS 64(DI), Y5, Y5
	VADDPS 96(SI), Y6, Y6
	VADDPS 96(DI), Y7, Y7
	ADDQ   $128, SI
	ADDQ   $128, DI
	DECQ   CX
	JNZ    s256loop

s256done:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y5, Y4, Y4
	VADDPS       Y7, Y6, Y6
	VADDPS       Y2, Y0, Y0
	VADDPS       Y6, Y4, Y4
	VADDPS       Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMOVSS       X0, ret+24(FP)
	VZEROUPPER
	RET

// func FMAAVX512(iters int, a float32) float32
// Runs iters × 12 independent 16-lane FMAs (384 flops per iteration).
TEXT ·FMAAVX512(SB), NOSPLIT, $0-20
	MOVQ         iters+0(FP), CX
	VBROADCASTSS a+8(FP), Z12
	VMOVAPS      Z12, Z13
	VPXORD       Z0, Z0, Z0
	VPXORD       Z1, Z1, Z1
	VPXORD       Z2, Z2, Z2
	VPXORD       Z3, Z3, Z3
	VPXORD       Z4, Z4, Z4
	VPXORD       Z5, Z5, Z5
	VPXORD       Z6, Z6, Z6
	VPXORD       Z7, Z7, Z7
	VPXORD       Z8, Z8, Z8
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	VPXORD       Z11, Z11, Z11
	TESTQ        CX, CX
	JZ           f512done

f512loop:
	VFMADD231PS Z12, Z13, Z0
	VFMADD231PS Z12, Z13, Z1
	VFMADD231PS Z12, Z13, Z2
	VFMADD231PS Z12, Z13, Z3
	VFMADD231PS Z12, Z13, Z4
	VFMADD231PS Z12, Z13, Z5
	VFMADD231PS Z12, Z13, Z6
	VFMADD231PS Z12, Z13, Z7
	VFMADD231PS Z12, Z13, Z8
	VFMADD231PS Z12, Z13, Z9
	VFMADD231PS Z12, Z13, Z10
	VFMADD231PS Z12, Z13, Z11
	DECQ        CX
	JNZ         f512loop

f512done:
	VADDPS Z1, Z0, Z0
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z0, Z0
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z0, Z0
	VADDPS Z6, Z0, Z0
	VADDPS Z7, Z0, Z0
	VADDPS Z8, Z0, Z0
	VADDPS Z9, Z0, Z0
	VADDPS Z10, Z0, Z0
	VADDPS Z11, Z0, Z0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func FMAAVX2(iters int, a float32) float32
// Runs iters × 12 independent 8-lane FMAs (192 flops per iteration).
TEXT ·FMAAVX2(SB), NOSPLIT, $0-20
	MOVQ         iters+0(FP), CX
	VBROADCASTSS a+8(FP), Y12
	VMOVAPS      Y12, Y13
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3
	VXORPS       Y4, Y4, Y4
	VXORPS       Y5, Y5, Y5
	VXORPS       Y6, Y6, Y6
	VXORPS       Y7, Y7, Y7
	VXORPS       Y8, Y8, Y8
	VXORPS       Y9, Y9, Y9
	VXORPS       Y10, Y10, Y10
	VXORPS       Y11, Y11, Y11
	TESTQ        CX, CX
	JZ           f256done

f256loop:
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ        CX
	JNZ         f256loop

f256done:
	VADDPS Y1, Y0, Y0
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y0, Y0
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y0, Y0
	VADDPS Y6, Y0, Y0
	VADDPS Y7, Y0, Y0
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y0, Y0
	VADDPS Y10, Y0, Y0
	VADDPS Y11, Y0, Y0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET
