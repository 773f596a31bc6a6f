#include "textflag.h"

// Read-only streaming loops that bound the kernels. Written by hand (they are
// not kernels; asmgen does not generate them). The FMA loops are in
// fma_amd64.s.

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

// func Stream4AVX512(x []float32) float32
// Sums x (len a multiple of 128) reading its four quarters as four
// concurrent streams (as MatVec's far kernels and skinnyNT's chunks read
// three or four), two accumulators each.
TEXT ·Stream4AVX512(SB), NOSPLIT, $0-28
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
	LEAQ   (SI)(CX*1), DI
	LEAQ   (DI)(CX*1), R8
	LEAQ   (R8)(CX*1), R9
	SHRQ   $7, CX
	JZ     q512done

q512loop:
	VADDPS 0(SI), Z0, Z0
	VADDPS 0(DI), Z1, Z1
	VADDPS 0(R8), Z2, Z2
	VADDPS 0(R9), Z3, Z3
	VADDPS 64(SI), Z4, Z4
	VADDPS 64(DI), Z5, Z5
	VADDPS 64(R8), Z6, Z6
	VADDPS 64(R9), Z7, Z7
	ADDQ   $128, SI
	ADDQ   $128, DI
	ADDQ   $128, R8
	ADDQ   $128, R9
	DECQ   CX
	JNZ    q512loop

q512done:
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

// func Stream4AVX2(x []float32) float32
// Sums x (len a multiple of 64) reading its four quarters as four
// concurrent streams, two accumulators each.
TEXT ·Stream4AVX2(SB), NOSPLIT, $0-28
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
	LEAQ   (SI)(CX*1), DI
	LEAQ   (DI)(CX*1), R8
	LEAQ   (R8)(CX*1), R9
	SHRQ   $6, CX
	JZ     q256done

q256loop:
	VADDPS 0(SI), Y0, Y0
	VADDPS 0(DI), Y1, Y1
	VADDPS 0(R8), Y2, Y2
	VADDPS 0(R9), Y3, Y3
	VADDPS 32(SI), Y4, Y4
	VADDPS 32(DI), Y5, Y5
	VADDPS 32(R8), Y6, Y6
	VADDPS 32(R9), Y7, Y7
	ADDQ   $64, SI
	ADDQ   $64, DI
	ADDQ   $64, R8
	ADDQ   $64, R9
	DECQ   CX
	JNZ    q256loop

q256done:
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
