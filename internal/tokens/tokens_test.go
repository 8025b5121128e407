package tokens

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello", 1},
		{"hello world", 2},
	}
	for _, tt := range tests {
		if got := Count(tt.in); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	if CountBytes([]byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb}) != 2 {
		t.Error("invalid UTF-8 is counted by size")
	}
}

func BenchmarkCount(b *testing.B) {
	s := "The quick brown fox jumps over the lazy dog. "
	for i := 0; i < 6; i++ {
		s += s
	}
	Count(s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Count(s)
	}
}
