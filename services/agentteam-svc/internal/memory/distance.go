package memory

// MaxDistanceCells bounds the work of EditDistance: the product of the lengths left after the
// common prefix and suffix are removed. Beyond it the distance is estimated (see EditDistance).
const MaxDistanceCells = 25_000_000

// EditDistance is the Levenshtein distance between a and b counted in runes (insertions,
// deletions and substitutions of one character each). The common prefix and suffix are
// removed first, so a local edit of a long text is cheap; when what is left would still take
// more than MaxDistanceCells steps, the answer is the upper bound max(len) of what is left,
// which keeps a request from burning seconds of CPU.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	for len(ra) > 0 && len(rb) > 0 && ra[0] == rb[0] {
		ra, rb = ra[1:], rb[1:]
	}
	for len(ra) > 0 && len(rb) > 0 && ra[len(ra)-1] == rb[len(rb)-1] {
		ra, rb = ra[:len(ra)-1], rb[:len(rb)-1]
	}
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	if len(rb) == 0 {
		return len(ra)
	}
	if len(ra)*len(rb) > MaxDistanceCells {
		return len(ra)
	}
	row := make([]int, len(rb)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			next := min(row[j]+1, row[j-1]+1, diag+cost)
			diag, row[j] = row[j], next
		}
	}
	return row[len(rb)]
}
