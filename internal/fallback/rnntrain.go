package fallback

// LSTMCellTrain is LSTMCell that also writes, for j < H = len(c), the
// activated gates and tanh(c') into act (5H): act[j] = i, act[H+j] = f,
// act[2H+j] = g, act[3H+j] = o, act[4H+j] = tanh(c'). hOut and cOut get
// LSTMCell's bits (cOut may be c).
func LSTMCellTrain(hOut, cOut, act, gates, b, c []float32) {
	H := len(c)
	gates, b, act = gates[:4*H], b[:4*H], act[:5*H]
	hOut, cOut = hOut[:H], cOut[:H]
	for j, cj := range c {
		i := sigmoid32(gates[j] + b[j])
		f := sigmoid32(gates[H+j] + b[H+j])
		g := tanh32(gates[2*H+j] + b[2*H+j])
		o := sigmoid32(gates[3*H+j] + b[3*H+j])
		cn := float32(f*cj) + float32(i*g)
		t := tanh32(cn)
		act[j], act[H+j], act[2*H+j], act[3*H+j], act[4*H+j] = i, f, g, o, t
		cOut[j] = cn
		hOut[j] = o * t
	}
}

// LSTMCellBackward sets, for j < H = len(cPrev), with act = [i; f; g; o;
// tanh(c)] (5H) as LSTMCellTrain wrote it, the gradient dh of h' and dc of
// c' (the part that does not come through h'),
//
//	e  = (dh·o)·(1 − tc·tc)        tc = tanh(c)
//	dc̃ = dc + e                    the whole gradient of c'
//	dcPrev = dc̃·f
//	dGates = [(dc̃·g)·(i·(1−i)); (dc̃·cPrev)·(f·(1−f)); (dc̃·i)·(1 − g·g); (dh·tc)·(o·(1−o))]
//
// each operation rounded once to float32, in the order the parentheses give
// (the explicit conversions forbid Go to fuse a product into a sum).
// dcPrev may be dc.
func LSTMCellBackward(dGates, dcPrev, act, cPrev, dh, dc []float32) {
	H := len(cPrev)
	dGates, act = dGates[:4*H], act[:5*H]
	dcPrev, dh, dc = dcPrev[:H], dh[:H], dc[:H]
	for j, cp := range cPrev {
		i, f, g, o, tc := act[j], act[H+j], act[2*H+j], act[3*H+j], act[4*H+j]
		dhj := dh[j]
		e := float32(dhj * o)
		s := float32(1) - float32(tc*tc)
		e = float32(e * s)
		dct := dc[j] + e
		dcPrev[j] = float32(dct * f)
		dGates[j] = float32(float32(dct*g) * float32(i*(1-i)))
		dGates[H+j] = float32(float32(dct*cp) * float32(f*(1-f)))
		dGates[2*H+j] = float32(float32(dct*i) * (1 - float32(g*g)))
		dGates[3*H+j] = float32(float32(dhj*tc) * float32(o*(1-o)))
	}
}

// GRUCellTrain is GRUCell that also writes, for j < H = len(h), r, z, n and
// q = nh + bh_n into act (4H): act[j] = r, act[H+j] = z, act[2H+j] = n,
// act[3H+j] = q. hOut gets GRUCell's bits (hOut may be h).
func GRUCellTrain(hOut, act, gates, nh, bx, bh, h []float32) {
	H := len(h)
	gates, bx, bh, act = gates[:3*H], bx[:3*H], bh[:3*H], act[:4*H]
	hOut, nh = hOut[:H], nh[:H]
	for j, hj := range h {
		r := sigmoid32((gates[j] + bx[j]) + bh[j])
		z := sigmoid32((gates[H+j] + bx[H+j]) + bh[H+j])
		q := nh[j] + bh[2*H+j]
		n := tanh32((gates[2*H+j] + bx[2*H+j]) + float32(r*q))
		act[j], act[H+j], act[2*H+j], act[3*H+j] = r, z, n, q
		hOut[j] = n + float32(z*(hj-n))
	}
}

// GRUCellBackward sets, for j < H = len(h), with act = [r; z; n; q] (4H) as
// GRUCellTrain wrote it, h the state it was given and dh the gradient of h',
//
//	dn  = dh·(1 − z)                dz = dh·(h − n)
//	dan = dn·(1 − n·n)              dq = dan·r
//	dar = (dan·q)·(r·(1 − r))       daz = dz·(z·(1 − z))
//	dGx = [dar; daz; dan]           dGh = [dar; daz; dq]
//	dhPrev = dh·z
//
// each operation rounded once to float32 (1 − z computed once). dhPrev may
// be dh.
func GRUCellBackward(dGx, dGh, dhPrev, act, h, dh []float32) {
	H := len(h)
	dGx, dGh, act = dGx[:3*H], dGh[:3*H], act[:4*H]
	dhPrev, dh = dhPrev[:H], dh[:H]
	for j, hj := range h {
		r, z, n, q := act[j], act[H+j], act[2*H+j], act[3*H+j]
		dhj := dh[j]
		omz := 1 - z
		dn := float32(dhj * omz)
		dz := float32(dhj * (hj - n))
		dhPrev[j] = float32(dhj * z)
		daz := float32(dz * float32(z*omz))
		dan := float32(dn * (1 - float32(n*n)))
		dq := float32(dan * r)
		dar := float32(float32(dan*q) * float32(r*(1-r)))
		dGx[j], dGx[H+j], dGx[2*H+j] = dar, daz, dan
		dGh[j], dGh[H+j], dGh[2*H+j] = dar, daz, dq
	}
}
