package testkit

import (
	"bufio"
	"bytes"
	"encoding/json"
)

// LogRecords decodes the records a slog JSON handler wrote into logs, one object a line; a
// line that is not JSON is passed over.
func LogRecords(logs []byte) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
