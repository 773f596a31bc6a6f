//go:build !heedcgo

package bench

// sleefDecoderPeers is empty without the heedcgo tag (see decoder_sleef.go).
var sleefDecoderPeers = map[string]map[string]func(dst, x []float32){}
