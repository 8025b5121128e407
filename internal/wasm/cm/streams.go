package cm

import "github.com/murmur/mur/internal/wasm/rewrite"

// The values a host function serving a rewritten wasi:io/streams instance
// sees: the rewrite (internal/wasm/rewrite) makes its bytes cross as
// strings, and these turn them back, so host code is the same either way.

// bytesFromLatin1 turns the latin1 strings a rewritten streams function
// receives back into the guest's bytes.
func bytesFromLatin1(v Val) Val {
	switch v.kind {
	case KindString:
		return Bytes(rewrite.Latin1Decode(v.s))
	case KindList, KindTuple, KindRecord, KindVariant, KindOption, KindResult:
		if v.bytes != nil || len(v.elems) == 0 {
			return v
		}
		elems := make([]Val, len(v.elems))
		for i, e := range v.elems {
			elems[i] = bytesFromLatin1(e)
		}
		v.elems = elems
	}
	return v
}

// bytesToStrings turns the list<u8> results of a rewritten streams
// function into the strings its rewritten type expects, made by encode
// (rewrite.Latin1Encode for the in-place rewrite, rewrite.ShimString for the read shim).
func bytesToStrings(v Val, encode func([]byte) string) Val {
	if v.kind == KindList {
		if b, ok := v.Bytes(); ok {
			return String(encode(b))
		}
		return v
	}
	switch v.kind {
	case KindTuple, KindRecord, KindVariant, KindOption, KindResult:
		if len(v.elems) == 0 {
			return v
		}
		elems := make([]Val, len(v.elems))
		for i, e := range v.elems {
			elems[i] = bytesToStrings(e, encode)
		}
		v.elems = elems
	}
	return v
}
