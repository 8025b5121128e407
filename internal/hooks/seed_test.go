package hooks

import "testing"

// TestSeedFit: a seed within the budget is accepted whole; within the
// overflow margin its oldest messages are dropped until the rest fits;
// past the margin, or when dropping would leave nothing, it is over.
func TestSeedFit(t *testing.T) {
	l := NewSeedLimits(1000, 0.10, 0.5) // budget 100, slack 150
	if l.Budget != 100 || l.Slack() != 150 {
		t.Fatalf("limits %+v, slack %d", l, l.Slack())
	}
	cases := []struct {
		sizes  []int64
		drop   int
		status string
	}{
		{[]int64{40, 60}, 0, SeedAccepted},
		{[]int64{30, 40, 60}, 1, SeedTruncated},
		{[]int64{10, 20, 30, 80}, 3, SeedTruncated},
		{[]int64{100, 51}, 0, SeedOverBudget},
		{[]int64{120}, 0, SeedOverBudget},
		{nil, 0, SeedAccepted},
	}
	for _, c := range cases {
		drop, status := l.Fit(c.sizes)
		if drop != c.drop || status != c.status {
			t.Errorf("Fit(%v) = %d, %s; want %d, %s", c.sizes, drop, status, c.drop, c.status)
		}
	}
	if none := NewSeedLimits(0, 0.10, 0.10); none.Budget != 0 {
		t.Errorf("no window gave a budget: %+v", none)
	}
	// Rounded down: 0.10 of 111616 is 11161.6.
	if l := NewSeedLimits(111616, 0.10, 0.10); l.Budget != 11161 {
		t.Errorf("budget %d", l.Budget)
	}
}
