package diag

// Suggest returns the candidate closest to word, for a "did you mean"
// hint on a misspelled manifest key or artifact name, or "" when none is
// close enough: one edit for a word under five characters, two for
// longer ones, a quarter of its length for long ones. Ties go to the
// earlier candidate.
func Suggest(word string, candidates []string) string {
	n := len([]rune(word))
	limit := 1
	if n >= 5 {
		limit = max(2, n/4)
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == word {
			continue
		}
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours, each 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
