package tokens

import (
	"math"

	"github.com/murmur/mur/internal/tokens/vocab"
)

// noRank marks a pair that is not a token (or a part that has no successor).
const noRank = int32(math.MaxInt32)

// scanLimit is the piece length up to which countPiece merges with a linear
// scan over parts kept on the stack; longer pieces (long runs of spaces,
// base64, minified code) use the heap so a piece costs O(n log n), not
// O(n²).
const scanLimit = 64

// countPiece returns how many tokens byte-pair encoding makes of piece:
// the piece itself when it is a token, else the parts left after
// repeatedly merging the adjacent pair whose concatenation has the lowest
// rank, leftmost first on a tie (tiktoken's rule).
func countPiece(t vocab.Table, piece string) int {
	if _, ok := t.Rank(piece); ok {
		return 1
	}
	if len(piece) <= scanLimit {
		return mergeScan(t, piece)
	}
	return mergeHeap(t, piece)
}

// pairRank is the rank of piece[a:b] as one token, or noRank.
func pairRank(t vocab.Table, piece string, a, b int) int32 {
	if r, ok := t.Rank(piece[a:b]); ok {
		return int32(r)
	}
	return noRank
}

// mergeScan merges a piece of at most scanLimit bytes. pos holds the parts'
// start offsets (and the piece's end); rank[i] is the rank of parts i and
// i+1 merged.
func mergeScan(t vocab.Table, piece string) int {
	var posBuf [scanLimit + 1]int32
	var rankBuf [scanLimit + 1]int32
	n := len(piece)
	pos, rank := posBuf[:n+1], rankBuf[:n+1]
	for i := range pos {
		pos[i] = int32(i)
	}
	for i := range n - 1 {
		rank[i] = pairRank(t, piece, i, i+2)
	}
	rank[n-1], rank[n] = noRank, noRank
	for len(pos) > 2 {
		best, bestRank := -1, noRank
		for i, r := range rank[:len(pos)-2] {
			if r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		// Parts best and best+1 become one: drop boundary best+1, then
		// re-rank the pairs that now end or start at the merged part.
		pos = append(pos[:best+1], pos[best+2:]...)
		rank = append(rank[:best+1], rank[best+2:]...)
		rank[best] = noRank
		if best+2 < len(pos) {
			rank[best] = pairRank(t, piece, int(pos[best]), int(pos[best+2]))
		}
		if best > 0 {
			rank[best-1] = pairRank(t, piece, int(pos[best-1]), int(pos[best+1]))
		}
	}
	return len(pos) - 1
}

// mergeHeap merges a long piece the same way as mergeScan, keeping the
// parts as a linked list over byte offsets and the candidate pairs in a
// min-heap ordered by (rank, offset). A popped candidate whose part has
// since been merged or re-ranked is stale and skipped.
func mergeHeap(t vocab.Table, piece string) int {
	n := int32(len(piece))
	next := make([]int32, n+1) // next[i]: start of the part after the one at i; n+1 past the end
	prev := make([]int32, n+1)
	rank := make([]int32, n+1) // rank of the part at i merged with its successor
	h := make(candHeap, 0, n)
	for i := range n + 1 {
		next[i], prev[i], rank[i] = i+1, i-1, noRank
	}
	// rankAt ranks the part at i merged with its successor.
	rankAt := func(i int32) int32 {
		j := next[i]
		if j >= n {
			return noRank
		}
		return pairRank(t, piece, int(i), int(next[j]))
	}
	for i := range n - 1 {
		if rank[i] = rankAt(i); rank[i] != noRank {
			h = append(h, cand{rank[i], i})
		}
	}
	h.init()
	parts := int(n)
	for len(h) > 0 {
		c := h.pop()
		if rank[c.at] != c.rank {
			continue
		}
		j := next[c.at]
		k := next[j]
		next[c.at] = k
		if k <= n {
			prev[k] = c.at
		}
		rank[j] = noRank // j is merged away: its queued candidates are stale
		parts--
		for _, b := range [2]int32{c.at, prev[c.at]} {
			if b < 0 {
				continue
			}
			if rank[b] = rankAt(b); rank[b] != noRank {
				h.push(cand{rank[b], b})
			}
		}
	}
	return parts
}

type cand struct {
	rank int32
	at   int32
}

// candHeap is a binary min-heap of candidate merges by rank, then offset,
// so that among equal ranks the leftmost pair merges first. It is typed
// (not container/heap) so that pushes do not allocate.
type candHeap []cand

func (h candHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].at < h[b].at
}

func (h candHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) push(c cand) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *candHeap) pop() cand {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h candHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (h candHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if r := c + 1; r < len(h) && h.less(r, c) {
			c = r
		}
		if !h.less(c, i) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
